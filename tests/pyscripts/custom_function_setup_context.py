import torch
from torch.autograd import Function

class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias

linear = LinearFunction.apply

class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None

class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result

def my_cube(x):
    result, dx = MyCube.apply(x)
    return result

torch.manual_seed(0)
inp = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
w = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
b = torch.randn(2, dtype=torch.double, requires_grad=True)
out = linear(inp, w, b)
print(out)
out.sum().backward()
print(inp.grad, w.grad, b.grad)
from torch.autograd import gradcheck
print(gradcheck(linear, (inp, w, b), eps=1e-6, atol=1e-4))
print(gradcheck(linear, (inp, w), eps=1e-6, atol=1e-4))  # (bias=None filled in: 3 inputs)
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = MulConstant.apply(x, 5.0)
y.sum().backward()
print(y, x.grad)
x = torch.tensor([1.0, 2.0], requires_grad=True, dtype=torch.double)
c = my_cube(x)
print(c)
