# What PyTorch's vmap refuses (docs: torch.func UX limitations), with its messages: data-dependent
# control flow, .item()/float()/.tolist(), dynamic-shape ops and masks, in-place writes of a
# mapped tensor into one that is not; what it allows (in place on a mapped clone).
import torch
from torch.func import vmap
x = torch.tensor([1., 2.])
tests = {
 "if": lambda v: v if v > 0 else v * 0,
 "item": lambda v: v * v.item(),
 "float": lambda v: v * float(v),
 "bool": lambda v: v * bool(v),
 "nonzero": lambda v: torch.nonzero(v),
 "copy_": lambda v: torch.zeros(1).copy_(v),
 "add_": lambda v: torch.zeros(1).add_(v),
 "mul_": lambda v: torch.ones(()).mul_(v),
 "while": lambda v: v if (v == 1).any() else v,
 "tolist": lambda v: torch.tensor(v.tolist()),
 "numpy": lambda v: torch.tensor(v.numpy()),
 "unique": lambda v: torch.unique(v),
 "masked": lambda v: v[v > 1],
 "ok_inplace": lambda v: v.clone().add_(1),
}
for k, f in tests.items():
    try:
        print(k, vmap(f)(x))
    except Exception as e:
        print(k, type(e).__name__, e)
y = torch.tensor([[1., -1.], [2., 0.5]])
print(vmap(lambda v: torch.where(v > 0, v, v * 0))(y))
print(vmap(lambda v: v.sum() * 2 if True else v)(y))
w = torch.ones(2)
print(vmap(lambda v: v * w.sum().item())(y))
print(vmap(lambda v: v.clamp(min=0).mul_(2))(y))
