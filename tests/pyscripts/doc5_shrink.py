import torch
import torch.nn.functional as F
import torch.nn as nn
x = torch.tensor([-1., -0.5, -0.25, 0., 0.3, 0.5, 1.5], requires_grad=True)
for y in [F.hardshrink(x), F.softshrink(x), F.threshold(x, 0.3, 7.0), torch.threshold(x, 0.0, -2), x.hardshrink(0.3), F.softshrink(x, 0.25), torch.hardshrink(x, lambd=1.0)]:
    print(y)
    g, = torch.autograd.grad(y.sum(), x)
    print(g)
xd = x.double()
print(F.softshrink(xd, 0.1), F.threshold(xd, 0.1, 20))
print(F.threshold(torch.arange(-3, 3), 0, 5))
import torch.nn as nn
m = nn.Threshold(0, 0.5)
print(m, nn.Threshold(0.1, 20, inplace=True), nn.Hardshrink(), nn.Softshrink(0.3), nn.Softshrink(lambd=1))
x = torch.tensor([-1.0, -0.25, 0.0, 0.75, 2.0], requires_grad=True)
for mod in [m, nn.Hardshrink(), nn.Softshrink(0.3), nn.Threshold(0.5, -3.0)]:
    y = mod(x)
    print(y)
    y.backward(torch.arange(5.0))
    print(x.grad)
    x.grad = None
print(m(torch.arange(-3, 3)))
print(nn.Sequential(nn.Linear(2, 2), nn.Hardshrink(0.1), nn.Threshold(0.0, 1.0)))
