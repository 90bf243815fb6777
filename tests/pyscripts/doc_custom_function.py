# torch/autograd/function.py's examples: Exp, save_for_backward with a non-tensor input,
# mark_non_differentiable (two outputs, index_add_ in backward), set_materialize_grads
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
torch.manual_seed(0)


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


input = torch.randn(3, requires_grad=True)
output = Exp.apply(input)
output.sum().backward()
print(output, input.grad)


class Func(Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, z: int):
        w = x * z
        out = x * y + y * z + w * y
        ctx.save_for_backward(x, y, w, out)
        ctx.z = z  # z is not a tensor
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, y, w, out = ctx.saved_tensors
        z = ctx.z
        gx = grad_out * (y + y * z)
        gy = grad_out * (x + z + w)
        gz = None
        return gx, gy, gz


a = torch.tensor(1., requires_grad=True, dtype=torch.double)
b = torch.tensor(2., requires_grad=True, dtype=torch.double)
c = 4
d = Func.apply(a, b, c)
d.backward()
print(d, a.grad, b.grad)


class Func(Function):
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


x = torch.tensor([3., 1., 2.], requires_grad=True)
s, i = Func.apply(x)
print(s, i, i.requires_grad, s.grad_fn.name())
(s * torch.tensor([1., 2., 3.])).sum().backward()
print(x.grad)


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        return g1 + g2  # No check for None necessary


# We modify SimpleFunc to handle non-materialized grad outputs
class Func(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:  # We must check for None now
            grad_input += g1
        if g2 is not None:
            grad_input += g2
        return grad_input


a = torch.tensor(1., requires_grad=True)
b, _ = Func.apply(a)  # induces g2 to be undefined
b.backward()
print(b, a.grad)
a2 = torch.tensor([2., 5.], requires_grad=True)
p, q = SimpleFunc.apply(a2)
(p * 3 + q * torch.tensor([1., -1.])).sum().backward()
print(p, q, a2.grad, p.grad_fn.name(), q.grad_fn.name())
with torch.no_grad():
    print(SimpleFunc.apply(a2))

# index_add_ as _tensor_docs.py shows it
x = torch.ones(5, 3)
t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
index = torch.tensor([0, 4, 2])
print(x.index_add_(0, index, t))
print(x.index_add_(0, index, t, alpha=-1))
print(torch.index_add(torch.zeros(2, 3), 1, torch.tensor([2, 0, 2]), torch.ones(2, 3) * 1.5),
      torch.zeros(3).index_add(0, torch.tensor([1, 1]), torch.tensor([0.1, 0.2])))
try:
    torch.zeros(3).index_add_(0, torch.tensor([1]), torch.tensor([1]))
except RuntimeError as e:
    print(e)
