import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm
import torch.nn.utils.parametrize as P
torch.manual_seed(0)
m = weight_norm(nn.Linear(20, 40), name='weight')
print(m)
print(m.parametrizations.weight.original0.size())
print(m.parametrizations.weight.original1.size())
print([n for n, _ in m.named_parameters()], P.is_parametrized(m))
x = torch.randn(3, 20)
y = m(x)
y.sum().backward()
print(y[0, :4], m.parametrizations.weight.original0.grad[:3].view(-1))
print(nn.Sequential(weight_norm(nn.Linear(2, 3)), nn.ReLU()))
