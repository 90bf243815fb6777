# torch.func.hessian and jacfwd(jacrev(f)) with tuple argnums: a tuple of tuples of blocks
# d2f/dx_a dx_b (mixed blocks each other's transposes), and with one argnum.
import torch
from torch.func import hessian, jacfwd, jacrev
x = torch.tensor([1.0, 2.0])
y = torch.tensor([0.5, -1.0, 3.0])
def f(a, b):
    return (a.sin().sum() * b.exp()).sum() + (a ** 2).sum() * b.sum()
print(jacfwd(jacrev(f, argnums=(0, 1)), argnums=(0, 1))(x, y))
print(hessian(f, argnums=(0, 1))(x, y))
print(hessian(f, argnums=1)(x, y))
