# Second derivatives through custom autograd.Functions beyond the tutorial's: a Function of
# two inputs, one that saves its output, one that returns a non-tensor too, gradgradcheck on
# them, create_graph=True twice on vectors, and autograd.functional.hessian of a product.
import torch
torch.manual_seed(0)

class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * x

class Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.tanh(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (1 - out * out)

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.save_for_backward(x)
        return x * x * k

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x * ctx.k, None

a = torch.rand(2, 3, requires_grad=True, dtype=torch.double)
b = torch.rand(2, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Mul.apply, (a, b)))
print(torch.autograd.gradgradcheck(Mul.apply, (a, b)))
print(torch.autograd.gradgradcheck(Tanh.apply, (a,)))
print(torch.autograd.gradgradcheck(lambda t: Scale.apply(t, 3.0), (a,)))

y = torch.tensor([0.5, 1.5], requires_grad=True, dtype=torch.double)
g, = torch.autograd.grad(Tanh.apply(Mul.apply(y, y)).sum(), y, create_graph=True)
print(g.detach())
g.sum().backward()
print(y.grad)

z = torch.tensor([0.5, 1.5], requires_grad=True, dtype=torch.double)
print(torch.autograd.functional.hessian(lambda t: Tanh.apply(t).sum() * Scale.apply(t, 2.0).sum(), z))

class Loud(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        print("backward runs")
        return 2 * g * x

w = torch.tensor([1.0, 2.0], requires_grad=True)
gw, = torch.autograd.grad(Loud.apply(w).sum(), w, create_graph=True)
print(gw)
