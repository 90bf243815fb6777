# t += v is t.add_(v) (and -=, *=, /=): aliases see the change, its version goes up, and a
# backward that saved the tensor before refuses as PyTorch does; an attribute, an item, an int
# tensor divided in place.
import torch
a = torch.randn(3, requires_grad=True)
b = a * 2
c = b * b
b += 1
print(b._version, b.grad_fn.name())
try:
    c.sum().backward()
except RuntimeError as e:
    print(e)
w = torch.ones(2, requires_grad=True)
with torch.no_grad():
    w -= 0.1 * torch.ones(2)
    w *= 2
print(w._version, w)
x = torch.ones(2)
x += 1
x.add_(1)
print(x._version)
y = torch.zeros(3, requires_grad=True)
z = y.sigmoid()
z *= 2
try:
    z.sum().backward()
except RuntimeError as e:
    print(e)
x = torch.ones(3)
y = x
x += 1
print(y, x is y)
a = torch.ones(2, requires_grad=True)
h = a * 1
g = h
h += a
print(g.grad_fn.name(), h.grad_fn.name(), g is h)
h.sum().backward()
print(a.grad)
class M:
    def __init__(self):
        self.s = torch.zeros(2)
m = M()
s = m.s
m.s += 2
print(s)
i = torch.tensor([1, 2])
try:
    i /= 2
except RuntimeError as e:
    print(e)
i //= 2
print(i)
try:
    a += 1
except RuntimeError as e:
    print(e)
l = [torch.ones(1)]
l[0] += 1
print(l)
