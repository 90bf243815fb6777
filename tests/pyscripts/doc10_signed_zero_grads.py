# Gradients that a mask or a zero slope takes away are +0, as ATen's threshold_backward,
# clamp_backward, where's and zeros_like give them (g * mask gave -0 for a negative g):
# relu, clamp and its one-sided forms, hardtanh, relu6, threshold, where, sign, floor.
import torch
import torch.nn.functional as F
x = torch.tensor([-2., -0.5, 0.5, 2.], requires_grad=True)
for name, f in [("clamp", lambda t: t.clamp(-1, 1)), ("clamp_min", lambda t: t.clamp(min=0)), ("hardtanh", F.hardtanh), ("relu6", F.relu6),
                ("threshold", lambda t: F.threshold(t, 0.1, 20.)), ("leaky", F.leaky_relu), ("abs", torch.abs), ("maximum", lambda t: torch.maximum(t, torch.zeros(4))),
                ("where", lambda t: torch.where(t > 0, t, torch.zeros(4))), ("max", lambda t: t.max()), ("masked", lambda t: t.masked_fill(t < 0, 0.)),
                ("hardsigmoid", F.hardsigmoid), ("hardswish", F.hardswish), ("elu", F.elu), ("sign", torch.sign), ("floor", torch.floor)]:
    x.grad = None
    (f(x) * -1).sum().backward()
    print(name, x.grad.tolist())
import torch.nn as nn
torch.manual_seed(0)
x = torch.ones(2, requires_grad=True)
lin = nn.Linear(2, 2)
m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1), nn.Tanh())
z = m(torch.ones(1, 2, requires_grad=True))
z.sum().backward()
print(m[0].weight.grad)
