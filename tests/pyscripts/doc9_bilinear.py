# F.interpolate(mode='bilinear' and 'linear') and nn.Upsample against Python with PyTorch: ATen's
# weights (align_corners either way, scale factors), the four corners' fused sum and the
# backward's fused adds, values and gradients to the last digit, float32 and float64.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
torch.set_printoptions(precision=10)
x = torch.randn(2, 3, 5, 6, requires_grad=True)
for kw in [dict(scale_factor=2), dict(size=(7, 9)), dict(scale_factor=1.5, align_corners=True), dict(size=(3, 4), align_corners=False), dict(scale_factor=(0.5, 2.2))]:
    y = F.interpolate(x, mode="bilinear", **kw)
    g = torch.randn(y.shape)
    gx, = torch.autograd.grad(y, x, g)
    print(kw, y.grad_fn.name(), tuple(y.shape), y[1, 2, -1], gx[0, 1, 3])
up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
print(up, up(x)[0, 0, 1])
print(nn.Upsample(size=(4, 4), mode="bilinear"))
z = F.interpolate(torch.randn(1, 1, 3, 3, dtype=torch.float64), size=(5, 5), mode="bilinear")
print(z)
x = torch.randn(2, 3, 7, requires_grad=True)
for kw in [dict(scale_factor=2), dict(size=11), dict(scale_factor=1.5, align_corners=True), dict(size=3)]:
    y = F.interpolate(x, mode="linear", **kw)
    g = torch.randn(y.shape)
    gx, = torch.autograd.grad(y, x, g)
    print(kw, y.grad_fn.name(), tuple(y.shape), y[1, 2], gx[0, 1])
print(nn.Upsample(scale_factor=3, mode="linear")(x)[0, 0, :5])
