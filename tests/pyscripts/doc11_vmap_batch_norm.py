# Batch norm under vmap (docs: torch.func "Patching Batch Norm"): training batch norm of a mapped
# input refuses to update unmapped running stats; without them (functional None, eval mode,
# replace_all_batch_norm_modules_) it runs.
import torch
from torch.func import vmap, replace_all_batch_norm_modules_
torch.manual_seed(0)
bn = torch.nn.BatchNorm1d(2)
x = torch.randn(3, 4, 2)
try:
    vmap(bn)(x)
except RuntimeError as e:
    print(e)
print(bn.running_mean)
try:
    vmap(lambda v: torch.nn.functional.batch_norm(v, bn.running_mean, bn.running_var, training=True))(x)
except RuntimeError as e:
    print(e)
print(vmap(lambda v: torch.nn.functional.batch_norm(v, None, None, training=True))(x))
bn.eval()
print(vmap(bn)(x).detach())
bn.train()
m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
print(replace_all_batch_norm_modules_(m) is m, m[1].running_mean, m[1].track_running_stats, m[1])
print(vmap(m)(x).detach())
print(list(m.state_dict().keys()))
try:
    from torch.func import no_such_transform
except ImportError as e:
    print("ImportError:", str(e).split(" (")[0])
