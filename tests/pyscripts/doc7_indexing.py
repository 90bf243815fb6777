# PyTorch's _tensor_docs.py examples (round 7): index_fill_, index_copy_, masked_scatter_,
# put_, scatter_add_ and masked_select, then their gradients.
import torch
torch.manual_seed(0)
x = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
index = torch.tensor([0, 2])
print(x.index_fill_(1, index, -1))
x = torch.zeros(5, 3)
t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
index = torch.tensor([0, 4, 2])
print(x.index_copy_(0, index, t))
self = torch.tensor([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
mask = torch.tensor([[0, 0, 0, 1, 1], [1, 1, 0, 1, 1]], dtype=torch.bool)
source = torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
print(self.masked_scatter_(mask, source))
self = torch.tensor([0, 0, 0, 0, 0])
print(self.masked_scatter(mask, source))
src = torch.tensor([[4, 3, 5], [6, 7, 8]])
print(src.put_(torch.tensor([1, 3]), torch.tensor([9, 10])))
print(src.put_(torch.tensor([1, 1]), torch.tensor([1, 2]), accumulate=True))
src = torch.ones((2, 5))
index = torch.tensor([[0, 1, 2, 0, 0]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_add_(0, index, src))
index = torch.tensor([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_add_(0, index, src))
x = torch.randn(3, 4)
mask = x.ge(0.5)
print(torch.masked_select(x, mask))
print(x.masked_select(x < 0))

w = torch.randn(2, 3, requires_grad=True)
s = torch.randn(2, 3, requires_grad=True)
weights = torch.arange(1.0, 7.0)
outs = [w.index_fill(1, torch.tensor([0, 2]), -1.0), w.index_copy(1, torch.tensor([2, 0]), s[:, :2]),
        w.masked_scatter(s > 0, s * 2), w.put(torch.tensor([1, 4]), s[0, :2]),
        w.put(torch.tensor([1, 1]), s[1, :2], accumulate=True),
        w.scatter_add(0, torch.tensor([[0, 1, 0], [1, 1, 0]]), s), torch.masked_select(w, s > 0)]
for out in outs:
    w.grad = None
    s.grad = None
    (out * weights[:out.numel()].reshape(out.shape)).sum().backward()
    print(out, w.grad, s.grad)
c = w.detach().clone().requires_grad_()
d = c * 1
d.index_fill_(0, torch.tensor([1]), 2.0)
d.scatter_add_(1, torch.tensor([[0, 0], [1, 2]]), s[:, :2])
d.sum().backward()
print(d, c.grad, d.grad_fn.name())
