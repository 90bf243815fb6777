import torch
torch.manual_seed(0)
x = torch.randn(1000)
y = torch.randn(37, 129, dtype=torch.float64)
for p in [1, 2, 3, float('inf'), 0.5, 0]:
    print(p, torch.norm(x, p=p).item(), torch.linalg.vector_norm(y, ord=p).item(), torch.linalg.vector_norm(y, ord=p, dim=1)[:3].tolist())
print(x.abs().sum().item(), x.norm(1).item())
z = torch.randn(300, 50, requires_grad=True)
for p in [1, 3, 0.5, 1.5, 4, -1]:
    n = torch.linalg.vector_norm(z, ord=p)
    n2 = torch.linalg.vector_norm(z, ord=p, dim=0, keepdim=True)
    n3 = z.norm(p, dim=-1)
    g, = torch.autograd.grad(n + n2.sum() + n3.sum(), z)
    print(p, n.item(), n2[0, :3].tolist(), n3[:3].tolist(), g.sum().item())
big = torch.randn(70000)
print(big.norm(1).item(), big.norm(3).item(), torch.linalg.vector_norm(big.double(), 1.5).item())
w = torch.randn(4, 5, 6, dtype=torch.float64)
print(torch.linalg.vector_norm(w, 3, dim=(0, 1, 2)).item(), torch.linalg.vector_norm(w, 1, dim=(1,))[0].tolist(),
      torch.linalg.vector_norm(w.transpose(0, 2), 1.5).item(), torch.linalg.vector_norm(w, 0.5, dim=0, keepdim=True).shape)
