# PyTorch's _torch_docs.py examples (round 7): stacking, splitting and flipping, then the
# same functions on a tensor that requires grad, with their grad_fn and gradients.
import torch
torch.manual_seed(0)
a = torch.tensor([1, 2, 3])
b = torch.tensor([4, 5, 6])
print(torch.dstack((a, b)))
a = torch.tensor([[1], [2], [3]])
b = torch.tensor([[4], [5], [6]])
print(torch.dstack((a, b)))
a = torch.tensor([1, 2, 3])
b = torch.tensor([4, 5, 6])
print(torch.column_stack((a, b)))
a = torch.arange(5)
b = torch.arange(10).reshape(5, 2)
print(torch.column_stack((a, b, b)))
x = torch.arange(8)
print(torch.tensor_split(x, 3))
x = torch.arange(7)
print(torch.tensor_split(x, 3))
print(torch.tensor_split(x, (1, 6)))
x = torch.arange(14).reshape(2, 7)
print(torch.tensor_split(x, 3, dim=1))
print(torch.tensor_split(x, (1, 6), dim=1))
t = torch.arange(16.0).reshape(4, 4)
print(torch.hsplit(t, 2))
print(torch.hsplit(t, [3, 6]))
print(torch.vsplit(t, 2))
t = torch.arange(16.0).reshape(2, 2, 4)
print(torch.dsplit(t, [3, 6]))
x = torch.arange(4).view(2, 2)
print(torch.fliplr(x))
print(torch.flipud(x))
t = torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
print(torch.ravel(t))
x = torch.tensor([1, 2, 3])
print(torch.broadcast_to(x, (3, 3)))
t = torch.randn(3, 4)
print(torch.msort(t))
t = torch.tensor([[10, 30, 20], [60, 40, 50]])
max_idx = torch.argmax(t)
print(torch.take_along_dim(t, max_idx))
sorted_idx = torch.argsort(t, dim=1)
print(torch.take_along_dim(t, sorted_idx, dim=1))
a = torch.randn(3)
print(torch.diagflat(a))
print(torch.diagflat(a, 1))
a = torch.randn(2, 2)
print(torch.diagflat(a))

w = torch.randn(2, 3, requires_grad=True)
v = torch.randn(3, requires_grad=True)
weights = torch.arange(1.0, 50.0)
outs = [torch.dstack((w, w)), torch.dstack((v, v)), torch.column_stack((v, v)),
        torch.column_stack((w.T, w.T)), torch.fliplr(w), torch.flipud(w), torch.ravel(w),
        torch.ravel(w.T), torch.broadcast_to(v, (2, 3)), torch.tensor_split(w, 2, dim=1)[1],
        torch.hsplit(w, 3)[2], torch.vsplit(w, [1])[1], torch.msort(w),
        torch.take_along_dim(w, torch.tensor([[0], [2]]), 1),
        torch.take_along_dim(w, torch.tensor([0, 4])), torch.diagflat(v), torch.diagflat(w, -1)]
for out in outs:
    print(out.grad_fn.name(), type(out.grad_fn.next_functions[0][0]).__name__)
    w.grad = None
    v.grad = None
    (out * weights[:out.numel()].reshape(out.shape)).sum().backward()
    print(w.grad, v.grad)
