# torch.utils.checkpoint: checkpoint (use_reentrant=False: the ops' own nodes; True: one
# CheckpointFunctionBackward node, the parameters inside getting their grads) and
# checkpoint_sequential, as PyTorch prints and differentiates them.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
torch.manual_seed(0)
x = torch.ones(2, requires_grad=True)
f = lambda a: (a * 2).sin()
y = checkpoint(f, x, use_reentrant=False)
print(y)
y2 = checkpoint(f, x, use_reentrant=True)
print(y2, y2.grad_fn.name(), len(y2.grad_fn.next_functions))
y2.sum().backward()
print(x.grad)
lin = nn.Linear(2, 2)
h = torch.ones(1, 2, requires_grad=True) * 3
out = checkpoint(lin, h, use_reentrant=True)
out.sum().backward()
print(out, lin.weight.grad, lin.bias.grad)
m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1), nn.Tanh())
z = checkpoint_sequential(m, 2, torch.ones(1, 2, requires_grad=True), use_reentrant=True)
print(z)
z.sum().backward()
print(m[0].weight.grad)
print(checkpoint_sequential(m, 1, torch.ones(1, 2), use_reentrant=False))
