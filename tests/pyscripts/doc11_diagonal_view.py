# Tensor.diagonal() is a view: writes through it change the tensor (copy_, fill_, zero_, add_),
# and a change of the tensor shows in it; torch.diag is a copy.
import torch
r = torch.zeros(2, 2); r.diagonal().copy_(torch.tensor([1., 2.])); print(r)
r = torch.zeros(3, 3); r.diagonal(1).fill_(5.); print(r)
r = torch.ones(2, 3, 3); torch.diagonal(r, dim1=1, dim2=2).zero_(); print(r)
r.diagonal(dim1=1, dim2=2).add_(1); print(r)
x = torch.arange(9.).reshape(3, 3)
d = x.diagonal(); x.mul_(2); print(d)
print(torch.diag(x), torch.diag(torch.tensor([1., 2.])))
y = torch.eye(3).diagonal(); print(y, y.is_contiguous(), y.stride())
z = x.diag(); x.zero_(); print(z)
print(torch.ones(2).type("torch.DoubleTensor"), torch.ones(2).type(torch.int64))
