# torch/nn/modules/container.py's examples (Sequential with an OrderedDict, ModuleList, ModuleDict,
# ParameterList, ParameterDict), with their results printed
import torch
import torch.nn as nn
from collections import OrderedDict
torch.manual_seed(0)
model = nn.Sequential(OrderedDict([
          ('fc1', nn.Linear(2, 3)),
          ('relu1', nn.ReLU()),
          ('fc2', nn.Linear(3, 1)),
        ]))
print(model)
print(model.fc1.weight.shape)
class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(3, 3) for i in range(3)])

    def forward(self, x):
        for i, l in enumerate(self.linears):
            x = self.linears[i // 2](x) + l(x)
        return x
m = MyModule()
print(m)
print(m(torch.ones(2, 3)))
print(len(m.linears), len(list(m.parameters())))
class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.choices = nn.ModuleDict({
                'lin': nn.Linear(2, 2),
                'tanh': nn.Tanh()
        })
        self.activations = nn.ModuleDict([
                ['lrelu', nn.LeakyReLU()],
                ['prelu', nn.ReLU()]
        ])

    def forward(self, x, choice, act):
        x = self.choices[choice](x)
        x = self.activations[act](x)
        return x
m = MyModule()
print(m)
print(m(torch.ones(1, 2), 'lin', 'lrelu'))
class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.params = nn.ParameterList([nn.Parameter(torch.randn(2, 2)) for i in range(3)])

    def forward(self, x):
        for i, p in enumerate(self.params):
            x = self.params[i // 2].mm(x) + p.mm(x)
        return x
m = MyModule()
print(m(torch.ones(2, 1)))
print(len(list(m.parameters())))
class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.params = nn.ParameterDict({
                'left': nn.Parameter(torch.randn(5, 10)),
                'right': nn.Parameter(torch.randn(5, 10))
        })

    def forward(self, x, choice):
        x = self.params[choice].mm(x)
        return x
m = MyModule()
print(m(torch.ones(10, 1), 'left'))
print([n for n, p in m.named_parameters()])
n = nn.Sequential(nn.Linear(1, 2), nn.Linear(2, 3))
print(n.append(nn.Linear(3, 4)))
n = nn.Sequential(nn.Linear(1, 2), nn.Linear(2, 3))
print(n.insert(0, nn.Linear(3, 4)))
n = nn.Sequential(nn.Linear(1, 2), nn.Linear(2, 3))
other = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 5))
print(n.extend(other))
print(len(n), n[-1], n(torch.ones(1, 1)).shape)
named = nn.Sequential(OrderedDict([('a', nn.Linear(2, 2)), ('b', nn.ReLU())]))
named.append(nn.Tanh())
print(named, named.a is named[0])
layers = nn.ModuleList()
layers.append(nn.Linear(2, 2))
layers.extend([nn.ReLU(), nn.ReLU()])
layers.insert(1, nn.Tanh())
print(layers, len(layers), layers[1:3], type(layers[-1]))
for name, p in nn.ModuleList([nn.Linear(1, 1), nn.Linear(1, 2)]).named_parameters():
    print(name, p.shape)
d = nn.ModuleDict({'x': nn.ReLU()})
d['y'] = nn.Tanh() if False else nn.Sigmoid()
d.update([('z', nn.Linear(1, 1))])
print(d, 'x' in d, 'w' in d, list(d.keys()), len(d))
for key in d:
    print(key, type(d[key]))
pl = nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(1, 3))])
print(pl, [type(p) for p in pl])
print(type(nn.Linear(1, 1)), nn.Linear, nn.ReLU, nn.MSELoss, nn.Sequential, nn.Parameter)
print(type(nn.Linear(1, 1)) is nn.Linear, type(nn.ReLU()) == nn.Tanh)

@torch.no_grad()
def init_weights(m):
    print(m)
    if type(m) is nn.Linear:
        m.weight.fill_(1.0)
        print(m.weight)
net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
print(net.apply(init_weights))
print(named[1:], net[:1].append(nn.ReLU()), len(net))
