# In-place tensor methods and item assignment, as PyTorch does them (ddx run prints what
# python with torch prints).
import torch
import torch.nn.functional as F

torch.manual_seed(0)
d = {}
d["a"] = 1
d["a"] += 1
names = ["x", "y"]
names[0] = "w"
names[1:] = ["u", "v"]
print(d, names)

x = torch.zeros(2, 3)
x[0, 1] = 2.5
x[1] = torch.tensor([1., 2., 3.])
x[:, 2] = 7
x[x > 2] = -1
print(x)
n = torch.arange(6)
n[n % 2 == 0] = 0
n[1] = 9.9  # cast to the tensor's dtype
print(n)
for bad in ("x[5] = 1", "x[:1] = torch.ones(4)", "x[x > 0] = torch.ones(4)"):
    try:
        if bad == "x[5] = 1":
            x[5] = 1
        elif bad == "x[:1] = torch.ones(4)":
            x[:1] = torch.ones(4)
        else:
            x[x > 0] = torch.ones(4)
    except (IndexError, RuntimeError) as e:
        print(e)

w = torch.ones(3, requires_grad=True)
try:
    w[0] = 2.
except RuntimeError as e:
    print(e)
try:
    w[w > 0] = 2.
except RuntimeError as e:
    print(e)
try:
    w.add_(1)
except RuntimeError as e:
    print(e)
with torch.no_grad():
    w[1] = 5
    w.mul_(2).add_(torch.ones(3), alpha=-0.5)
    w.clamp_(max=4)
print(w)

q = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
v = q * 2
alias = v
v.add_(1)
print(v.grad_fn.name(), alias.grad_fn.name(), v is alias)
v.mul_(3).sub_(1, alpha=2)
torch.sigmoid_(v)
print(v)
v.sum().backward()
print(q.grad)

t = torch.tensor(1., requires_grad=True).sin()
t.cos_()
t.register_hook(lambda g: print("hook", g))
t.backward()
print(t)

g = torch.full((2, 2), 3.)
g.sub_(torch.ones(2), alpha=2).div_(4).pow_(2)
g.fill_(1.5)
g.copy_(torch.tensor([[1., 2.], [3., 4.]]))
g.relu_()
print(g, g.neg_().abs_())
i = torch.zeros(2, dtype=torch.long)
try:
    i.add_(0.5)
except RuntimeError as e:
    print(e)
i.copy_(torch.tensor([1.7, -2.7]))
print(i)
h = torch.randn(4)
print(F.relu(h), h.clamp_(min=0), h)
e = torch.zeros(3)
e[0].add_(5)
e[1].fill_(2)
e[2].copy_(torch.tensor(7.))
m = torch.ones(2, 2)
m[1][0].sub_(4)
m[0][1].zero_()
print(e, m)
