# Products take one dtype, as PyTorch's: F.linear / nn.Linear of a float64 or int64 input and a
# float32 weight fail with PyTorch's words, by path (addmm, matmul).
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
for x, w in [(torch.ones(1, 2, dtype=torch.float64), torch.ones(3, 2)), (torch.ones(2, dtype=torch.float64), torch.ones(3, 2)), (torch.ones(1, 2, dtype=torch.long), torch.ones(3, 2)), (torch.ones(4, 1, 2, dtype=torch.float64), torch.ones(3, 2))]:
    for b in (None, torch.ones(3)):
        try:
            F.linear(x, w, b)
        except RuntimeError as e:
            print(e)
try:
    nn.Linear(2, 1)(torch.tensor([[1., 2.]], dtype=torch.float64))
except RuntimeError as e:
    print(e)
try:
    torch.ones(2, 2, dtype=torch.long) @ torch.ones(2, 2)
except RuntimeError as e:
    print(e)
