# Tensor.unfold and torch.quantile / Tensor.quantile against Python with PyTorch: windows and their
# gradient added back, quantiles by ATen's sort and lerp (every interpolation), their gradient,
# and a nan, to the last digit.
import torch
torch.manual_seed(0)
torch.set_printoptions(precision=10)
x = torch.arange(12.).reshape(3, 4).requires_grad_()
u = x.unfold(1, 2, 1)
print(u.shape, u.grad_fn.name(), u[1])
(u * torch.randn(u.shape)).sum().backward()
print(x.grad)
v = torch.randn(10)
print(v.unfold(0, 3, 2), v.unfold(0, 4, 4).shape, torch.randn(2, 7, 3).unfold(1, 3, 2).shape)
a = torch.randn(7, 9, requires_grad=True)
print(torch.quantile(a, 0.3), a.quantile(0.5, dim=1), torch.quantile(a, torch.tensor([0.1, 0.9]), dim=0).shape)
print(torch.quantile(a, 0.25, dim=1, keepdim=True).shape, torch.quantile(a, torch.tensor([0.2, 0.7]), dim=1, keepdim=True).shape)
for m in ("lower", "higher", "nearest", "midpoint"):
    print(m, torch.quantile(a[0], 0.4, interpolation=m))
q = torch.quantile(a, torch.tensor([0.33, 0.8]), dim=1)
q.sum().backward()
print(q.grad_fn.name(), a.grad[2])
print(torch.quantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5))
