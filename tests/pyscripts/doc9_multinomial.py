# Tensor.exponential_ and torch.multinomial (without replacement, or one sample: ATen's
# exponential trick) against Python with PyTorch: the numbers drawn and the generator's state after.
import torch
torch.manual_seed(0)
print(torch.empty(5).exponential_(), torch.empty(3, dtype=torch.float64).exponential_(2.5))
p = torch.softmax(torch.randn(10), 0)
print(torch.multinomial(p, 1), torch.multinomial(p, 4), p.multinomial(3))
P = torch.rand(3, 6)
print(torch.multinomial(P, 2), torch.multinomial(P, 1, replacement=True))
print(torch.rand(2))
for _ in range(3):
    print(torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 1).item(), end=" ")
print()
try:
    torch.multinomial(torch.tensor([0.5, 0.5]), 3)
except RuntimeError as e:
    print(e)
w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    w.exponential_()
print(w)
