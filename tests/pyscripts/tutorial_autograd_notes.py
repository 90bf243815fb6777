# The runnable code of PyTorch's "Autograd mechanics" notes (pytorch/pytorch:
# docs/source/notes/autograd.rst; BSD-3-Clause, Copyright (c) 2016- Facebook, Inc and PyTorch
# contributors), verbatim in order: "Excluding subgraphs" (a doctest: its `>>> a.requires_grad`
# echoes are wrapped in print(...)), "Saved tensors", and the multithreading example (its
# threads run one after another in ddx: see the README).
# Added: torch.manual_seed(0) after the import, so the random numbers are reproducible;
# `import threading` (the note's snippet uses it without importing it).
# Dropped: the resnet18 fine-tuning cell (torchvision).
import threading
import torch
torch.manual_seed(0)

x = torch.randn(5, 5)  # requires_grad=False by default
y = torch.randn(5, 5)  # requires_grad=False by default
z = torch.randn((5, 5), requires_grad=True)
a = x + y
print(a.requires_grad)
b = a + z
print(b.requires_grad)

x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True

x = torch.randn(5, requires_grad=True)
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False

# Define a train function to be used in different threads
def train_fn():
    x = torch.ones(5, 5, requires_grad=True)
    # forward
    y = (x + 3) * (x + 4) * 0.5
    # backward
    y.sum().backward()
    # potential optimizer update



# User write their own threading code to drive the train_fn
threads = []
for _ in range(10):
    p = threading.Thread(target=train_fn, args=())
    p.start()
    threads.append(p)

for p in threads:
    p.join()
