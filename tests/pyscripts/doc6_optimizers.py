import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(16, 5)
y = torch.randn(16, 2)
def run(make, steps=25):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = make(model.parameters())
    for i in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    print(type(opt).__name__, loss.item(), model[0].weight[0].tolist(), model[2].bias.tolist())
    return opt
print(run(lambda p: torch.optim.AdamW(p, lr=0.01)))
run(lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1, amsgrad=True))
run(lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True))
print(run(lambda p: torch.optim.RMSprop(p)))
run(lambda p: torch.optim.RMSprop(p, lr=0.005, momentum=0.9, centered=True, weight_decay=0.01))
run(lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5))
print(run(lambda p: torch.optim.Adagrad(p, lr=0.1)))
run(lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1))
