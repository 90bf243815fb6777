import torch
from torch.autograd.functional import jacobian, hessian
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3 + torch.sin(x)
dy = torch.autograd.grad(y, x, create_graph=True)[0]
print(dy)
d2 = torch.autograd.grad(dy, x)[0]
print(d2)
def f(v):
    return (v ** 2).sum() * v[0]
v = torch.tensor([1.0, 2.0, 3.0])
print(jacobian(lambda a: a.exp() * 2, v))
print(hessian(f, v))
t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print(t.tolist(), t.numel(), t.dim(), t.equal(t.clone()), torch.equal(t, t + 1))
