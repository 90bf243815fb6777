# PyTorch's _torch_docs.py / _tensor_docs.py examples (round 7): slice_scatter,
# fill_diagonal_, narrow_copy and vdot, then their gradients.
import torch
a = torch.zeros(8, 8)
b = torch.ones(2, 8)
print(a.slice_scatter(b, start=6))
b = torch.ones(8, 2)
print(a.slice_scatter(b, dim=1, start=2, end=6, step=2))
a = torch.zeros(3, 3)
print(a.fill_diagonal_(5))
b = torch.zeros(7, 3)
print(b.fill_diagonal_(5))
c = torch.zeros(7, 3)
print(c.fill_diagonal_(5, wrap=True))
print(torch.zeros(2, 2, 2).fill_diagonal_(1.5))
x = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
print(torch.narrow_copy(x, 0, 0, 2))
print(torch.narrow_copy(x, 1, 1, 2))
print(torch.vdot(torch.tensor([2, 3]), torch.tensor([2, 1])))
torch.manual_seed(0)
w = torch.randn(4, 3, requires_grad=True)
s = torch.randn(2, 3, requires_grad=True)
v = torch.randn(3, requires_grad=True)
for out in (w.slice_scatter(s, start=1, end=4, step=2), torch.slice_scatter(w, s.T[:, :1].T, 0, 3),
            torch.narrow_copy(w, 1, 1, 2), torch.vdot(v, w[0]), w[1].vdot(v)):
    w.grad = None
    s.grad = None
    v.grad = None
    (out * out).sum().backward()
    print(out, out.grad_fn.name(), w.grad, s.grad, v.grad)
x = torch.tensor([[1, 2], [3, 4], [5, 6]])
print(x.resize_(2, 2))
print(torch.arange(1., 7.).resize_(2, 3))
