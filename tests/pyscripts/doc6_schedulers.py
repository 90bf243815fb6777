import torch
import torch.nn as nn
torch.manual_seed(0)
# torch/optim/lr_scheduler.py's CosineAnnealingWarmRestarts, CyclicLR and OneCycleLR examples,
# with a model and a loop in place of the data loader
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
y = torch.randn(4, 1)
def train_batch(*args):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    g = optimizer.param_groups[0]
    print('lr', g['lr'], 'momentum', g.get('momentum'), 'betas', g.get('betas'))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
    optimizer, T_0=20
)
for epoch in range(45):
    train_batch()
    scheduler.step()
print(scheduler.get_last_lr(), scheduler.last_epoch, scheduler.T_cur, scheduler.T_i)
scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 5, T_mult=2, eta_min=0.001)
for epoch in range(20):
    scheduler.step()
    print(scheduler.get_last_lr())
scheduler.step(26)
print(scheduler.get_last_lr())
scheduler.step(3.5)
print(scheduler.get_last_lr())
scheduler.step()
print(scheduler.get_last_lr())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CyclicLR(
    optimizer,
    base_lr=0.01,
    max_lr=0.1,
    step_size_up=10,
)
print(optimizer.param_groups[0]['lr'], optimizer.param_groups[0]['momentum'])
print(sorted(optimizer.param_groups[0].keys()))
for epoch in range(3):
    for batch in range(12):
        train_batch()
        scheduler.step()
for mode in ['triangular2', 'exp_range']:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, 0.001, 0.1, step_size_up=3,
                                                  step_size_down=5, mode=mode, gamma=0.9)
    for i in range(20):
        scheduler.step()
        print(mode, scheduler.get_last_lr(), optimizer.param_groups[0]['momentum'])
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, 0.001, 0.1, step_size_up=4,
                                              scale_fn=lambda x: 0.5 ** x)
for i in range(10):
    train_batch()
    scheduler.step()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.CyclicLR(optimizer, 0.001, 0.1, step_size_up=4,
                                              cycle_momentum=False)
for i in range(6):
    train_batch()
    scheduler.step()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.01, steps_per_epoch=4, epochs=10
)
for epoch in range(10):
    for batch in range(4):
        train_batch()
        scheduler.step()
print(model.weight, model.bias)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.05], total_steps=17,
                                                anneal_strategy='linear', three_phase=True)
for i in range(17):
    train_batch()
    scheduler.step()
print(optimizer.param_groups[0]['initial_lr'], optimizer.param_groups[0]['max_lr'],
      optimizer.param_groups[0]['min_lr'])
try:
    scheduler.step()
except ValueError as e:
    print('ValueError:', e)
try:
    torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1)
except ValueError as e:
    print('ValueError:', e)
try:
    torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=0)
except ValueError as e:
    print('ValueError:', e)
