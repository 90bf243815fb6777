# Transposed convolutions as PyTorch's documentation shows them (F.conv_transpose1d/2d/3d,
# nn.ConvTranspose2d with output_size), the gradient of a convolution with respect to its
# input.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

# F.conv_transpose1d/2d/3d's examples
inputs = torch.randn(20, 16, 50)
weights = torch.randn(16, 33, 5)
print(F.conv_transpose1d(inputs, weights).shape)
inputs = torch.randn(1, 4, 5, 5)
weights = torch.randn(4, 8, 3, 3)
print(F.conv_transpose2d(inputs, weights, padding=1).shape)
inputs = torch.randn(20, 16, 50, 10, 20)
weights = torch.randn(16, 33, 3, 3, 3)
print(F.conv_transpose3d(inputs, weights).shape)

# nn.ConvTranspose2d's examples
m = nn.ConvTranspose2d(16, 33, 3, stride=2)
print(m)
m = nn.ConvTranspose2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
print(m)
input = torch.randn(20, 16, 50, 100)
output = m(input)
print(output.shape)
input = torch.randn(1, 16, 12, 12)
downsample = nn.Conv2d(16, 16, 3, stride=2, padding=1)
upsample = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1)
h = downsample(input)
print(h.size())
output = upsample(h, output_size=input.size())
print(output.size())
print(nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1, groups=2, bias=False, dilation=2))

# the input gradient of a convolution is a transposed convolution of the output gradient
x = torch.randn(2, 3, 7, 6, dtype=torch.float64, requires_grad=True)
w = torch.randn(4, 3, 3, 2, dtype=torch.float64)
y = F.conv2d(x, w, stride=2, padding=1)
g = torch.randn_like(y)
y.backward(g)
t = F.conv_transpose2d(g, w, stride=2, padding=1)
print(t.shape, torch.allclose(t, x.grad))

# its own graph and gradients
a = torch.randn(1, 4, 3, 3, dtype=torch.float64, requires_grad=True)
k = torch.randn(4, 3, 2, 2, dtype=torch.float64, requires_grad=True)
c = torch.randn(6, dtype=torch.float64, requires_grad=True)
z = F.conv_transpose2d(a, k, c, stride=2, padding=1, output_padding=1, groups=2)
print(z.shape, z.grad_fn.name(), z.grad_fn._saved_transposed, z.grad_fn._saved_output_padding)
(z * z).sum().backward()
print(a.grad[0, 3])
print(k.grad[1])
print(c.grad)
conv = nn.ConvTranspose2d(2, 3, 2)
print(conv.weight.shape)
print(conv.weight)
print(conv.bias)
u = F.conv_transpose1d(torch.randn(2, 5), torch.randn(2, 3, 2))
print(u.shape, u.grad_fn is None)
for case in (lambda: F.conv_transpose2d(torch.randn(1, 3, 3, 3), torch.randn(2, 3, 2, 2)),
             lambda: F.conv_transpose2d(torch.randn(1, 2, 3, 3), torch.randn(2, 3, 2, 2),
                                        output_padding=1),
             lambda: F.conv_transpose2d(torch.randn(1, 2, 3, 3), torch.randn(2, 3, 2, 2),
                                        torch.randn(2)),
             lambda: F.conv_transpose2d(torch.randn(1, 2, 3, 3), torch.randn(2, 3, 2, 2),
                                        padding=2)):
    try:
        case()
    except RuntimeError as e:
        print(e)
