# Custom Functions checked as PyTorch's engine checks them: the number of gradients backward
# returns, their shapes, save_for_backward of a non-tensor; a None gradient leaves .grad None.
import torch

class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g, g

x = torch.ones(2, requires_grad=True)
try:
    Bad.apply(x).sum().backward()
except RuntimeError as e:
    print(e)

class NoneGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return None

y = torch.ones(2, requires_grad=True)
NoneGrad.apply(y).sum().backward()
print(y.grad)

class Saver(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(3)
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g
try:
    Saver.apply(y)
except TypeError as e:
    print(e)

class Shape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()
    @staticmethod
    def backward(ctx, g):
        return torch.ones(3)
try:
    Shape.apply(y).backward()
except RuntimeError as e:
    print(e)
z = torch.ones(2, requires_grad=True)
