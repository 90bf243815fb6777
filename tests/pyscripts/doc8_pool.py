# Pooling as PyTorch's documentation shows it (nn.MaxPool*, nn.AvgPool*, F.max_pool*d,
# F.avg_pool*d), with return_indices, ceil_mode, padding, dilation and their gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def edges(fn):
    """next_functions by name (an object's address differs from run to run)."""
    return [(None if f is None else f.name(), i) for f, i in fn.next_functions]

# nn.MaxPool2d's examples
m = nn.MaxPool2d(3, stride=2)
print(m)
m = nn.MaxPool2d((3, 2), stride=(2, 1))
print(m)
input = torch.randn(20, 16, 50, 32)
output = m(input)
print(output.shape)
print(nn.MaxPool1d(3, stride=2), nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2)))
print(nn.AvgPool1d(3, stride=2), nn.AvgPool2d((3, 2), stride=(2, 1)), nn.AvgPool3d(3, stride=2))
# F.avg_pool1d's example
input = torch.tensor([[[1, 2, 3, 4, 5, 6, 7]]], dtype=torch.float32)
print(F.avg_pool1d(input, kernel_size=3, stride=2))
print(nn.AvgPool1d(3, stride=2)(input))

x = torch.randn(2, 3, 7, 6, requires_grad=True)
y = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
print(y)
print(y.grad_fn.name(), edges(y.grad_fn))
v, i = F.max_pool2d(x, 2, return_indices=True)
print(i[1])
v.sum().backward()
print(x.grad[0, 0])
x.grad = None
y = F.max_pool2d(x, (2, 3), stride=1, dilation=(2, 1))
(y * y).sum().backward()
print(x.grad[1, 2])
x.grad = None
a = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
print(a[0])
print(a.grad_fn.name())
a.sum().backward()
print(x.grad[0, 1])
x.grad = None
a = F.avg_pool2d(x, 2, stride=1, divisor_override=3)
(a * a).sum().backward()
print(x.grad[1, 0])

# 1-d pools: the 2-d ones on an unsqueezed input
s = torch.randn(3, 8, requires_grad=True)
y = F.max_pool1d(s, 3, stride=2)
print(y, y.grad_fn.next_functions[0][0].next_functions[0][0].name())
y, i = F.max_pool1d(s, 2, return_indices=True)
print(i)
a = F.avg_pool1d(s, 3, padding=1)
print(a)
(y.sum() + a.sum()).backward()
print(s.grad)

# 3-d pools and the modules
v = torch.randn(1, 2, 4, 4, 4, requires_grad=True)
y = nn.MaxPool3d(2)(v)
print(y.grad_fn.name())
y.sum().backward()
print(v.grad[0, 1, 3])
a = nn.AvgPool3d(2, stride=1)(v)
print(a.grad_fn.name(), a.shape)
print(nn.MaxPool2d(2, return_indices=True)(torch.arange(16.).view(1, 4, 4)))
print(torch.max_pool2d(torch.arange(16.).view(1, 4, 4), 2), torch.avg_pool1d(torch.ones(1, 4), 2))

# a nan wins its window
n = torch.tensor([[[1.0, float('nan'), 3.0, 2.0]]])
print(F.max_pool1d(n, 2), F.max_pool1d(n, 2, return_indices=True)[1])
# float64
d = torch.randn(1, 5, 5, dtype=torch.float64, requires_grad=True)
F.avg_pool2d(d, 3, stride=1, padding=1).sum().backward()
print(d.grad)

# what the nodes save
x = torch.randn(1, 2, 5, 5, requires_grad=True)
for y in (F.max_pool2d(x, 2), F.max_pool2d(x, 3, 1, 1, 2, True), F.avg_pool2d(x, 2),
          F.avg_pool2d(x, 3, 2, 1, True, False, 4), F.avg_pool1d(x[0], 2), F.max_pool1d(x[0], 2)):
    g = y.grad_fn
    if g.name() == "SqueezeBackward1":
        g = g.next_functions[0][0]
    print(g.name(), g._saved_ceil_mode, g._saved_kernel_size, g._saved_padding, g._saved_stride,
          g._saved_self.shape)
    if g.name().startswith("Max"):
        print(g._saved_dilation, g._saved_result1)
    else:
        print(g._saved_count_include_pad, g._saved_divisor_override)
