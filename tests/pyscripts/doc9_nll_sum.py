# nll_loss and cross_entropy summed over the batch as ATen does (its cascade of 8 levels of
# 16, the ignored targets left out): the losses and gradients bit for bit against Python with
# PyTorch, for batches of 1 to 1000, class weights, ignore_index, extra dims and float64.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
for n in (1, 7, 16, 17, 33, 64, 257, 1000):
    x = (torch.randn(n, 10) * 3).requires_grad_()
    y = torch.randint(0, 10, (n,))
    loss = F.cross_entropy(x, y)
    loss.backward()
    print(n, loss.item(), F.cross_entropy(x, y, reduction="sum").item(), x.grad.sum().item(),
          x.grad[n // 2].tolist()[:3])
w = torch.rand(10) + 0.1
x = torch.randn(300, 10, requires_grad=True)
y = torch.randint(0, 10, (300,))
y[::7] = -100
for kw in ({"weight": w}, {"ignore_index": -100}, {"weight": w, "reduction": "sum"}):
    x.grad = None
    loss = F.cross_entropy(x, y, **kw)
    loss.backward()
    print(sorted(kw), loss.item(), x.grad[5].tolist()[:4], x.grad.abs().sum().item())
y2 = y.clone()
y2[y2 == -100] = 3
y2[::5] = 1
print(F.nll_loss(F.log_softmax(x, 1), y2, ignore_index=1).item(), nn.NLLLoss(weight=w)(x, y2).item())
img = torch.randn(4, 5, 6, 7, requires_grad=True)
target = torch.randint(0, 5, (4, 6, 7))
loss = F.cross_entropy(img, target)
loss.backward()
print(loss.item(), F.cross_entropy(img, target, weight=torch.rand(5), reduction="sum").item(),
      img.grad[2, 3, 1].tolist())
d = torch.randn(100, 4, dtype=torch.float64, requires_grad=True)
t = torch.randint(0, 4, (100,))
l64 = F.cross_entropy(d, t)
l64.backward()
print(l64.item(), d.grad[17].tolist())
