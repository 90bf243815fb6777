# The code cells of the PyTorch tutorial "A Gentle Introduction to torch.autograd"
# (pytorch/tutorials: beginner_source/blitz/autograd_tutorial.py, current edition; BSD-3-Clause,
# Copyright (c) 2017-, PyTorch contributors), verbatim in order, run statement by statement.
# This edition prints "Does `a` require gradients? : ..." (a space before the colon; the
# edition in tests/pyscripts/tutorial_blitz_gentle.py has none).
# Added: torch.manual_seed(0) after the first import, so the random numbers are reproducible.
# Dropped: `from torchvision.models import resnet18, ResNet18_Weights` and the statements on
# the pretrained resnet18 it loads (model, data, labels, prediction, loss, optim.step(), the
# frozen parameters, model.fc, the optimizer): torchvision is another library, and its
# weights are a download.
import torch
torch.manual_seed(0)

import torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)

Q = 3*a**3 - b**2

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

# check if collected gradients are correct
print(9*a**2 == a.grad)
print(-2*b == b.grad)

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients? : {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

from torch import nn, optim
