import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
# torch/nn/modules/loss.py's CTCLoss example, with the results printed
T = 50      # Input sequence length
C = 20      # Number of classes (including blank)
N = 16      # Batch size
S = 30      # Target sequence length of longest target in batch (padding length)
S_min = 10  # Minimum target length, for demonstration purposes
input = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
target = torch.randint(low=1, high=C, size=(N, S), dtype=torch.long)
input_lengths = torch.full(size=(N,), fill_value=T, dtype=torch.long)
target_lengths = torch.randint(low=S_min, high=S, size=(N,), dtype=torch.long)
ctc_loss = nn.CTCLoss()
loss = ctc_loss(input, target, input_lengths, target_lengths)
loss.backward()
print(ctc_loss, loss, loss.item(), input.grad[0, 0, :4].tolist(), input.grad.sum().item())
input = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
input_lengths = torch.full(size=(N,), fill_value=T, dtype=torch.long)
target_lengths = torch.randint(low=1, high=T, size=(N,), dtype=torch.long)
target = torch.randint(low=1, high=C, size=(sum(target_lengths),), dtype=torch.long)
loss = F.ctc_loss(input, target, input_lengths, target_lengths, reduction='none')
print(loss.tolist()[:5])
loss.sum().backward()
print(input.grad[3, 2, :5].tolist())
input = torch.randn(T, C).log_softmax(1).detach().requires_grad_()
input_lengths = torch.tensor(T, dtype=torch.long)
target_lengths = torch.randint(low=1, high=T, size=(), dtype=torch.long)
target = torch.randint(low=1, high=C, size=(target_lengths,), dtype=torch.long)
loss = F.ctc_loss(input, target, input_lengths, target_lengths, reduction='sum')
loss.backward()
print(loss.item(), input.grad[7, :5].tolist())
x = torch.randn(6, 2, 4).log_softmax(2).requires_grad_()
l = F.ctc_loss(x, torch.tensor([[1, 1, 2, 3, 3], [2, 2, 2, 2, 2]]), torch.tensor([6, 4]), torch.tensor([5, 3]), reduction='none', zero_infinity=True)
print(l)
l.sum().backward()
print(x.grad[:, 1])
