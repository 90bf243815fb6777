# The examples of PyTorch's note "Extending PyTorch" (docs/source/notes/extending.rst: LinearFunction,
# MulConstant, MyCube, MyModule, ScalarTensor), with setup_context binding forward's defaults
# (inputs holds every parameter, as inspect.signature(forward).bind does) and inspect's messages.
import torch
from torch.autograd import Function
from torch.autograd import gradcheck

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
        tensor, constant = inputs
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

input = (torch.randn(20,20,dtype=torch.double,requires_grad=True), torch.randn(30,20,dtype=torch.double,requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = my_cube(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g)
gg, = torch.autograd.grad(g.sum(), x)
print(gg)
z = MulConstant.apply(x, 2.5)
z.sum().backward()
print(x.grad, z.grad_fn.name())

class MyModule(torch.nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = torch.nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter('bias', None)
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'input_features={}, output_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None
        )
m = MyModule(4, 3)
print(m)
out = m(torch.randn(2, 4))
print(out)
out.sum().backward()
print(m.weight.grad)

class ScalarTensor(object):
   def __init__(self, N, value):
       self._N = N
       self._value = value

   def __repr__(self):
       return "ScalarTensor(N={}, value={})".format(self._N, self._value)

   def tensor(self):
       return self._value * torch.eye(self._N)
d = ScalarTensor(5, 2)
print(d)
print(d.tensor())
class P(object):
    pass
p = P()
print(isinstance(p, P), isinstance(p, object), object)
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(x, k=2.0):
        return x * k
    @staticmethod
    def setup_context(ctx, inputs, output):
        print(len(inputs), inputs[1])
        ctx.k = inputs[1]
    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None
x = torch.ones(2, requires_grad=True)
Scale.apply(x).sum().backward()
print(x.grad)
print(Scale.apply(x, k=3.0))
try:
    Scale.apply()
except TypeError as e:
    print(e)
try:
    Scale.apply(x, j=1)
except TypeError as e:
    print(e)
try:
    Scale.apply(x, 1, 2)
except TypeError as e:
    print(e)
