# Tensor.register_hook: the hook sees the gradient arriving at the tensor (a leaf's: the sum
# over all its uses), runs in registration order, may return a replacement; remove() undoes it
import torch

x = torch.tensor([1., 2.], requires_grad=True)
try:
    torch.tensor(1.).register_hook(lambda g: g)
except RuntimeError as e:
    print(e)
h = x.register_hook(lambda g: g * 2)
y = x * x
z = y.sum() + x.sum()
y.register_hook(lambda g: print("y", g))


def show(g):
    print("x", g)


x.register_hook(show)
z.backward()
print(x.grad)
h.remove()
h.remove()
x.grad = None
x.register_hook(lambda g: torch.ones(3))
try:
    (x * x).sum().backward()
except RuntimeError as e:
    print(e)

a = torch.tensor([3.0], requires_grad=True)
b = a * 2
b.retain_grad()
b.register_hook(lambda g: g * 10)
c = b * b
c.register_hook(lambda g: g + 1)
c.sum().backward()
print(a.grad, b.grad)

w = torch.tensor(2.0, requires_grad=True)
w.register_hook(lambda g: print("leaf root", g))
w.backward()
print(w.grad)

u = torch.tensor([1., 2.], requires_grad=True)
u.register_hook(lambda g: print("hook u", g))
v = u * 3
v.register_hook(lambda g: g * 2)
print(torch.autograd.grad((v * v).sum(), u))
hooked = []
p = torch.tensor([0.5, -1.0], requires_grad=True)
q = p.exp()
q.register_hook(lambda g: hooked.append(g.tolist()))
r = q.sum() * 3
r.backward()
print(hooked, p.grad)
