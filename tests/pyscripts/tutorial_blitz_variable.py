# The first edition of the 60-minute blitz tutorial "Autograd: automatic differentiation",
# written for autograd.Variable (pytorch/tutorials: beginner_source/blitz/autograd_tutorial.py
# as of commit 56d1da96; BSD-3-Clause, Copyright (c) 2017-, PyTorch contributors), verbatim in
# order. Variable(...) has been a plain tensor since PyTorch 0.4, and torch.FloatTensor([...])
# is a float32 tensor of that data.
# Added: torch.manual_seed(0) after the imports, so the random numbers are reproducible.
# Dropped: nothing.
import torch
from torch.autograd import Variable
torch.manual_seed(0)

x = Variable(torch.ones(2, 2), requires_grad=True)
print(x)

y = x + 2
print(y)

print(y.grad_fn)

z = y * y * 3
out = z.mean()

print(z, out)

out.backward()

print(x.grad)


x = torch.randn(3)
x = Variable(x, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
y.backward(gradients)

print(x.grad)
