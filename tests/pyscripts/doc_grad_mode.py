# torch/autograd/grad_mode.py's examples (no_grad, enable_grad, set_grad_enabled,
# inference_mode: contexts, decorators, torch.is_grad_enabled), x._version, numpy() under no_grad
import torch
torch.manual_seed(0)
x = torch.tensor([1.], requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad)
@torch.no_grad()
def doubler(x):
    return x * 2
z = doubler(x)
print(z.requires_grad)
# factory function exception
with torch.no_grad():
    a = torch.nn.Parameter(torch.rand(10))
print(a.requires_grad)

with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
print(y.requires_grad)
y.backward()
print(x.grad)
@torch.enable_grad()
def tripler(x):
    return x * 3
with torch.no_grad():
    z = tripler(x)
print(z.requires_grad)

is_train = False
with torch.set_grad_enabled(is_train):
    y = x * 2
print(y.requires_grad, torch.is_grad_enabled())
_ = torch.set_grad_enabled(True)
y = x * 2
print(y.requires_grad)
_ = torch.set_grad_enabled(False)
y = x * 2
print(y.requires_grad, torch.is_grad_enabled())
_ = torch.set_grad_enabled(True)

x = torch.ones(1, 2, 3, requires_grad=True)
with torch.inference_mode():
    y = x * x
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print(y.requires_grad, torch.is_inference_mode_enabled(), torch.is_grad_enabled())
@torch.inference_mode()
def func(x):
    return x * x
out = func(x)
print(out.requires_grad)
with torch.inference_mode(False):
    print(torch.is_inference_mode_enabled(), (x * 2).requires_grad)
with torch.inference_mode(mode=True):
    with torch.inference_mode(False):
        print(torch.is_inference_mode_enabled())
    print(torch.is_inference_mode_enabled())

# version counters and numpy() where grad mode is off
w = torch.ones(2, requires_grad=True)
v = w * 2
print(w._version, v._version)
with torch.no_grad():
    w.add_(1)
    w.mul_(3)
    print(w.numpy(), w._version)
v.add_(1)
v[0] = 5
print(v._version, w.numpy(force=True), w.detach().numpy())
try:
    w.numpy()
except RuntimeError as e:
    print(e)
