# Tensor.random_ as the loss examples use it, and its other forms
import torch
torch.manual_seed(0)
print(torch.empty(3).random_(2), torch.empty(3, dtype=torch.long).random_(5))
print(torch.empty(2).random_(), torch.empty(2, dtype=torch.double).random_(),
      torch.empty(2, dtype=torch.long).random_())
print(torch.empty(2, 3).random_(-4, 9), torch.zeros(4, dtype=torch.long).random_(3, to=7),
      torch.empty(5, dtype=torch.double).random_(to=2**40))
x = torch.empty(3).random_(10)
print(x, x.random_(1, 3) is x, x)
print(torch.rand(2))
w = torch.ones(2, requires_grad=True)
try:
    w.random_(3)
except RuntimeError as e:
    print(e)
