# forward_ad's dual tensors: make_dual, unpack_dual, the repr with its tangent, the tangent
# through ops (broadcasting, reductions, shapes, matmul, nn layers), in-place ops, the level's
# end, and PyTorch's errors.
import torch
import torch.nn.functional as F
import torch.autograd.forward_ad as fwAD
torch.manual_seed(0)

x = torch.randn(3, 4)
v = torch.randn(3, 4)
W = torch.randn(4, 2)
with fwAD.dual_level() as level:
    print(level)
    d = fwAD.make_dual(x, v)
    print(d[0])
    outs = [d.exp(), d.sin() * d.cos(), d @ W, (d ** 3).sum(), d.mean(0), torch.tanh(d),
            F.relu(d), F.softmax(d, dim=1), d.reshape(2, 6), d.t(), d[1:, 2],
            torch.cat([d, x]), torch.stack([d, d]), d.sum(dim=1, keepdim=True), d.abs(),
            torch.sigmoid(d), d.max(), F.mse_loss(d, x), d / (1 + d * d),
            torch.where(d > 0, d, 2 * d), d.norm(), d.var(), d.std(dim=0),
            torch.log_softmax(d, 1), F.cross_entropy(d, torch.tensor([0, 1, 2])),
            d.clamp(-0.5, 0.5), d.unsqueeze(0).expand(2, 3, 4), d + 1, 2 ** d, d.T @ d]
    for o in outs:
        t = fwAD.unpack_dual(o).tangent
        print(tuple(o.shape), t.dtype, round(t.sum().item(), 3))
    print(fwAD.unpack_dual(d * 2))
    p = fwAD.unpack_dual(d.exp())
    print(p.primal[0], p.tangent[0], len(p), type(p).__name__)
    primal, tangent = p
    print(tangent[1])
    print(fwAD.unpack_dual(x).tangent, fwAD.unpack_dual(d > 0).tangent, fwAD.unpack_dual(d.argmax()).tangent)
    print(fwAD.unpack_dual(d.detach()).tangent)
    s = fwAD.make_dual(torch.tensor(2.0), torch.tensor(3.0))
    print(s, s ** 2, s.exp())
    print(f"{s}", s.item())
    y = torch.zeros(3, 4)
    y.add_(d)
    print(fwAD.unpack_dual(y).tangent[0])
    y.mul_(2)
    print(fwAD.unpack_dual(y).tangent[0])
    e = fwAD.make_dual(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([1.0, 0.5]))
    print(fwAD.unpack_dual(e).tangent.dtype, fwAD.unpack_dual(e.sin()).tangent.dtype,
          fwAD.unpack_dual(e.clone()).tangent.dtype)
    print(e.sin())
    for bad in [lambda: fwAD.make_dual(torch.tensor([1, 2]), torch.tensor([1.0, 0.0])),
                lambda: fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1, 0])),
                lambda: fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.ones(3)),
                lambda: fwAD.make_dual(d, torch.ones(3, 4))]:
        try:
            bad()
        except (RuntimeError, ValueError) as err:
            print(type(err).__name__, err)
print(fwAD.unpack_dual(d).tangent, d[0])
try:
    fwAD.make_dual(x, v)
except RuntimeError as err:
    print(err)
fwAD.enter_dual_level()
a = fwAD.make_dual(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 1.0]))
print(torch.log(a))
fwAD.exit_dual_level()
print(fwAD.unpack_dual(a))
