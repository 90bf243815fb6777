import torch
torch.manual_seed(0)
a = torch.rand(2, 3, requires_grad=True)
b = torch.rand(2, 3, requires_grad=True)
c = a * b
d = a * b

def fn(grads):
    print([g is not None for g in grads])

h = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
c.sum().backward(retain_graph=True)
(c + d).sum().backward(retain_graph=True)
def first(g):
    print("first", g.shape)
h2 = torch.autograd.graph.register_multi_grad_hook((a, b), first, mode="any")
c.sum().backward(retain_graph=True)
h.remove(); h2.remove()
c.sum().backward(retain_graph=True)
print(a.grad)
def show(grads):
    print([None if g is None else g.sum().item() for g in grads])
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0], requires_grad=True)
torch.autograd.graph.register_multi_grad_hook([x, y], show)
(x * 3).sum().backward()
(x * y).sum().backward()
try:
    torch.autograd.graph.register_multi_grad_hook([x], show, mode="some")
except ValueError as e:
    print(e)
