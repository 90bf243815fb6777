# torch.utils.data's TensorDataset and DataLoader, in order and shuffled (PyTorch's RandomSampler:
# a seed drawn at the first batch, torch.randperm from a generator seeded with it), as "What is
# torch.nn really?" uses them, against Python with PyTorch.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(10, 3)
y = torch.arange(10) % 2
ds = TensorDataset(x, y)
print(len(ds), ds[0], ds[2:4][1])
xb, yb = ds[0:4]
print(xb.shape, yb.shape, ds.tensors[1])
dl = DataLoader(ds, batch_size=4)
print(len(dl), len(DataLoader(ds, batch_size=4, drop_last=True)))
for xb, yb in dl:
    print(xb.shape, yb.tolist())
batch = next(iter(dl))
print(type(batch).__name__, len(batch))
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    for xb, yb in dl:
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(epoch, f"{loss.item():.6f}")
with torch.no_grad():
    losses, nums = zip(*[(loss_fn(model(xb), yb).item(), len(xb)) for xb, yb in dl])
print(nums, [round(v, 4) for v in losses])
try:
    DataLoader(ds, batch_size=0)
except ValueError as e:
    print(e)
try:
    TensorDataset(x, torch.zeros(3))
except Exception as e:
    print(type(e).__name__)
train_dl = DataLoader(ds, batch_size=3, shuffle=True)
for epoch in range(2):
    for xb, yb in train_dl:
        print(epoch, yb.tolist(), f"{xb.sum().item():.5f}")
it = iter(train_dl)  # the order is drawn at the first batch, not when the iterator is made
print(torch.rand(1))
print(next(it)[1], torch.rand(1))
print(next(it)[1], next(it)[1], next(it)[1])
try:
    next(it)
except StopIteration:
    print("StopIteration")
print(type(it).__name__, type(train_dl))
for xb, yb in DataLoader(ds, 4, True, drop_last=True):
    print(yb.shape)
print(torch.randn(2))
