# torch.autograd.functional made as PyTorch makes it, to the signs of zeros: hessian's rows by
# reverse over reverse (outer_jacobian_strategy="forward-mode": columns), jacobian's
# strategy="forward-mode" column by column, and the errors of a strategy PyTorch refuses.
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp
torch.manual_seed(0)
def f(x):
    return x ** 2 + x.sin()
x = torch.randn(3)
print(jacobian(f, x))
def g(x):
    return (x ** 3).sum()
print(hessian(g, x))
print(vjp(f, x, torch.ones(3)))
print(jvp(f, x, torch.ones(3)))
print(hvp(g, x, torch.ones(3)))
print(vhp(g, x, torch.ones(3)))
def h(a, b):
    return a * b + b
a = torch.randn(2); b = torch.randn(2)
print(jacobian(h, (a, b)))
print(jacobian(f, x, create_graph=True))
print(jacobian(f, x, vectorize=True))
print(jacobian(f, x, strategy="forward-mode", vectorize=True))
def k(x):
    return x.sum()
print(jacobian(k, x))
print(hessian(lambda a, b: (a * b.sin()).sum(), (x, x.cos())))
for kw in ({"strategy": "forward-mode"}, {"strategy": "bad"}):
    try:
        jacobian(f, x, **kw)
    except (NotImplementedError, AssertionError) as e:
        print(type(e).__name__, e)
