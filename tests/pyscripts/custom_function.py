import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x * x * ctx.scale, None


x = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64, requires_grad=True)
y = Cube.apply(x, 2.0)
print(y)
print(y.grad_fn.name())
y.sum().backward()
print(x.grad)
z = Cube.apply(x.detach(), 1.0)
print(z.requires_grad)
