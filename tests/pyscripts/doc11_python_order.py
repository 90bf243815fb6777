# Python semantics the notes pages rely on: the function is looked up before its arguments are
# evaluated; TypeError messages name a method by its qualname (Net.forward); ParameterDict of
# a plain dict in key order, and the containers' reprs.
import torch
import torch.nn as nn
try:
    undefined_fn(undefined_arg)
except NameError as e:
    print(e)
try:
    undefined_fn(print("hi"))
except NameError as e:
    print(e)
def f(a, b=1):
    return a + b
print(f(f(1), b=f(2)))
import torch
print(torch.tensor([1.0]).add(2), abs(-3), max(1, 2), len([1]))
class M:
    def forward(self, x, act):
        return x
for call in (lambda: M().forward(1), lambda: M().forward(1, 2, 3), lambda: M().forward(1, 2, z=3)):
    try:
        call()
    except TypeError as e:
        print(e)
h = lambda x: x
try:
    h()
except TypeError as e:
    print(e)
def g(a):
    return a
try:
    g()
except TypeError as e:
    print(e)
def f(*a, **k):
    return a, k
print(f(1, x=2, *[3]))
print(f(*[1], **{"y": 2}))
from collections import OrderedDict
p = nn.ParameterDict({'foo': nn.Parameter(torch.ones(1)), 'bar': nn.Parameter(torch.zeros(2))})
print(list(p.keys()), p)
p.update({'z': nn.Parameter(torch.ones(1)), 'a': nn.Parameter(torch.ones(1))}); print(list(p.keys()))
q = nn.ParameterDict(OrderedDict([('z', nn.Parameter(torch.ones(1))), ('a', nn.Parameter(torch.ones(1)))])); print(list(q.keys()))
r = nn.ParameterDict(q); print(list(r.keys()))
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.params = nn.ParameterDict({'w2': nn.Parameter(torch.ones(1)), 'w1': nn.Parameter(torch.ones(1))})
print(list(M().state_dict().keys()))
print(nn.ParameterList([nn.Parameter(torch.ones(2,3))]))
print(nn.ParameterList([]), nn.ParameterDict())
print(nn.ParameterDict({'a': nn.Parameter(torch.ones(2,dtype=torch.float64))}))
print(nn.ParameterList([nn.Parameter(torch.ones(2,3,dtype=torch.float64)), nn.Parameter(torch.ones(1))]))
class N(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.ParameterDict({'w2': nn.Parameter(torch.ones(1)), 'w1': nn.Parameter(torch.ones(1))})
        self.l = nn.ParameterList([nn.Parameter(torch.ones(1))])
print(N())
print(nn.ParameterList([]), nn.ModuleList([]), nn.Sequential(*[]))
print(torch.tensor([]), torch.as_tensor([]), torch.Tensor([]), torch.zeros([]), torch.FloatTensor([]))
print(torch.cat([torch.ones(1)]), torch.stack([torch.ones(1)]))
x = torch.ones(2)
print(x.new_tensor([]), torch.tensor([[], []]).shape)
