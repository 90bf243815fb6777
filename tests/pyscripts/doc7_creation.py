# PyTorch's _torch_docs.py examples (round 7): logspace, range, tril/triu_indices,
# float_power, trapezoid and cumulative_trapezoid (and their gradients).
import torch
torch.manual_seed(0)
print(torch.logspace(start=-10, end=10, steps=5))
print(torch.logspace(start=0.1, end=1.0, steps=5))
print(torch.logspace(start=0.1, end=1.0, steps=1))
print(torch.logspace(start=2, end=2, steps=1, base=2))
print(torch.logspace(0, 3, 7, dtype=torch.float64))
print(torch.range(1, 4))
print(torch.range(1, 4, 0.5))
print(torch.tril_indices(3, 3))
print(torch.tril_indices(4, 3, -1))
print(torch.tril_indices(4, 3, 1))
print(torch.triu_indices(3, 3))
print(torch.triu_indices(4, 3, -1))
a = torch.randint(10, (4,))
print(torch.float_power(a, 2))
a = torch.arange(1, 5)
exp = torch.tensor([2, -3, 4, -5])
print(torch.float_power(a, exp))
y = torch.tensor([1, 5, 10])
print(torch.trapezoid(y))
print(torch.trapezoid(y, dx=2))
x = torch.tensor([1, 3, 6])
print(torch.trapezoid(y, x))
y = torch.arange(9).reshape(3, 3)
print(torch.trapezoid(y))
print(torch.trapezoid(y, dim=0))
y = torch.ones(3, 3)
print(torch.trapezoid(y, torch.tensor([[1, 2, 3], [1, 3, 5], [1, 4, 7]])))
y = torch.tensor([1, 5, 10])
print(torch.cumulative_trapezoid(y))
print(torch.cumulative_trapezoid(y, dx=2))
print(torch.cumulative_trapezoid(y, x))
y = torch.arange(9).reshape(3, 3)
print(torch.cumulative_trapezoid(y, dim=0))

w = torch.randn(3, 4, requires_grad=True)
for out in (torch.trapezoid(w), torch.trapezoid(w, dx=0.5, dim=0),
            torch.trapezoid(w, torch.tensor([0.0, 1.0, 3.0, 4.5])),
            torch.cumulative_trapezoid(w), torch.cumulative_trapezoid(w, torch.tensor([1.0, 2.0, 4.0, 8.0])),
            torch.float_power(w, 3)):
    w.grad = None
    out.sum().backward()
    print(out, w.grad)
