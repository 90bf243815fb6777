# nn.Sequential's indexing (seq[0], seq[-1], seq[0:2]), len and iteration; F.linear; state_dict() as PyTorch's OrderedDict
import torch
import torch.nn as nn
import torch.nn.functional as F
_ = torch.manual_seed(0)
seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
print(seq[0])
print(len(seq))
print(seq[-1])
print(seq[0].weight.shape)
x = torch.randn(4, 2)
print(F.linear(x, seq[0].weight, seq[0].bias))
print(F.linear(x, seq[0].weight))
print(seq.state_dict())
lin = nn.Linear(2, 2)
print(lin.state_dict())
print(list(lin.state_dict().keys()))
for m in seq:
    print(m)
print(seq[0:2])
print(len(seq[1:]))
try:
    seq[5]
except IndexError as e:
    print(e)
sd = seq.state_dict()
print(sd['2.bias'], len(sd))
print(seq(x))
