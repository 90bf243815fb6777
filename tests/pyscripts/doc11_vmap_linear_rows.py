# vmap of F.linear (and nn.Linear) of a mapped input computes what PyTorch's batching rule
# computes: the rows of one matrix product over the batch, bit for bit (a row of a product
# can round otherwise than the product of that row alone); through jacrev too (the
# jacobians tutorial's batch_jacobian0 equals batch_jacobian1 exactly).
import torch
import torch.nn.functional as F
from torch.func import jacrev, vmap
torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


weight, bias, x = torch.randn(33, 31), torch.randn(33), torch.randn(64, 31)
rows = vmap(F.linear, in_dims=(0, None, None))(x, weight, bias)
print(torch.equal(rows, F.linear(x, weight, bias)), rows[5, :4].tolist())
alone = torch.stack([F.linear(x[i], weight, bias) for i in range(64)])
print(torch.equal(alone, F.linear(x, weight, bias)))  # (PyTorch's own gemv rounds otherwise)
b0 = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
b1 = jacrev(lambda w, b, x: predict(w, b, x).sum(0), argnums=2)(weight, bias, x).movedim(1, 0)
print(torch.equal(b0, b1), b0.shape, b0[3, 7, :3].tolist())

layer = torch.nn.Linear(31, 8)  # (nn.Linear's forward is F.linear)
print(torch.equal(vmap(layer)(x), layer(x)), vmap(layer)(x)[:2, :3].tolist())
print(torch.equal(vmap(lambda v: F.linear(v, weight))(x), F.linear(x, weight)))
