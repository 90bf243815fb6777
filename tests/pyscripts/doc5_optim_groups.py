import torch
import torch.nn as nn
# torch/optim/optimizer.py's per-parameter options: a list of dicts, each a param group
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
optimizer = torch.optim.SGD([
    {'params': model[0].parameters()},
    {'params': model[2].parameters(), 'lr': 1e-3}
], lr=1e-2, momentum=0.9)
print(optimizer)
print(len(optimizer.param_groups), optimizer.param_groups[1]['lr'], optimizer.param_groups[0]['momentum'])
x = torch.randn(5, 2)
for step in range(3):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
print(model[0].weight, model[2].bias)
extra = torch.zeros(2, requires_grad=True)
optimizer.add_param_group({'params': extra, 'lr': 0.5, 'nesterov': True})
print(optimizer)
(extra * torch.tensor([1.0, -2.0])).sum().backward()
optimizer.step()
print(extra)
try:
    optimizer.add_param_group({'params': [extra]})
except ValueError as e:
    print("ValueError:", e)
adam = torch.optim.Adam([{'params': [model[0].weight], 'weight_decay': 0.1}, {'params': [model[0].bias]}], lr=0.01, betas=(0.8, 0.9))
model(x).sum().backward()
adam.step()
print(adam)
print(model[0].weight, model[0].bias)
sched = torch.optim.lr_scheduler.StepLR(adam, step_size=2, gamma=0.5)
for epoch in range(5):
    adam.step()
    sched.step()
    print(epoch, sched.get_last_lr(), [g['lr'] for g in adam.param_groups])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, 'min', factor=0.5, patience=2)
for epoch, metric in enumerate([1.0, 0.9, 0.95, 0.92, 0.91, 0.93, 0.8, 0.85, 0.86, 0.87, 0.88]):
    plateau.step(metric)
    print(epoch, opt.param_groups[0]['lr'], plateau.get_last_lr())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3, eta_min=0.01)
lin = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, end_factor=1.0, total_iters=4)
for epoch in range(8):
    opt.step()
    cos.step()
    lin.step()
    print(epoch, opt.param_groups[0]['lr'])
