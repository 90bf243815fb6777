# torch.einsum of two operands against Python with PyTorch: ATen's permute, sum and bmm chain for
# matrix products, batched attention scores, dot and outer products and full contractions, values
# and gradients to the last digit.
import torch
torch.manual_seed(0)
torch.set_printoptions(precision=10)
a = torch.randn(37, 53, requires_grad=True)
b = torch.randn(53, 29, requires_grad=True)
for eq, x, y in [("ij,jk->ik", a, b), ("ij,kj->ik", a, torch.randn(11, 53)), ("ij,j->i", a, torch.randn(53)), ("i,i->", torch.randn(9), torch.randn(9)),
                 ("i,j->ij", torch.randn(4), torch.randn(5)), ("bij,bjk->bik", torch.randn(3, 4, 6), torch.randn(3, 6, 5)),
                 ("bhqd,bhkd->bhqk", torch.randn(2, 3, 7, 8), torch.randn(2, 3, 9, 8)), ("ij,ij->i", a, a * 2), ("ij,jk->", a, b), ("ij,jk->ki", a, b),
                 ("bij,jk->bik", torch.randn(4, 5, 53), b), ("ik,ij->kj", torch.randn(6, 3), torch.randn(6, 4))]:
    x = x.detach().requires_grad_(); y = y.detach().requires_grad_()
    z = torch.einsum(eq, x, y)
    g = torch.randn(z.shape)
    gx, gy = torch.autograd.grad(z, (x, y), g)
    print(eq, z.grad_fn.name(), z.sum().item(), z.flatten()[:2].tolist(), gx.contiguous().sum().item(), gx.flatten().tolist()[::7], gy.contiguous().sum().item(), gy.flatten().tolist()[::5])

# one operand: traces, diagonals, transposes and sums, float32 and float64; capitals
a = torch.randn(6, 6, requires_grad=True)
b = torch.randn(3, 5, 7, dtype=torch.float64, requires_grad=True)
c = torch.randn(4, 3, 4, requires_grad=True)
for eq, x in [("ii", a), ("ii->i", a), ("ij->ji", a), ("ij->", a), ("ij->j", a), ("ij->i", a),
              ("ijk->kj", b), ("ijk->", b), ("...ij->...ji", b), ("ijk", b), ("ijk->ik", b),
              ("iji->j", c), ("iji->ij", c), ("Ijk->kI", b)]:
    y = torch.einsum(eq, x)
    g, = torch.autograd.grad((y * y).sum(), x)
    print(eq, tuple(y.shape), y.grad_fn.name(), y.sum().item(), g.sum().item())
print(torch.einsum('Ij,jK->IK', torch.randn(2, 3), torch.randn(3, 2)))
print(torch.einsum('i,i', torch.arange(4.), torch.arange(4.)), torch.einsum('ij,jk', torch.ones(2, 3), torch.ones(3, 2)))
print(torch.einsum('b...i,b...i->b...', torch.randn(2, 3, 4), torch.randn(2, 3, 4)))

# three operands and more: opt_einsum's path where PyTorch has it, the .grad of backward()
a, b, c = torch.randn(3, 4, requires_grad=True), torch.randn(4, 5, requires_grad=True), torch.randn(5, 6, requires_grad=True)
d = torch.randn(6, 2, requires_grad=True)
for eq, ops in [('ij,jk,kl->il', (a, b, c)), ('ij,jk,kl,lm->im', (a, b, c, d)), ('ij,jk,kl', (a, b, c)),
                ('ij,ik,il->jkl', (a, torch.randn(3, 2, requires_grad=True), torch.randn(3, 3, requires_grad=True)))]:
    for t in ops:
        t.grad = None
    y = torch.einsum(eq, *ops)
    (y * y).sum().backward()
    print(eq, tuple(y.shape), y.sum().item(), [t.grad.sum().item() for t in ops], [t.grad.stride() for t in ops])
x = torch.randn(2, 5); A = torch.randn(3, 5, 4); z = torch.randn(2, 4)
print(torch.einsum('bn,anm,bm->ba', x, A, z))
print(torch.einsum('bij,bjk,bk->bi', torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(2, 5)))
w = torch.randn(4, 3, requires_grad=True)
(w.t() @ torch.randn(4, 2)).sum().backward()
print(w.grad.stride(), w.grad.sum().item())
