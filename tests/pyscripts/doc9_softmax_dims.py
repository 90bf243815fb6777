# softmax and log_softmax along a dim that is not the last (ATen's loops over the positions after
# it), their gradients, and cross_entropy of a score map, against Python with PyTorch, printed
# to the last digit: float32 and float64, inner sizes below, at and past a vector, and rows a
# thread's range splits.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=10)
for shape, dim in [((4, 5, 6, 7), 1), ((3, 4, 20), 1), ((2, 3, 5), 0), ((64, 10), 0),
                   ((5, 3, 100), 1), ((3, 40, 2), 0)]:
    for dtype in (torch.float32, torch.float64):
        x = (torch.randn(shape, dtype=dtype) * 3).requires_grad_()
        y = F.softmax(x, dim=dim)
        z = F.log_softmax(x, dim=dim)
        g = torch.randn(shape, dtype=dtype)
        gy, = torch.autograd.grad(y, x, g)
        gz, = torch.autograd.grad(z, x, g)
        print(shape, dim, dtype, y.flatten()[-3:], z.flatten()[:2], gy.flatten()[-2:],
              gz.flatten()[5:7], y.sum().item(), z.sum().item())
scores = torch.randn(2, 4, 5, 6, requires_grad=True)
labels = torch.randint(0, 4, (2, 5, 6))
loss = F.cross_entropy(scores, labels)
loss.backward()
print(loss.item(), scores.grad[1, 2], torch.softmax(scores, 1)[0, :, 4, 5])
