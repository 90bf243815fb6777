# Augmented assignment to an item (v[i] += 1, M[0, 1] -= 2, M[mask] *= 3): the item is changed and
# stored back, as Python's v.__setitem__(i, v[i].__iadd__(1)); PyTorch's rules for leaves and grad mode.
import torch
x = torch.zeros(3, requires_grad=True)
try:
    x[0] += 1
except RuntimeError as e:
    print(e)
with torch.no_grad():
    x[1] += 2
print(x)
y = x * 2
y[0] += 1
print(y, y.grad_fn.name())
y.sum().backward()
print(x.grad)
M = torch.zeros(2, 3)
M[0] += 1
M[1, 2] += 5
M[:, 0] *= 3
M[M > 2] -= 1
print(M)
l = [1, 2]
l[0] += 5
d = {"a": 1}
d["a"] += 2
t = [torch.zeros(2)]
t[0] += 1
print(l, d, t)
i = torch.tensor([3, 4])
i[0] += 1
print(i)
w = torch.ones(3, requires_grad=True)
z = w.clone()
z[1] *= 4
z.sum().backward()
print(w.grad, z.grad_fn.name())
