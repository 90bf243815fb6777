# torch.int32/int16/int8/uint8 (the dtypes _tensor_docs.py's examples use), x.view(dtype)
import torch
torch.manual_seed(0)
x = torch.tensor([1, 2, 3], dtype=torch.int32)
print(x, x.dtype, x + 1, x * 2.5, x + torch.tensor([1, 2, 3]), x.float(), x.sum(), x.element_size(), torch.int32)
print(torch.ones(2, dtype=torch.int8), torch.zeros(2, dtype=torch.uint8) + 255, torch.tensor([], dtype=torch.uint8).element_size(), torch.ones(2, dtype=torch.int16))
tensor = torch.tensor((), dtype=torch.int32)
print(tensor.new_ones((2, 3)))
tensor = torch.ones((2,), dtype=torch.int8)
data = [[0, 1], [2, 3]]
print(tensor.new_tensor(data))
print(x.int().dtype, x.to(torch.int64).dtype, x.to(torch.float64), x / 2, x // 2, torch.arange(3, dtype=torch.int32))
y = torch.randn(4, 4)
print(y.view(torch.int32).dtype)
print(torch.tensor([1, 2], dtype=torch.int32) == torch.tensor([1, 3]), int(3.7), float(2))
x = torch.randn(4, 4)
print(x)
print(x.dtype)
y = x.view(torch.int32)
print(y)
y[0, 0] = 1000000000
print(x)
print(x.view(torch.uint8).size(), x.view(torch.int16).shape, x.view(torch.float64).shape, x.view(-1, 8).shape, x.view(16).shape)
try:
    torch.randn(3).view(torch.float64)
except RuntimeError as e:
    print(e)
