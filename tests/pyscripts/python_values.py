# In a .py file numbers and lists are Python's (x = 2.0 is a float, xs = [...] a list), as
# `python file.py` has them; torch.tensor takes the lists Python code builds.
import math

import torch

x = 2.0
y = x * 3
print(y, x ** 2, math.sqrt(x), x / 4, -x, abs(-x), round(x), int(x), type(x))
lr = 1e-2
print(lr, lr * 2)
l = [1, 2]
l[0] = 5
l.append(3)
print(l, len(l), type(l))
xs = [0.1 * i for i in range(3)]
print(xs, sum(xs), max(xs))
print(torch.tensor(xs))
print(torch.tensor([xs, xs], requires_grad=True))
print(torch.tensor([[1, 2], [3, 4]]).dtype, torch.tensor((1.5, 2)).dtype)
print(torch.tensor([torch.tensor(1.5), 2.0]))
n = 5
n += 1.5
print(n)
s = [1.0, 2.0]
s += [3.0]
print(s)
N, D = 4, 3
w = torch.ones(N, D, requires_grad=True)
loss = (w * w).sum()
loss.backward()
with torch.no_grad():
    w -= lr * w.grad
print(w[0], N * D)
