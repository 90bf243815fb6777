# _tensor_docs.py's storage_offset example, and views' offsets
import torch
x = torch.tensor([1, 2, 3, 4, 5])
print(x.storage_offset())
print(x[3:].storage_offset())
y = torch.randn(3, 4)
print(y.storage_offset(), y[1].storage_offset(), y[1:, 2:].storage_offset(), y.t().storage_offset(), y.view(12)[5:].storage_offset(), (y * 2).storage_offset())
z = torch.ones(4, requires_grad=True)
print(z[2:].storage_offset(), z.detach()[3:].storage_offset())
print(torch.arange(10)[::2][1:].storage_offset(), torch.linspace(0, 1, 5)[-2:].storage_offset())
