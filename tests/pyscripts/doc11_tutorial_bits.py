# From the introyt/basics/recipes tutorials: id(), from __future__, torch.functional, numpy arrays
# written in place (a tensor from_numpy sees it), torch.device of any type (CUDA refused only
# when used, as a CPU build does), torch.cross's warning, in-place shape ops, optimizer
# state_dict()/load_state_dict().
from __future__ import print_function, division
import numpy as np
import torch
import torch.functional as Fn
# --- id
a = torch.rand(2, 2)
b = torch.rand(2, 2)
c = torch.zeros(2, 2)
old_id = id(c)
d = torch.matmul(a, b, out=c)
assert c is d
assert id(c) == old_id
torch.rand(2, 2, out=c)
assert id(c) == old_id
print(id(c) == id(d), type(id(c)))
x = torch.ones(2, requires_grad=True)
y = x * 2
k = id(y)
with torch.no_grad():
    y.add_(1)
print(id(y) == k)
# --- tf

x = torch.tensor([[1., -2.], [3., -4.]])
print(Fn.norm(x), torch.functional.einsum("ii", x), Fn.split(x, 1))
try:
    Fn.relu(x)
except AttributeError as e:
    print(e)
# --- nps
a = np.ones((2, 3))
t = torch.from_numpy(a)
a[1, 1] = 23
print(t)
a[0] = 5
a[:, 2] = np.array([7, 8])
print(a, t.sum())
b = t.numpy()
b[0, 0] = -1
print(t[0])
# --- cu
d = torch.device('cuda')
print(d, d.type, d.index, repr(d), torch.device('cuda:1'), repr(torch.device('cuda', 0)), torch.device('mps'), torch.device('meta'))
print(torch.cuda.is_available() & (torch.device('cuda').index is not None))
for f in (lambda: torch.zeros(2, device='cuda'), lambda: torch.ones(2).to('cuda'), lambda: torch.ones(2).cuda(), lambda: torch.ones(2).to(d), lambda: torch.nn.Linear(2, 2).to(d), lambda: torch.tensor([1.0], device=d), lambda: torch.device('foo')):
    try:
        print(f())
    except Exception as e:
        print(type(e).__name__, e)
print(torch.ones(2).to('cpu'), torch.device('cpu') == torch.device('cpu'), torch.device('cuda:0') == torch.device('cuda', 0))
# --- us
t = torch.zeros(3, 4)
t.unsqueeze_(0)
print(t.shape)
print(t.squeeze_().shape, t.t_().shape, t.transpose_(0, 1).shape)
a = torch.arange(6.).reshape(2, 3)
b = a
a.t_()
print(b, b is a)
x = torch.ones(2, requires_grad=True)
try:
    x.unsqueeze_(0)
except RuntimeError as e:
    print("RuntimeError")
with torch.no_grad():
    x.unsqueeze_(0)
print(x.shape)
# --- osd
torch.manual_seed(0)
w = torch.nn.Parameter(torch.ones(2))
for opt in (torch.optim.SGD([w], lr=0.1, momentum=0.9), torch.optim.Adam([w], lr=0.01), torch.optim.SGD([w], lr=0.1)):
    print(opt.param_groups[0].keys())
    print(opt.state_dict())
    (w * w).sum().backward()
    opt.step()
    print(opt.state_dict())
    opt.zero_grad()
    print(opt)
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(torch.ones(1, 2)).sum().backward()
opt.step()
sd = opt.state_dict()
opt2 = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
opt2.load_state_dict(sd)
print(opt2.param_groups[0]["lr"], opt2.state_dict()["state"])
for var_name in opt.state_dict():
    print(var_name, "\t", opt.state_dict()[var_name])
