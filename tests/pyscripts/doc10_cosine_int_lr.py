# nn.CosineSimilarity with its default eps, and an int lr kept an int by a scheduler until a
# factor changes it (get_last_lr() [5], print(opt) 'lr: 5'), as PyTorch prints them.
import torch
import torch.nn as nn
torch.manual_seed(0)
a, b = torch.randn(2, 3), torch.randn(2, 3)
print(nn.CosineSimilarity()(a, b), nn.CosineSimilarity(dim=0)(a, b), nn.PairwiseDistance()(a, b))
p = nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([p], lr=5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
print(sched.get_last_lr(), opt.param_groups[0]["lr"])
print(opt)
opt.step()
sched.step()
print(sched.get_last_lr())
