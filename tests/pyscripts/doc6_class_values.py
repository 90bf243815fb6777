import torch
import torch.nn as nn
for c in [nn.PReLU, nn.GLU, nn.Unflatten, nn.Bilinear, nn.LayerNorm, nn.CTCLoss, nn.Embedding, nn.EmbeddingBag, nn.CosineSimilarity, nn.ZeroPad2d, nn.PixelShuffle, nn.ChannelShuffle, nn.AlphaDropout, nn.MultiMarginLoss, nn.GroupNorm]:
    print(c)
m = nn.LayerNorm(3)
print(type(m) is nn.LayerNorm, type(nn.Embedding(2, 2)) is nn.Embedding, isinstance(m, nn.Module))
print(torch.optim.AdamW, torch.optim.lr_scheduler.OneCycleLR)
print(torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.Adagrad)
print(torch.optim.lr_scheduler.StepLR, torch.optim.lr_scheduler.OneCycleLR)
from torch.optim.lr_scheduler import LambdaLR
print(LambdaLR)
opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
s = torch.optim.lr_scheduler.StepLR(opt, 2)
print(s.get_last_lr())
