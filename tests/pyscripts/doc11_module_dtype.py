# nn.Module dtype conversions (model.to(torch.float64), .double(), .float(), .type()) and the
# layers' factory kwargs (nn.Linear(3, 2, dtype=torch.float64)): parameters stay the same
# Parameter objects, floating-point buffers are converted, integer ones are not.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.bn(self.fc1(x))))


torch.manual_seed(0)
model = Net()
w = model.fc1.weight
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # (made before .to())
out = model.to(torch.float64)
print(out is model, w is model.fc1.weight, type(model.fc1.weight).__name__)
print(model.fc1.weight.dtype, model.bn.running_mean.dtype, model.bn.num_batches_tracked.dtype)
for name, t in model.state_dict().items():
    print(name, t.dtype, tuple(t.shape))

x = torch.randn(8, 3, dtype=torch.float64)
y = x.sum(dim=1, keepdim=True) ** 2
for step in range(4):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(step, loss.item(), loss.dtype)
print(model.fc2.weight)
print(model.fc2.bias)
print(model.bn.running_mean)
print(model.bn.running_var)
print(model.bn.num_batches_tracked)
model.eval()
with torch.no_grad():
    print(model(x[:2]))

# the other forms of to()
for m in (nn.Linear(2, 2).to(dtype=torch.float64), nn.Linear(2, 2).to("cpu", torch.float64),
          nn.Linear(2, 2).to(torch.device("cpu"), dtype=torch.float64),
          nn.Linear(2, 2).to(torch.zeros(1, dtype=torch.float64)),
          nn.Linear(2, 2).to("cpu"), nn.Linear(2, 2).to(torch.device("cpu")),
          nn.Linear(2, 2).double().float(), nn.Linear(2, 2).type(torch.float64),
          nn.Linear(2, 2).to(torch.float64, non_blocking=True), nn.Linear(2, 2).cpu()):
    print([p.dtype for p in m.parameters()])

# a parameter keeps its identity and its grad is converted; a changed buffer is a new tensor
lin = nn.Linear(2, 1)
p = lin.weight
lin(torch.ones(3, 2)).sum().backward()
lin.double()
print(p is lin.weight, lin.weight.grad.dtype, lin.weight.grad)
bn = nn.BatchNorm1d(2)
rm = bn.running_mean
bn.to(torch.float64)
print(bn.running_mean is rm, bn.running_mean.dtype, bn.num_batches_tracked.dtype)
rm = bn.running_mean
bn.to(torch.float64)
print(bn.running_mean is rm)
print(bn(torch.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=torch.float64)))
print(bn.running_mean, bn.running_var)
print(nn.BatchNorm2d(2).type(torch.float64).num_batches_tracked)

# layers made in float64: the same draws as PyTorch's
torch.manual_seed(0)
print(nn.Linear(3, 2, dtype=torch.float64).weight)
print(nn.Linear(3, 2, bias=False, device="cpu", dtype=torch.float64).weight.dtype)
conv = nn.Conv2d(1, 2, 2, dtype=torch.float64)
print(conv.weight.dtype, conv.bias)
print(conv(torch.ones(1, 1, 3, 3, dtype=torch.float64)).sum())
emb = nn.Embedding(4, 2, padding_idx=0, dtype=torch.float64)
print(emb.weight)
print(emb(torch.tensor([1, 0, 3])).dtype)
bn2 = nn.BatchNorm2d(3, dtype=torch.float64)
print([(k, v.dtype) for k, v in bn2.state_dict().items()])
print(nn.LayerNorm(2, dtype=torch.float64).weight.dtype, nn.GroupNorm(1, 2, dtype=torch.float64).bias.dtype)
print(nn.PReLU(dtype=torch.float64).weight)
rnn = nn.RNN(2, 3, dtype=torch.float64)
print([p.dtype for p in rnn.parameters()], rnn.weight_hh_l0.sum().item())
cell = nn.GRUCell(2, 2, dtype=torch.float64)
print(cell(torch.ones(1, 2, dtype=torch.float64)))
bil = nn.Bilinear(2, 2, 1, dtype=torch.float64)
print(bil.weight.sum().item())
print(nn.Linear(2, 2, True, None, torch.float64).bias)

# float32 data into a float64 model is PyTorch's error
try:
    nn.Linear(2, 1, dtype=torch.float64)(torch.ones(1, 2))
except RuntimeError as e:
    print("RuntimeError:", e)

# PyTorch's errors
for bad in (lambda: nn.Linear(2, 2).to(torch.int64), lambda: nn.Linear(2, 2).to(dtype=torch.int32),
            lambda: nn.Linear(2, 2).to(torch.ones(1, dtype=torch.int64)),
            lambda: nn.Linear(2, 2).to(torch.float64, foo=1), lambda: nn.Linear(2, 2).to(foo=1),
            lambda: nn.Linear(2, 2).to("cpu", "cpu"), lambda: nn.Linear(2, 2).to(torch.float64, copy=True),
            lambda: nn.Linear(2, 2).to(1, 2, 3, 4, 5), lambda: nn.Linear(2, 2).type(torch.int64),
            lambda: nn.Linear(2, 2).double(torch.float64),
            lambda: nn.Linear(2, 2, dtype=torch.int64), lambda: nn.ReLU(dtype=torch.float64),
            lambda: nn.Linear(2, 2, dtype="float64")):
    try:
        bad()
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__ + ":", e)
