# torch/nn/modules/activation.py's and linear.py's examples, with the output printed
import torch
import torch.nn as nn
torch.manual_seed(0)
for m in [nn.Hardtanh(-2, 2), nn.ReLU6(), nn.Hardsigmoid(), nn.Hardswish(), nn.Softsign(),
          nn.Tanhshrink(), nn.LeakyReLU(0.1), nn.ReLU(), nn.Tanh(), nn.Sigmoid()]:
    input = torch.randn(2)
    output = m(input)
    print(m, output)
m = nn.Softmin(dim=1)
input = torch.randn(2, 3)
output = m(input)
print(m, output)
m = nn.Softmax2d()
# you softmax over the 2nd dimension
input = torch.randn(2, 3, 12, 13)
output = m(input)
print(m, output.sum(dim=1).sum(), output[0, :, 0, :3])
m = nn.Identity(54, unused_argument1=0.1, unused_argument2=False)
input = torch.randn(128, 20)
output = m(input)
print(m, output.size(), output is input)

# reprs with their defaults, inplace, positional arguments; gradients through them
print(nn.LeakyReLU(), nn.LeakyReLU(0.2, True), nn.Softmax(), nn.Softmax(dim=0), nn.LogSoftmax(0),
      nn.Flatten(), nn.Flatten(0), nn.ReLU(inplace=True), nn.ReLU6(inplace=True),
      nn.Hardtanh(), nn.Softmin(), nn.Identity())
x = torch.tensor([[-3.5, -1.0, 0.25], [0.5, 2.0, 7.0]], requires_grad=True)
y = (nn.Hardtanh(-2, 2)(x) * 1 + nn.ReLU6()(x) * 2 + nn.Hardsigmoid()(x) * 3
     + nn.Hardswish()(x) * 4 + nn.Softsign()(x) * 5 + nn.Tanhshrink()(x) * 6
     + nn.Softmin(1)(x) * 7 + nn.functional.softmin(x, 0) * 8)
y.sum().backward()
print(y, x.grad)
print(nn.Softmin(1)(x).grad_fn.name(), nn.Softsign()(x).grad_fn.name(), nn.Tanhshrink()(x).grad_fn.name(),
      nn.ReLU6()(x).grad_fn.name(), nn.Identity()(x) is x, nn.Flatten(0)(x))
