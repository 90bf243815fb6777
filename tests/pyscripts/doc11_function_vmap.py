# A custom autograd.Function under torch.func (notes "Extending torch.func with
# autograd.Function"): the vmap staticmethod runs once on the whole batch, with info and
# in_dims as PyTorch gives them; PyTorch's errors without setup_context or a vmap rule.
import torch
torch.manual_seed(0)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None

    @staticmethod
    def vmap(info, in_dims, x, k):
        print("rule:", info.batch_size, info.randomness, in_dims, x.shape, k)
        x_bdim, _ = in_dims
        return Scale.apply(x.movedim(x_bdim, 0), k), 0


class NoRule(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Generated(NoRule):
    generate_vmap_rule = True


class OldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class BadRule(NoRule):
    @staticmethod
    def vmap(info, in_dims, x):
        return x * 2


x = torch.randn(3, 2)
print(torch.vmap(lambda v: Scale.apply(v, 3))(x))
print(torch.vmap(lambda v: Scale.apply(v, 3), in_dims=1)(x))
print(torch.vmap(lambda v, w: Scale.apply(v, 2) + w, in_dims=(0, None))(x, torch.ones(2)))
print(torch.vmap(lambda v: Scale.apply(torch.ones(2), 3) + v)(x))
print(torch.vmap(lambda v: Scale.apply(v, 3), randomness="different")(x))
print(torch.vmap(lambda v: Generated.apply(v))(x))
print(torch.func.grad(lambda v: Scale.apply(v, 3).sum())(x))
for f in (lambda v: NoRule.apply(v), lambda v: OldStyle.apply(v), lambda v: BadRule.apply(v)):
    try:
        print(torch.vmap(f)(x))
    except RuntimeError as e:
        print("RuntimeError:", e)
try:
    print(torch.func.grad(lambda v: OldStyle.apply(v).sum())(x))
except RuntimeError as e:
    print("RuntimeError:", e)
print(OldStyle.apply(x))
try:
    print(torch.vmap(lambda v: NoRule.apply(torch.ones(2)))(x))
except RuntimeError as e:
    print("RuntimeError:", e)

w = torch.randn(3, 2, requires_grad=True)
y = torch.vmap(lambda v: Scale.apply(v, 5))(w)
y.sum().backward()
print(type(y.grad_fn).__name__, w.grad)
