# nn.Module forward hooks: register_forward_hook (saving activations, replacing the output) and
# register_forward_pre_hook (replacing the args), on built-in and user modules, removable.
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
acts = {}
def save(name):
    def hook(module, args, output):
        acts[name] = output.detach()
    return hook
h0 = model[0].register_forward_hook(save("fc1"))
h2 = model[2].register_forward_hook(save("fc2"))
out = model(torch.ones(4, 3))
print(acts["fc1"], acts["fc2"].shape, out.shape)
def double_input(module, args):
    return (args[0] * 2,)
hp = model[0].register_forward_pre_hook(double_input)
print(model(torch.ones(1, 3)))
def scale_out(module, args, output):
    return output * 10
hs = model.register_forward_hook(scale_out)
print(model(torch.ones(1, 3)))
for h in (h0, h2, hp, hs):
    h.remove()
print(model(torch.ones(1, 3)))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x).relu()
net = Net()
seen = []
net.register_forward_hook(lambda m, a, o: seen.append((type(m).__name__, tuple(o.shape))))
net.fc.register_forward_pre_hook(lambda m, a: seen.append(("pre", len(a))))
net(torch.ones(3, 2))
print(seen)
