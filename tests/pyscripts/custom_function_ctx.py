import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

class MyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable
        ctx.save_for_backward(x)
        return x.clamp(min=0)
    @staticmethod
    def backward(ctx, g):
        if g is None:
            return None
        x, = ctx.saved_tensors
        return g * (x > 0).float()
z = torch.tensor([-1.0, 2.0], requires_grad=True)
MyReLU.apply(z).sum().backward()
print(z.grad)

class Sort(Function):
    @staticmethod
    def forward(ctx, x):
        sorted, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted, idx
    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input
v = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
s, i = Sort.apply(v)
print(s, i, i.requires_grad)
(s * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(v.grad)
