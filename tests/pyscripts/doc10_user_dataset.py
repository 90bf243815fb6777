# DataLoader over the user's own datasets (a Dataset subclass with __len__/__getitem__, a list
# of pairs, a list of ints): PyTorch's order, shuffled or not, and default_collate's batches.
import torch
from torch.utils.data import Dataset, DataLoader
torch.manual_seed(0)

class Squares(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i], self.x[i] ** 2

ds = Squares(5)
print(len(ds), ds[2])
for xb, yb in DataLoader(ds, batch_size=2):
    print(xb, yb)
for xb, yb in DataLoader(ds, batch_size=2, shuffle=True):
    print(xb, yb)

class Dicts(Dataset):
    def __len__(self):
        return 3
    def __getitem__(self, i):
        return {"a": i, "b": float(i) / 2, "name": "s" + str(i), "v": torch.ones(2) * i}
for batch in DataLoader(Dicts(), batch_size=2):
    print(batch)
pairs = [(torch.tensor([1., 2.]), 0), (torch.tensor([3., 4.]), 1), (torch.tensor([5., 6.]), 1)]
loader = DataLoader(pairs, batch_size=2, shuffle=True)
print(len(loader))
for x, y in loader:
    print(x, y)
print(next(iter(DataLoader(list(range(5)), batch_size=3))))
print(isinstance(ds, Dataset), Dataset)
