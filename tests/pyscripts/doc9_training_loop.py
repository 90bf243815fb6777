# A training loop as the basics tutorials write one (Sequential with Dropout, SGD with momentum, StepLR,
# clip_grad_norm_, train/eval, f-string reports) and Tensor.type(), which their accuracy line uses.
import torch
from torch import nn
torch.manual_seed(0)
X = torch.randn(64, 3)
y = (X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3).unsqueeze(1)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
model.train()
for epoch in range(30):
    for batch, i in enumerate(range(0, 64, 16)):
        xb, yb = X[i:i+16], y[i:i+16]
        pred = model(xb)
        loss = loss_fn(pred, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
    scheduler.step()
    if epoch % 10 == 0:
        loss, current = loss.item(), (batch + 1) * len(xb)
        print(f"loss: {loss:>7f}  [{current:>5d}/{64:>5d}] lr={scheduler.get_last_lr()[0]:.4f} {total:.4f}")
model.eval()
with torch.no_grad():
    test_loss = loss_fn(model(X), y).item()
    correct = (model(X).sign() == y.sign()).type(torch.float).sum().item()
print(f"Test Error: \n Accuracy: {(100*correct/64):>0.1f}%, Avg loss: {test_loss:>8f} \n")
state = model.state_dict()
print(list(state.keys()), state["0.weight"].shape)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
print(model[0].weight.grad.norm())
a = torch.tensor([1.5, -2.0])
print(a.type(), a.type(torch.float64), a.type(torch.int64).type(), a.type('torch.DoubleTensor').dtype)
print((a > 0).type(torch.float).sum().item(), a.type(dtype=torch.long))
w = torch.ones(2, requires_grad=True)
print(w.type(torch.float64))
try:
    a.type('nope')
except ValueError as e:
    print(e)
