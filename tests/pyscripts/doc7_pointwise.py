# PyTorch's _torch_docs.py examples (round 7): addcmul, addcdiv, copysign, fmax/fmin,
# addmv and addr, then their gradients.
import torch
torch.manual_seed(0)
t = torch.randn(1, 3)
t1 = torch.randn(3, 1)
t2 = torch.randn(1, 3)
print(torch.addcmul(t, t1, t2, value=0.1))
print(torch.addcdiv(t, t1, t2, value=0.1))
a = torch.randn(5)
print(torch.copysign(a, 1))
a = torch.randn(4, 4)
b = torch.randn(4)
print(torch.copysign(a, b))
print(torch.copysign(torch.tensor([1.]), torch.tensor([-0.])))
a = torch.tensor([9.7, float('nan'), 3.1, float('nan')])
b = torch.tensor([-2.2, 0.5, float('nan'), float('nan')])
print(torch.fmax(a, b))
print(torch.fmin(a, b))
M = torch.randn(2)
mat = torch.randn(2, 3)
vec = torch.randn(3)
print(torch.addmv(M, mat, vec))
vec1 = torch.arange(1., 4.)
vec2 = torch.arange(1., 3.)
M = torch.zeros(3, 2)
print(torch.addr(M, vec1, vec2))

x = torch.randn(3, 20, requires_grad=True)
y = torch.randn(3, 20, requires_grad=True)
z = torch.randn(20, requires_grad=True)
s = torch.randn(3, requires_grad=True)
outs = [torch.addcmul(x, y, z, value=0.3), torch.addcdiv(x, y, z.exp(), value=-2),
        x.addcmul(y, y), torch.copysign(x, y), torch.copysign(x, -1.0), torch.fmax(x, z),
        torch.fmin(x, y), torch.addmv(s, x, z), torch.addr(x, s, z), x.addr(s, z)]
for out in outs:
    for t in (x, y, z, s):
        t.grad = None
    (out * out).sum().backward()
    print(out.grad_fn.name(), out.sum(), x.grad, y.grad, z.grad, s.grad)
print(torch.addr(x, s, z)[2].tolist())
print(torch.addcmul(x, y, z, value=0.3)[1].tolist())
