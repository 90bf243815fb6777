import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
weight = torch.FloatTensor([[1, 2.3, 3], [4, 5.1, 6.3]])
embedding = nn.Embedding.from_pretrained(weight)
input = torch.LongTensor([1])
print(embedding, embedding(input), embedding.weight.requires_grad)
embeddingbag = nn.EmbeddingBag.from_pretrained(weight)
input = torch.LongTensor([[1, 0]])
print(embeddingbag, embeddingbag(input))
embedding_sum = nn.EmbeddingBag(10, 3, mode='sum')
input = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9], dtype=torch.long)
offsets = torch.tensor([0, 4], dtype=torch.long)
out = embedding_sum(input, offsets)
print(embedding_sum, out, out.grad_fn.name())
(out * torch.tensor([[1.0], [2.0]])).sum().backward()
print(embedding_sum.weight.grad)
embedding_sum = nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2)
input = torch.tensor([2, 2, 2, 2, 4, 3, 2, 9], dtype=torch.long)
offsets = torch.tensor([0, 4], dtype=torch.long)
print(embedding_sum, embedding_sum(input, offsets))
embedding = nn.Embedding(10, 3, padding_idx=2)
embedding_sum = nn.EmbeddingBag.from_pretrained(
        embedding.weight,
        padding_idx=embedding.padding_idx,
        mode='sum')
print(embedding_sum)
w = torch.randn(20, 7, requires_grad=True)
idx = torch.randint(0, 20, (30,))
off = torch.tensor([0, 3, 3, 10, 25])
for mode in ['sum', 'mean', 'max']:
    o = F.embedding_bag(idx, w, off, mode=mode)
    o.backward(torch.randn(5, 7))
    print(mode, o.tolist()[1], o.tolist()[3][:3], w.grad.sum().item(), w.grad.tolist()[5])
    w.grad = None
o = F.embedding_bag(idx, w, off, mode='sum', per_sample_weights=torch.rand(30))
print(o.tolist()[4])
print(F.embedding_bag(idx.view(5, 6), w, mode='mean').tolist()[0])
m = nn.EmbeddingBag(5, 2, mode='max', include_last_offset=True)
print(m(torch.tensor([0, 1, 4, 2]), torch.tensor([0, 2, 4])))
