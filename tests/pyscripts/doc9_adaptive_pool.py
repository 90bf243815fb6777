# F.adaptive_avg_pool2d and nn.AdaptiveAvgPool2d: to one element per channel at::adaptive_avg_pool2d's
# mean((-1, -2), keepdim=True) shortcut (MeanBackward1), the head of the tutorials' CNNs; to
# other sizes ATen's kernel (AdaptiveAvgPool2DBackward0), values and gradients to the last digit.
import torch
import torch.nn.functional as F
from torch import nn
torch.manual_seed(0)
x = torch.randn(2, 3, 5, 4, requires_grad=True)
y = F.adaptive_avg_pool2d(x, 1)
print(y.shape, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
print(y.squeeze())
y.sum().backward()
print(x.grad[0, 0])
m = nn.AdaptiveAvgPool2d((1, 1))
print(m, nn.AdaptiveAvgPool2d(1), m(x).shape, torch.equal(m(x), y))
u = torch.randn(3, 6, 7)
print(F.adaptive_avg_pool2d(u, (1, 1)).shape, F.adaptive_avg_pool2d(u, 1).squeeze())
print(torch.equal(F.adaptive_avg_pool2d(x, (1, None)), x.mean(-2, keepdim=True)) if False else 0)
try:
    F.adaptive_avg_pool2d(torch.ones(2, 3), 1)
except (RuntimeError, ValueError) as e:
    print(e)
torch.set_printoptions(precision=10)
x = torch.randn(2, 3, 10, 13, requires_grad=True)
for size in [(2, 3), 7, (5, None), (10, 13), (4, 1), 1, (3, 3)]:
    y = F.adaptive_avg_pool2d(x, size)
    g = torch.randn(y.shape)
    gx, = torch.autograd.grad(y, x, g)
    print(size, y.grad_fn.name(), tuple(y.shape), y.flatten()[-4:], gx[1, 2, 3], y.sum().item())
m = nn.AdaptiveAvgPool2d((6, 6))
print(m, m(torch.randn(3, 14, 9))[0, 5])
d = torch.randn(1, 2, 7, 5, dtype=torch.float64)
print(F.adaptive_avg_pool2d(d, 3)[0, 1])
