# The code cells of the PyTorch 60-minute blitz tutorial "Autograd: automatic differentiation"
# (pytorch/tutorials: beginner_source/blitz/autograd_tutorial.py, the Tensor edition before
# the "Gentle Introduction" rewrite; BSD-3-Clause, Copyright (c) 2017-, PyTorch contributors),
# verbatim in order, including the tab that indents the last line.
# Added: torch.manual_seed(0) after the import, so the random numbers are reproducible.
# Dropped: nothing.
import torch
torch.manual_seed(0)

x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)

print(y.grad_fn)

z = y * y * 3
out = z.mean()

print(z, out)

a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

out.backward()

print(x.grad)


x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
	print((x ** 2).requires_grad)
