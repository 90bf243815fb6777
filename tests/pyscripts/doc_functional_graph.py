# torch/autograd/functional.py's examples with create_graph=True, the grad_fn each result
# ends in, and gradients through the differentiable ones
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, vhp, hvp
torch.manual_seed(0)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs, create_graph=True))
print(vjp(exp_reducer, inputs, torch.ones(2), create_graph=True))
print(jvp(exp_reducer, inputs, torch.ones(2, 2), create_graph=True))


def pow_reducer(x):
    return x.pow(3).sum()


print(hessian(pow_reducer, inputs, create_graph=True))
print(vhp(pow_reducer, inputs, torch.ones(2, 2), create_graph=True))
print(hvp(pow_reducer, inputs, torch.ones(2, 2), create_graph=True))

x = torch.rand(2, 2)
v = torch.ones(2, 2)
fs = {'sumdim': lambda x: x.exp().sum(dim=1), 'sumkeep': lambda x: x.exp().sum(1, keepdim=True),
      'sum': lambda x: x.exp().sum(), 'mean': lambda x: x.exp().mean(), 'exp': lambda x: x.exp(),
      'sin': lambda x: x.sin(), 'sq': lambda x: x ** 2, 'mulc': lambda x: x.exp() * 3,
      'addc': lambda x: x.exp() + 1, 'tanh': lambda x: x.tanh(), 'xx': lambda x: x * x,
      'sig': lambda x: x.sigmoid(), 'lin': lambda x: 2 * x, 'view': lambda x: x.exp().view(4),
      'mm': lambda x: x.exp() @ torch.ones(2, 2)}
for k, f in fs.items():
    o, j = jvp(f, x, v, create_graph=True)
    o2, h = vhp(lambda x: f(x).sum(), x, v, create_graph=True)
    H = hessian(lambda x: f(x).sum(), x, create_graph=True)
    J = jacobian(f, x, create_graph=True)
    print(k, o.grad_fn.name() if o.grad_fn else None, j.grad_fn.name() if j.grad_fn else None,
          h.grad_fn.name() if h.grad_fn else None, H.grad_fn.name() if H.grad_fn else None,
          J.grad_fn.name() if J.grad_fn else None)

# gradients through the results: the second derivatives
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
J = jacobian(lambda t: t.sin().sum(dim=0), w, create_graph=True)
J.sum().backward()
print(J, w.grad)
w.grad = None
out, jv = jvp(lambda t: (t.exp() * t).sum(dim=1), w, torch.tensor([[1.0, 2.0], [0.5, -1.0]]),
              create_graph=True)
(jv * torch.tensor([3.0, -2.0])).sum().backward()
print(out, jv, w.grad)
w.grad = None
out, g = vjp(lambda t: t.tanh() * 2, w, torch.ones(2, 2), create_graph=True)
g.sum().backward()
print(out, g, w.grad)
a, b = torch.rand(2), torch.rand(2)
print(jacobian(lambda p, q: 2 * p.exp() + 3 * q, (a, b), create_graph=True))
print(hessian(lambda p, q: (2 * p.pow(2) + 3 * q.pow(2)).sum(), (a, b), create_graph=True))
