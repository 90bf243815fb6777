# F.glu and nn.GLU against Python with PyTorch: glu_kernel's own a * (1 / (1 + exp(-b))) (Sleef's exp on
# whole pairs of vectors of each inner loop, the C library's on the rest), and its gradient.
import torch
import torch.nn.functional as F
torch.manual_seed(0)
torch.set_printoptions(precision=10)
for shape, dim in [((37, 52), 1), ((4, 70), -1), ((3, 8, 5), 1), ((6, 130), 1), ((10, 6), 0)]:
    x = (torch.randn(shape) * 3).requires_grad_()
    y = F.glu(x, dim)
    y.pow(2).sum().backward()
    print(shape, y.sum().item(), y.flatten()[::11].tolist()[:6], x.grad.flatten()[::13].tolist()[:6])
print(torch.nn.GLU()(torch.randn(2, 8)))
