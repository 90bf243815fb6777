import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
m = nn.Bilinear(20, 30, 40)
input1 = torch.randn(128, 20)
input2 = torch.randn(128, 30)
output = m(input1, input2)
print(m, output.size(), output.grad_fn.name())
print(output[0].tolist()[:4], output.sum().item())
m = nn.Bilinear(3, 2, 4)
x1 = torch.randn(5, 3, requires_grad=True)
x2 = torch.randn(5, 2, requires_grad=True)
y = m(x1, x2)
y.sum().backward()
print(y, x1.grad, x2.grad, m.weight.grad[0], m.bias.grad)
print(F.bilinear(torch.randn(2, 3), torch.randn(2, 4), torch.randn(5, 3, 4)).tolist())
