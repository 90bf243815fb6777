# An in-place op of a float32 tensor with a float64 one that requires grad: the result keeps
# the tensor's dtype (PyTorch writes into it), the gradient reaching the float64 input is float64.
import torch
d = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
f = torch.tensor([1., 2.])
f.add_(d)
print(f)
f.mul_(d)
print(f)
f.sum().backward()
print(d.grad)
g = torch.tensor([1., 2.], dtype=torch.float64)
w = torch.tensor([3., 4.], requires_grad=True)
g.mul_(w)
print(g)
g.sum().backward()
print(w.grad)
