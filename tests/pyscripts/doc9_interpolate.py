# F.interpolate(mode='nearest') in 1-3 dims, nn.Upsample and nn.UpsamplingNearest2d against Python
# with PyTorch: ATen's source indexes (equal sizes, doubling, float32 scales), the output size
# from a scale factor, and the gradient added back cell after cell, to the last digit.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
torch.set_printoptions(precision=10)
x = torch.randn(1, 2, 4, 5, requires_grad=True)  # (x.grad: only net's backward below)
for kw in [dict(scale_factor=2), dict(size=(7, 9)), dict(scale_factor=1.7), dict(size=3), dict(scale_factor=(0.5, 3)), dict(size=(4, 5)), dict(scale_factor=2.5, recompute_scale_factor=True)]:
    y = F.interpolate(x, **kw)
    g = torch.randn(y.shape)
    gx, = torch.autograd.grad(y, x, g)
    print(kw, y.grad_fn.name(), tuple(y.shape), y[0, 1, -1], gx[0, 0, 2])
v = torch.randn(2, 3, 6, requires_grad=True)
y = F.interpolate(v, scale_factor=1.5)
y.pow(2).sum().backward()
print(y.grad_fn.name(), y.shape, v.grad[1])
w = torch.randn(1, 1, 2, 3, 2)
print(F.interpolate(w, size=(3, 4, 5)).shape, F.interpolate(w, scale_factor=2).sum().item())
up = nn.Upsample(scale_factor=2, mode="nearest")
print(up, up(x).shape)
print(nn.Upsample(size=(5, 5)))
print(nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingNearest2d(scale_factor=3)(x)[0, 0, 0])
print(nn.Upsample(scale_factor=(2, 1.5))(x).shape, type(up))
net = nn.Sequential(nn.Upsample(scale_factor=2), nn.Tanh())
print(net)
out = net(x)
out.mean().backward()
print(out.shape, x.grad[0, 1])
