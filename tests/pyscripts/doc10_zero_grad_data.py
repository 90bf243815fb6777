# zero_grad(set_to_none=False) of an optimizer and a module zeroes the grads in place; x.data = y
# gives x y's values (grad, requires_grad and leafness stay), and x.data shares them.
import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(2, 1)
lin(torch.ones(1, 2)).sum().backward()
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
opt.zero_grad(set_to_none=False)
print(lin.bias.grad, lin.weight.grad)
lin(torch.ones(1, 2)).sum().backward()
lin.zero_grad(False)
print(lin.bias.grad)
lin.weight.data = torch.ones(1, 2)
print(lin.weight, lin(torch.ones(1, 2)))
b = torch.tensor([1.0, 2.0], requires_grad=True)
(b * b).sum().backward()
b.data = b.data - 0.1 * b.grad.data
print(b, b.requires_grad, b.is_leaf, b.grad)
c = b.data
c[0] = 5.0
print(b)
