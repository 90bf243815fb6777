import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 6, requires_grad=True)
y = F.dropout1d(x, 0.5)
print(y, y.grad_fn.name())
y.sum().backward()
print(x.grad)
print(F.dropout1d(x, 0.5, training=False).grad_fn.name())
z = torch.randn(2, 3, 5)
print(F.dropout2d(z, 0.4))
print(F.dropout3d(torch.randn(3, 2, 2, 2), 0.5))
m = nn.Dropout3d(0.5)
m.eval()
w = torch.randn(3, 2, 2, 2)
print(m(w) is w, torch.equal(m(w), w))
print(F.dropout1d(torch.randn(3, 4), 1.0))
