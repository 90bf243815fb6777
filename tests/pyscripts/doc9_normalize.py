# F.normalize (functional.py's input / norm(input, p, dim, keepdim=True).clamp_min(eps)
# .expand_as(input)) against Python with PyTorch: values and gradients to the last digit.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
torch.set_printoptions(precision=10)
a = torch.randn(6, 5, requires_grad=True)
y = F.normalize(a)
print(y.grad_fn.name(), y[2])
print(F.normalize(a, dim=0)[:, 1], F.normalize(a, p=1, dim=1)[0], F.normalize(torch.zeros(2, 3))[0])
y.pow(3).sum().backward()
print(a.grad[3])
v = torch.randn(4, 3, 7)
print(F.normalize(v, dim=-1)[1, 2], F.normalize(v, p=float("inf"), dim=2)[0, 0])
