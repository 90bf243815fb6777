# Grad-mode decorators as PyTorch takes them: @torch.no_grad and @torch.inference_mode without
# parentheses, @torch.enable_grad, @torch.set_grad_enabled(False) (which puts the mode back
# once it has decorated).
import torch
x = torch.ones(2, requires_grad=True)

@torch.no_grad
def f(a):
    return a * 2

@torch.enable_grad
def g(a):
    return a * 3

@torch.inference_mode
def h(a):
    return a * 4

@torch.set_grad_enabled(False)
def k(a):
    return a * 5

@torch.no_grad()
def f2(a):
    return a * 2

print(f(x).requires_grad, f2(x).requires_grad, h(x).requires_grad, k(x).requires_grad)
with torch.no_grad():
    print(g(x).requires_grad)
print(torch.is_grad_enabled())
