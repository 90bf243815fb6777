# _tensor_docs.py's scatter_ examples that ddx has (reduce= is one clear error, left out)
import torch
src = torch.arange(1, 11).reshape((2, 5))
print(src)
index = torch.tensor([[0, 1, 2, 0]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src))
index = torch.tensor([[0, 1, 2], [0, 1, 4]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_(1, index, src))
index = torch.tensor([[0, 1]])
value = 2
print(torch.zeros(3, 5).scatter_(0, index, value))
