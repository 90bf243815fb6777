import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.arange(8, dtype=torch.float).reshape(1, 2, 4)
for m in [nn.ConstantPad1d(2, 3.5), nn.ConstantPad1d((3, 1), 3), nn.ZeroPad1d((1, 2)),
          nn.ReflectionPad1d(2), nn.ReflectionPad1d((3, 1)), nn.ReplicationPad1d(2),
          nn.ReplicationPad1d((3, 1)), nn.CircularPad1d(2), nn.CircularPad1d((3, 1))]:
    print(m)
    print(m(x))
x = torch.arange(9, dtype=torch.float).reshape(1, 1, 3, 3)
for m in [nn.ConstantPad2d((1, 1, 2, 0), 3.5), nn.ZeroPad2d(2), nn.ReflectionPad2d(2),
          nn.ReflectionPad2d((1, 1, 2, 0)), nn.ReplicationPad2d((1, 1, 2, 0)),
          nn.CircularPad2d(1)]:
    print(m)
    print(m(x))
x = torch.randn(2, 3, 4, requires_grad=True)
for mode in ['constant', 'reflect', 'replicate', 'circular']:
    y = F.pad(x, (2, 3), mode=mode)
    print(mode, y.grad_fn.name())
    (y * torch.arange(9.0)).sum().backward()
    print(x.grad)
    x.grad = None
y = F.pad(x, (1, 1, 1, 1), value=-1.0)
print(y, y.grad_fn.name())
y = F.pad(x, (-1, 1, 0, -1))
print(y)
(y ** 2).sum().backward()
print(x.grad)
t4d = torch.empty(3, 3, 4, 2)
p1d = (1, 1)
out = F.pad(t4d, p1d, "constant", 0)
print(out.size())
p3d = (0, 1, 2, 1, 3, 3)
out = F.pad(t4d, p3d, "constant", 0)
print(out.size())
x = torch.arange(1 * 1 * 2 * 2 * 2, dtype=torch.float).reshape(1, 1, 2, 2, 2)
print(nn.ReflectionPad3d(1)(x).shape, nn.ReplicationPad3d((1, 0, 1, 0, 1, 0))(x))
pixel_shuffle = nn.PixelShuffle(3)
input = torch.randn(1, 9, 4, 4, requires_grad=True)
output = pixel_shuffle(input)
print(pixel_shuffle, output.size(), output.grad_fn.name())
print(output[0, 0, :4, :4])
pixel_unshuffle = nn.PixelUnshuffle(3)
back = pixel_unshuffle(output)
print(pixel_unshuffle, back.size(), torch.equal(back, input))
(back * torch.arange(9.0).reshape(9, 1, 1)).sum().backward()
print(input.grad[:, :, 0, 0])
print(F.pixel_shuffle(torch.arange(8.0).reshape(2, 4, 1, 1), 2))
m = nn.Unflatten(1, (2, 5, 5))
print(m, m(torch.randn(2, 50)).size())
print(F.one_hot(torch.arange(0, 5) % 3))
print(F.one_hot(torch.arange(0, 5) % 3, num_classes=5))
print(F.one_hot(torch.arange(0, 6).view(3, 2) % 3))
