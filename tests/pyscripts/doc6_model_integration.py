import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 6, padding_idx=0)
        self.norm = nn.LayerNorm(6)
        self.act = nn.PReLU()
        self.drop = nn.Dropout1d(0.25)
        self.head = nn.Linear(6, 4)

    def forward(self, idx):
        h = self.emb(idx)
        h = self.act(self.norm(h))
        h = self.drop(h)
        return self.head(h.mean(1))

model = Net()
print(model)
print([name for name, _ in model.named_parameters()])
print(sorted(model.state_dict().keys()))
opt = torch.optim.AdamW(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=20)
idx = torch.randint(0, 12, (8, 5))
y = torch.randint(0, 4, (8,))
for step in range(20):
    opt.zero_grad()
    loss = F.cross_entropy(model(idx), y)
    loss.backward()
    opt.step()
    sched.step()
    if step % 5 == 0:
        print(step, round(loss.item(), 6), sched.get_last_lr())
model.eval()
with torch.no_grad():
    print(model(idx).argmax(1))
print(model.emb.weight[0], model.act.weight)
seq = nn.Sequential(nn.Linear(3, 6), nn.GroupNorm(2, 6), nn.GLU(), nn.Unflatten(1, (3, 1)),
                    nn.ReplicationPad1d(2), nn.Flatten(), nn.Identity())
print(seq)
out = seq(torch.randn(4, 3))
print(out.shape, out.grad_fn.name())
print(out)
