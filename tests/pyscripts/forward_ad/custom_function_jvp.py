# A custom autograd.Function with a jvp (and one without), in forward AD and in gradcheck's
# check_forward_ad; a Function with no backward fails when the backward pass reaches it.
import torch
import torch.autograd.forward_ad as fwAD

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        print("forward sees a tangent:", fwAD.unpack_dual(foo).tangent is not None)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        print("jvp got", gI)
        gO = gI * ctx.result
        del ctx.result
        return gO

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        return foo * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

primal = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
tangent = torch.tensor([1.0, 0.5])
with fwAD.dual_level():
    d = fwAD.make_dual(primal, tangent)
    out = Exp.apply(d)
    print(fwAD.unpack_dual(out).tangent.detach())
    try:
        Double.apply(d)
    except RuntimeError as e:
        print(e)
    print(fwAD.unpack_dual(Double.apply(primal)).tangent)
try:
    Exp.apply(primal).sum().backward()
except RuntimeError as e:
    print(e)
print(torch.autograd.gradcheck(Exp.apply, (primal,), check_forward_ad=True,
                               check_backward_ad=False, check_undefined_grad=False,
                               check_batched_grad=False))
print(torch.autograd.gradcheck(Double.apply, (primal,)))
