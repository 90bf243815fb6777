# Convolutions as PyTorch's documentation shows them (torch.nn.functional.conv1d/conv2d/conv3d
# examples, the nn.Conv* modules), with their graphs and gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def edges(fn):
    """next_functions by name (an object's address differs from run to run)."""
    return [(None if f is None else f.name(), i) for f, i in fn.next_functions]

# F.conv1d's example
filters = torch.randn(33, 16, 3)
inputs = torch.randn(20, 16, 50)
print(F.conv1d(inputs, filters).shape)
# F.conv2d's example
filters = torch.randn(8, 4, 3, 3)
inputs = torch.randn(1, 4, 5, 5)
print(F.conv2d(inputs, filters, padding=1).shape)
# F.conv3d's example
filters = torch.randn(33, 16, 3, 3, 3)
inputs = torch.randn(20, 16, 50, 10, 20)
print(F.conv3d(inputs, filters).shape)

# nn.Conv2d's examples
m = nn.Conv2d(16, 33, 3, stride=2)
print(m)
m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
print(m)
m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
print(m)
input = torch.randn(20, 16, 50, 100)
output = m(input)
print(output.shape, output.grad_fn.name())
print(nn.Conv1d(16, 33, 3, stride=2), nn.Conv3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0)))
print(nn.Conv2d(4, 8, 3, groups=2, bias=False, padding='same', padding_mode='circular'))
print(nn.Conv1d(2, 3, 3, padding='valid', dilation=2))

# a small graph, in float64, with its gradients
x = torch.randn(2, 3, 6, 5, dtype=torch.float64, requires_grad=True)
w = torch.randn(4, 3, 3, 2, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, dtype=torch.float64, requires_grad=True)
y = F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2))
print(y.shape, y.grad_fn.name(), edges(y.grad_fn))
y.pow(2).sum().backward()
print(x.grad[1, 2])
print(w.grad[3])
print(b.grad)
z = F.conv2d(x, w)
print(edges(z.grad_fn))

# groups, unbatched input, padding='same' (odd and even kernels)
x = torch.randn(4, 7, 7, dtype=torch.float64, requires_grad=True)
w = torch.randn(6, 2, 3, 3, dtype=torch.float64, requires_grad=True)
y = F.conv2d(x, w, groups=2, padding='same')
print(y.shape, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
y.sum().backward()
print(x.grad[3])
w2 = torch.randn(6, 4, 2, 2, dtype=torch.float64)
y = F.conv2d(x, w2, padding=1)
print(y.shape, y.grad_fn.next_functions[0][0].name(),
      y.grad_fn.next_functions[0][0].next_functions[0][0].name())
print(torch.conv2d(x.unsqueeze(0), w2).shape, torch.conv1d(x[0], torch.randn(2, 7, 3, dtype=torch.float64)).shape)

# a module's parameters, drawn as PyTorch draws them
conv = nn.Conv2d(2, 3, 2)
print(conv.weight)
print(conv.bias)
print([name for name, _ in conv.named_parameters()], conv.kernel_size, conv.stride,
      conv.padding, conv.dilation, conv.groups, conv.in_channels, conv.out_channels)
out = conv(torch.ones(1, 2, 3, 3))
print(out)
out.sum().backward()
print(conv.weight.grad)
print(conv.bias.grad)

# padding modes: F.pad first, as PyTorch's forward
for mode in ('reflect', 'replicate', 'circular'):
    m = nn.Conv1d(1, 1, 3, padding=1, padding_mode=mode, bias=False)
    with torch.no_grad():
        m.weight.fill_(1.0)
    x = torch.arange(5.).view(1, 1, 5).requires_grad_()
    y = m(x)
    print(mode, y, y.grad_fn.next_functions[0][0].name())

# integer tensors convolve too
print(F.conv2d(torch.ones(1, 1, 3, 3, dtype=torch.int64), torch.ones(1, 1, 2, 2, dtype=torch.int64)))

# what the nodes save
x = torch.randn(1, 2, 5, 5, requires_grad=True)
w = torch.randn(3, 2, 2, 2)
y = F.conv2d(x, w, stride=2, padding=1)
g = y.grad_fn
print(g._saved_bias_sym_sizes_opt, g._saved_dilation, g._saved_groups, g._saved_input.shape,
      g._saved_output_padding, g._saved_padding, g._saved_stride, g._saved_transposed,
      g._saved_weight.shape)
print(F.conv1d(x[:, :, 0], w[:, :, 0], torch.zeros(3)).grad_fn._saved_bias_sym_sizes_opt)
