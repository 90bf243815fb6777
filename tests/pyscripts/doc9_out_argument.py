# torch.X(..., out=t) (PyTorch's rules: no autograd through out=, no float into an integer out, a resized
# empty out) and numpy's add/subtract/multiply/divide with out= on memory a tensor shares.
import torch
import numpy as np
a = torch.tensor([1., 2.])
o = torch.empty(2)
r = torch.add(a, 1, out=o)
print(o, r is o)
i = torch.zeros(2, dtype=torch.long)
try:
    torch.mul(a, 2, out=i)
except RuntimeError as e:
    print(e)
w = torch.ones(2, requires_grad=True)
try:
    torch.mul(w, 2, out=o)
except RuntimeError as e:
    print(e)
with torch.no_grad():
    torch.mul(w, 3, out=o)
print(o)
b = torch.zeros(2, dtype=torch.bool)
torch.gt(a, 1.5, out=b)
print(b)
m = torch.empty(0)
torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=m)
print(m)
n = np.ones(3)
t = torch.from_numpy(n)
np.multiply(n, 4, out=n)
print(t, np.add(n, n), np.subtract(n, 1), np.divide(n, 2))
print(torch.add(a, a, out=None))
