# torch/nn/modules/module.py's examples: buffers, state_dict, load_state_dict, parameters' types
import torch
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.register_buffer('running_mean', torch.zeros(2))
    def forward(self, x):
        return self.fc(x) - self.running_mean
net = Net()
print(net.running_mean)
for buf in net.buffers():
    print(type(buf), buf.size())
for name, buf in net.named_buffers():
    print(name, buf.size())
sd = net.state_dict()
print(list(sd.keys()))
net2 = Net()
print(net2.load_state_dict(sd))
print(torch.equal(net2.fc.weight, net.fc.weight))
for param in net.parameters():
    print(type(param), param.size())
net.requires_grad_(False)
print([p.requires_grad for p in net.parameters()])
print(net.training, net.eval().training, net.train().training)
print(net(torch.ones(1, 2)))
class Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('count', torch.tensor(0))
        self.register_buffer('scratch', torch.ones(3), persistent=False)
        self.inner = Net()
print(list(Stats().state_dict().keys()))
print([name for name, _ in Stats().named_buffers()])
print(Stats().state_dict())
s = Stats()
try:
    s.load_state_dict({'count': torch.tensor(3)})
except RuntimeError as e:
    print(e)
print(s.load_state_dict({'count': torch.tensor(3)}, strict=False))
print(s.count, s.inner.fc.bias)
try:
    s.load_state_dict({'count': torch.tensor(1), 'inner.running_mean': torch.ones(2), 'inner.fc.weight': torch.ones(3, 2), 'inner.fc.bias': torch.ones(2), 'extra': torch.ones(1)})
except RuntimeError as e:
    print(e)
r = s.load_state_dict({'count': torch.tensor(5), 'inner.running_mean': torch.ones(2), 'inner.fc.weight': torch.ones(2, 2), 'inner.fc.bias': torch.ones(2), 'extra': torch.ones(1)}, strict=False)
print(r, r.missing_keys, r.unexpected_keys)
print(s.inner(torch.ones(1, 2)), s.count)
l = nn.Linear(2, 2)
net = nn.Sequential(l, l)
for idx, m in enumerate(net.modules()):
    print(idx, '->', m)
for idx, m in enumerate(net.named_modules()):
    print(idx, '->', m)
print(net.state_dict().keys())
print(nn.Linear(2, 3).get_parameter('bias').shape)
