# Extending PyTorch's plain class ScalarTensor(object), and setup_context binding forward's defaults
# (inputs holds every parameter, as inspect.signature(forward).bind does) with inspect's messages.
# (LinearFunction, MulConstant, MyCube: custom_function_setup_context.py; the module:
# extending_linear_module.py)
import torch

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
