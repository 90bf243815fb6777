import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
u = torch.tensor([5.], requires_grad=True)
h = a * b
h.register_hook(lambda g: print("h hook", g))
k = b.exp()
k.register_hook(lambda g: print("k hook", g))
c = (h + k).sum()
c.backward(inputs=[a, u], retain_graph=True)
print(a.grad, b.grad, u.grad)
c.backward(inputs=(h,), retain_graph=True)
print(h.grad, a.grad)
try:
    c.backward(inputs=[])
except Exception as e:
    print(type(e).__name__, e)
try:
    c.backward(inputs=[torch.tensor([1.])])
except Exception as e:
    print(type(e).__name__, e)
try:
    c.backward(inputs=[1.0])
except Exception as e:
    print(type(e).__name__, e)
a.grad = None; b.grad = None
c2 = (a * b).sum() + (a * a).sum()
torch.autograd.backward([c2], inputs=[b])
print(a.grad, b.grad)
q = a * 2
r = q * 3
s = (r * r).sum()
s.backward(inputs=[q, a])
print(q.grad, a.grad)
x = torch.tensor(2., requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
y = x ** 3
g, = torch.autograd.grad(y, x)
print(g, x.grad)
z = x * x
torch.autograd.backward([z], inputs=[x])
print(x.grad)
