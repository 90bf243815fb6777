# torch/nn/modules/loss.py's examples (CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss, L1Loss,
# MSELoss), verbatim but for the seed and the prints of what the REPL would echo
import torch
import torch.nn as nn
torch.manual_seed(0)
# Example of target with class indices
loss = nn.CrossEntropyLoss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.empty(3, dtype=torch.long).random_(5)
output = loss(input, target)
output.backward()
print(loss, target, output, input.grad)
# Example of target with class probabilities
input = torch.randn(3, 5, requires_grad=True)
target = torch.randn(3, 5).softmax(dim=1)
output = loss(input, target)
output.backward()
print(output, input.grad)

target = torch.ones([10, 64], dtype=torch.float32)  # 64 classes, batch size = 10
output = torch.full([10, 64], 1.5)  # A prediction (logit)
pos_weight = torch.ones([64])  # All weights are equal to 1
criterion = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
print(criterion(output, target))  # -log(sigmoid(1.5))
loss = nn.BCEWithLogitsLoss()
input = torch.randn(3, requires_grad=True)
target = torch.empty(3).random_(2)
output = loss(input, target)
output.backward()
print(target, output, input.grad)

m = nn.LogSoftmax(dim=1)
loss = nn.NLLLoss()
# input is of size N x C = 3 x 5
input = torch.randn(3, 5, requires_grad=True)
# each element in target has to have 0 <= value < C
target = torch.tensor([1, 0, 4])
output = loss(m(input), target)
output.backward()
print(m, output, input.grad)

loss = nn.L1Loss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.randn(3, 5)
output = loss(input, target)
output.backward()
print(output, input.grad.sum())

# the constructors' other arguments: tensors, positional, legacy
c = nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0]), pos_weight=torch.tensor([3.0, 0.5]),
                         reduction='sum')
x = torch.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
y = c(x, torch.tensor([[1.0, 0.0], [0.3, 1.0]]))
y.backward()
print(c, y, x.grad)
print(nn.MSELoss(reduction='sum'), nn.CrossEntropyLoss(torch.ones(3), label_smoothing=0.1),
      nn.NLLLoss(ignore_index=2), nn.HuberLoss(delta=0.5), nn.SmoothL1Loss(beta=2.0))
a = torch.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
b = torch.tensor([[0.0, 2.5], [1.0, 1.0]])
print(nn.CrossEntropyLoss(ignore_index=1)(a, torch.tensor([1, 0])),
      nn.NLLLoss(torch.tensor([1.0, 3.0]))(a, torch.tensor([1, 0])),
      nn.HuberLoss(delta=0.5)(a, b), nn.SmoothL1Loss(beta=2.0)(a, b),
      nn.BCELoss(weight=torch.tensor([1.0, 2.0]))(a.sigmoid(), b / 5),
      nn.MSELoss(reduction='none')(a, b))
