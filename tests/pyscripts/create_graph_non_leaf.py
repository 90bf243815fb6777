# create_graph=True with respect to non-leaf tensors (x = w * 3, w.clone(), b = a.exp()): the
# gradient's own gradient goes on through the non-leaf's graph to the leaves.
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
x = w * 3
y = (x ** 2 * w).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
g.sum().backward()
print(w.grad)
w2 = torch.tensor([0.5, -1.0], requires_grad=True)
x2 = w2.clone()
y2 = torch.sin(x2).sum()
g2, = torch.autograd.grad(y2, x2, create_graph=True)
print(g2)
(g2 * torch.tensor([1.0, 2.0])).sum().backward()
print(w2.grad)
a = torch.tensor([1.5], requires_grad=True)
b = a.exp()
c = (b * b * a).sum()
gb, ga = torch.autograd.grad(c, (b, a), create_graph=True)
print(gb, ga)
(gb + ga).sum().backward()
print(a.grad)
