a = b = c = None
print(a, b, c)
x = y = 2
print(x, y)
import torch
t = u = torch.ones(2)
u.add_(1)
print(t, t is u)
p, q = r = (1, 2)
print(p, q, r)
l = m = []
l.append(3)
print(m)
a = b = c = d = 5
print(a, b, c, d)
