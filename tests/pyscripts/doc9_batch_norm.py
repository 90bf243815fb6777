# nn.BatchNorm1d/2d/3d and F.batch_norm against Python with PyTorch: the values, gradients and
# running statistics ATen's CPU kernels give (bit for bit: every tensor is printed whole),
# training and evaluation, momentum=None, affine=False, track_running_stats=False.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=10)
bn = nn.BatchNorm2d(3)
print(bn, bn.training, nn.BatchNorm2d, type(bn) is nn.BatchNorm2d)
print([k for k in bn.state_dict()], [n for n, _ in bn.named_parameters()])
x = torch.randn(4, 3, 5, 5, requires_grad=True)
y = bn(x)
print(y.grad_fn.name(), y.shape, y[0, 0, 0])
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
(y * torch.randn_like(y)).sum().backward()
print(x.grad[1, 2, 3], bn.weight.grad, bn.bias.grad)
bn.eval()
y = bn(x)
print(y[3, 1, 2], bn.num_batches_tracked)
bn.zero_grad()
y.pow(2).sum().backward()
print(bn.weight.grad, bn.bias.grad)

b1 = nn.BatchNorm1d(7, momentum=None)
for step in range(3):
    h = torch.randn(16, 7) * (step + 1) + step
    out = b1(h)
print(b1)
print(b1.running_mean, b1.running_var, b1.num_batches_tracked)
print(out[5])
seq = torch.randn(3, 4, 11, requires_grad=True)
b2 = nn.BatchNorm1d(4, affine=False, track_running_stats=False)
print(b2, b2.running_mean)
z = b2(seq)
z.exp().sum().backward()
print(z[2, 3], seq.grad[0, 1])
b3 = nn.BatchNorm3d(2, eps=1e-3, momentum=0.3)
v = torch.randn(2, 2, 3, 3, 3, requires_grad=True)
w = b3(v)
w.sum().backward()
print(w[1, 0, 2], v.grad[0, 1, 0], b3.running_var)

model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(32, 5), torch.randn(32, 2)
for epoch in range(4):
    loss = F.mse_loss(model(data), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
model.eval()
with torch.no_grad():
    print(model(data[:3]))
print(model[1].running_mean)

r = F.batch_norm(torch.randn(6, 3), torch.zeros(3), torch.ones(3), training=True)
print(r.sum(dim=0))
for bad in [lambda: nn.BatchNorm2d(3)(torch.randn(2, 3)), lambda: nn.BatchNorm1d(3)(torch.randn(1, 3)),
            lambda: F.batch_norm(torch.randn(4, 3), torch.zeros(2), torch.ones(3))]:
    try:
        bad()
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, e)
