# Dual tensors in a module, as the forward-AD tutorial puts them there: delattr the parameter,
# setattr a dual tensor (then no parameter); setattr/delattr/del on modules and objects.
import torch
import torch.nn as nn
import torch.autograd.forward_ad as fwAD
torch.manual_seed(0)

model = nn.Linear(3, 2)
x = torch.randn(4, 3)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(x)
    print(fwAD.unpack_dual(out).tangent.detach())
    print([n for n, _ in model.named_parameters()])

m = nn.Linear(2, 2)
m.weight = nn.Parameter(torch.ones(2, 2))
print(m.weight, m(torch.ones(1, 2)))
try:
    m.weight = torch.zeros(2, 2)
except TypeError as e:
    print(e)
del m.bias
print(hasattr(m, "bias"))
try:
    del m.bias
except AttributeError as e:
    print(e)

class Box:
    pass

b = Box()
setattr(b, "a", 1)
print(b.a, getattr(b, "a"))
del b.a
print(hasattr(b, "a"))
try:
    delattr(b, "a")
except AttributeError as e:
    print(e)
