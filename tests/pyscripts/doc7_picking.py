# PyTorch's _torch_docs.py examples (round 7): cummax, cummin and kthvalue, then their
# gradients (a tie takes the later index in cummax/cummin, a nan stays once seen).
import torch
torch.manual_seed(0)
a = torch.randn(10)
print(torch.cummax(a, dim=0))
print(torch.cummin(a, dim=0))
x = torch.arange(1., 6.)
print(torch.kthvalue(x, 4))
x = torch.arange(1., 7.).reshape(2, 3)
print(torch.kthvalue(x, 2, 0, True))
w = torch.tensor([[1.0, 3.0, 2.0, 3.0], [0.5, float('nan'), 4.0, -1.0]], requires_grad=True)
for out in (torch.cummax(w, 1), torch.cummin(w, 1), w.cummax(0), torch.kthvalue(w, 2, 1), torch.kthvalue(w, 1, 0, keepdim=True)):
    w.grad = None
    (out[0] * torch.arange(1.0, out[0].numel() + 1).reshape(out[0].shape)).nansum().backward()
    print(out, w.grad)
