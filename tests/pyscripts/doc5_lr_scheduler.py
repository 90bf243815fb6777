import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
# torch/optim/lr_scheduler.py's examples, verbatim; train() prints the lrs
from torch.optim.lr_scheduler import LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR, PolynomialLR, CosineAnnealingLR, ChainedScheduler, SequentialLR, ReduceLROnPlateau
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
def train(*args):
    print('lr', [g['lr'] for g in optimizer.param_groups])
def validate(*args):
    return 1.0

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer has two groups.
num_epochs = 100
lambda1 = lambda epoch: epoch // 30
lambda2 = lambda epoch: 0.95**epoch
scheduler = LambdaLR(optimizer, lr_lambda=[lambda1, lambda2])
for epoch in range(num_epochs):
    train(...)
    validate(...)
    scheduler.step()

# Alternatively, you can use a single lambda function for all groups.
scheduler = LambdaLR(opt, lr_lambda=lambda epoch: epoch // 30)
for epoch in range(num_epochs):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
lmbda = lambda epoch: 0.95
scheduler = MultiplicativeLR(optimizer, lr_lambda=lmbda)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.05     if epoch < 30
# lr = 0.005    if 30 <= epoch < 60
# lr = 0.0005   if 60 <= epoch < 90
# ...
scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.05     if epoch < 30
# lr = 0.005    if 30 <= epoch < 80
# lr = 0.0005   if epoch >= 80
scheduler = MultiStepLR(optimizer, milestones=[30, 80], gamma=0.1)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.025   if epoch == 0
# lr = 0.025   if epoch == 1
# lr = 0.025   if epoch == 2
# lr = 0.025   if epoch == 3
# ...
# lr = 0.05    if epoch >= 40
scheduler = ConstantLR(optimizer, factor=0.5, total_iters=40)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.003687  if epoch == 0
# lr = 0.004875  if epoch == 1
# lr = 0.006062  if epoch == 2
# lr = 0.00725   if epoch == 3
# ...
# lr = 0.05      if epoch >= 40
scheduler = LinearLR(optimizer, start_factor=0.05, total_iters=40)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
scheduler = ExponentialLR(optimizer, gamma=0.95)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.005     if epoch == 0
# lr = 0.005     if epoch == 1
# lr = 0.005     if epoch == 2
# ...
# lr = 0.05      if epoch == 20
# lr = 0.045     if epoch == 21
# lr = 0.0405    if epoch == 22
scheduler1 = ConstantLR(optimizer, factor=0.1, total_iters=20)
scheduler2 = ExponentialLR(optimizer, gamma=0.9)
scheduler = SequentialLR(
    optimizer,
    schedulers=[scheduler1, scheduler2],
    milestones=[20],
)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP("undefined vars")
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.0490   if epoch == 0
# lr = 0.0481   if epoch == 1
# lr = 0.0472   if epoch == 2
# ...
# lr = 0.0      if epoch >= 50
scheduler = PolynomialLR(optimizer, total_iters=50, power=0.9)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
num_epochs = 100
scheduler = CosineAnnealingLR(optimizer, T_max=num_epochs)
for epoch in range(num_epochs):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
# Assuming optimizer uses lr = 0.05 for all groups
# lr = 0.05      if epoch == 0
# lr = 0.0450    if epoch == 1
# lr = 0.0405    if epoch == 2
# ...
# lr = 0.00675   if epoch == 19
# lr = 0.06078   if epoch == 20
# lr = 0.05470   if epoch == 21
scheduler1 = ConstantLR(optimizer, factor=0.1, total_iters=20)
scheduler2 = ExponentialLR(optimizer, gamma=0.9)
scheduler = ChainedScheduler([scheduler1, scheduler2], optimizer=optimizer)
for epoch in range(100):
    train(...)
    validate(...)
    scheduler.step()

optimizer = torch.optim.SGD([{'params': model[0].parameters()}, {'params': model[2].parameters()}], lr=0.05)
opt = optimizer
# xdoctest: +SKIP
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = ReduceLROnPlateau(optimizer, "min")
for epoch in range(10):
    train(...)
    val_loss = validate(...)
# Note that step should be called after validate()
    scheduler.step(val_loss)
