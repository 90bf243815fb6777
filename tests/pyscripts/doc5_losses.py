# torch/nn/modules/loss.py's examples for KLDivLoss, MarginRankingLoss, HingeEmbeddingLoss,
# SoftMarginLoss, PoissonNLLLoss, MultiLabelSoftMarginLoss, with the losses and gradients printed
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
# (*) PyTorch's soft_margin_loss is one node (SoftMarginLossBackward0), ddx's its ops
kl_loss = nn.KLDivLoss(reduction="batchmean")
# input should be a distribution in the log space
input = F.log_softmax(torch.randn(3, 5, requires_grad=True), dim=1)
# Sample a batch of distributions. Usually this would come from the dataset
target = F.softmax(torch.rand(3, 5), dim=1)
output = kl_loss(input, target)

kl_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
log_target = F.log_softmax(torch.rand(3, 5), dim=1)
output = kl_loss(input, log_target)
print(output, output.grad_fn.name())
loss = nn.PoissonNLLLoss()
log_input = torch.randn(5, 2, requires_grad=True)
target = torch.randn(5, 2)
output = loss(log_input, target)
print(output.backward())
print(output, output.grad_fn.name())
loss = nn.MarginRankingLoss()
input1 = torch.randn(3, requires_grad=True)
input2 = torch.randn(3, requires_grad=True)
target = torch.randn(3).sign()
output = loss(input1, input2, target)
print(output.backward())
print(output, output.grad_fn.name())
x = torch.randn(4, 3, requires_grad=True)
y = torch.tensor([[1., -1., 1.], [-1., -1., 1.], [1., 1., 1.], [-1., 1., -1.]])
pos = (y > 0).float()
for loss, inp, target in [(nn.HingeEmbeddingLoss(), x, y), (nn.HingeEmbeddingLoss(margin=0.5, reduction='sum'), x, y),
                          (nn.SoftMarginLoss(), x, y), (nn.SoftMarginLoss(reduction='none'), x, y),
                          (nn.MultiLabelSoftMarginLoss(), x, pos),
                          (nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1., 2., 0.5])), x, pos),
                          (nn.PoissonNLLLoss(), x, y.abs()),
                          (nn.PoissonNLLLoss(log_input=False, reduction='sum'), x.abs() + 0.1, y.abs()),
                          (nn.KLDivLoss(reduction='sum'), F.log_softmax(x, 1), F.softmax(y, 1))]:
    out = loss(inp, target)
    print(loss, out if not isinstance(loss, nn.SoftMarginLoss) else out.detach())  # (*)
    out.sum().backward()
    print(x.grad)
    x.grad = None
print(F.margin_ranking_loss(x[0], x[1], torch.tensor([1., -1., 1.]), margin=0.1), F.hinge_embedding_loss(x, y, margin=2.0))
