# with-blocks over the profiler and the saved-tensor hooks, grad_fn._raw_saved_*, and what
# other editions of the tutorials call (torch.accelerator, Variable, FloatTensor,
# nn.DataParallel): ddx run prints what python with torch prints.
import torch
from torch import nn
from torch.autograd import Variable

torch.manual_seed(0)
print(torch.accelerator.is_available(), torch.accelerator.current_accelerator())
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(device)

x = torch.randn(2, 3, requires_grad=True)
y = torch.rand(2, 3, requires_grad=True)
z = torch.ones(2, 3, requires_grad=True)
with torch.autograd.profiler.profile(use_cuda=False) as prf:
    for _ in range(50):
        z = (z / x) * y
print(z)
with torch.profiler.profile() as p2:
    w = x.exp().sum()
print(w)


def pack_hook(t):
    print("Packing", t)
    return t


def unpack_hook(t):
    print("Unpacking", t)
    return t


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    q = torch.randn(3, requires_grad=True)
    r = q * q
print(r)

x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)


class Model(nn.Module):
    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            output = x
        return output


model = Model()
net = nn.DataParallel(model)
print(net)
print(net(torch.ones(2)))
seq = nn.DataParallel(nn.Sequential(nn.Linear(2, 1), nn.ReLU()))
print(seq)
print(seq(torch.ones(1, 2)))

v = Variable(torch.ones(2, 2), requires_grad=True)
print(v, Variable(torch.zeros(2)))
g = torch.FloatTensor([0.1, 1.0, 0.0001])
print(g, torch.DoubleTensor([1, 2]), torch.LongTensor([3, 4]))
(v * 3).sum().backward()
print(v.grad)
t = torch.tensor(2.)
try:
    t[0]
except IndexError as e:
    print(e)
