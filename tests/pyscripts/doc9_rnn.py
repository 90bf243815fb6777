# nn.RNN, nn.GRU, nn.RNNCell and nn.GRUCell against Python with PyTorch: their weights as
# reset_parameters draws them, outputs, final hiddens and gradients bit for bit (every tensor
# printed whole), with layers, batch_first, bidirectional, dropout between layers, a given
# h0, unbatched input, and a small training loop.
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_printoptions(precision=10)
rnn = nn.RNN(3, 4)
print(rnn, [(n, tuple(p.shape)) for n, p in rnn.named_parameters()])
print(rnn.weight_hh_l0)
x = torch.randn(5, 2, 3, requires_grad=True)
out, h = rnn(x)
print(out.grad_fn.name(), h.grad_fn.name(), out.shape, h.shape)
print(out[4], h)
out.sum().backward()
print(x.grad[0], rnn.weight_ih_l0.grad, rnn.bias_hh_l0.grad)

gru = nn.GRU(3, 5, num_layers=2, batch_first=True)
print(gru)
xb = torch.randn(2, 6, 3)
h0 = torch.randn(2, 2, 5)
out, h = gru(xb, h0)
print(out[1, 5], h[1])
(out.pow(2).sum() + h.sum()).backward()
print(gru.weight_hh_l1.grad[7], gru.bias_ih_l0.grad)

bi = nn.RNN(2, 3, num_layers=2, nonlinearity="relu", bidirectional=True, bias=False)
print(bi, [n for n, _ in bi.named_parameters()])
out, h = bi(torch.randn(4, 3, 2))
print(out.shape, h.shape, out[0, 1], h[3])
bgru = nn.GRU(2, 3, bidirectional=True, batch_first=True)
out, h = bgru(torch.randn(3, 4, 2))
print(out[2, 0], h[1, 2])
drop = nn.GRU(2, 3, num_layers=3, dropout=0.5)
out, h = drop(torch.randn(4, 2, 2))
print(out[3], h[2])
drop.eval()
out, h = drop(torch.randn(4, 2, 2))
print(out[0])
single = nn.RNN(3, 2)
o, hn = single(torch.randn(7, 3))
print(o.shape, hn.shape, hn)

cell = nn.RNNCell(3, 4, nonlinearity="relu")
gcell = nn.GRUCell(3, 4)
print(cell, gcell)
hx = torch.zeros(2, 4)
seq = torch.randn(3, 2, 3)
for t in range(3):
    hx = gcell(seq[t], hx)
print(hx, cell(seq[0]), gcell(torch.randn(3)))

model = nn.GRU(1, 8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.01)
t = torch.linspace(0, 6, 20)
series = torch.sin(t).reshape(1, 20, 1)
for step in range(5):
    out, _ = model(series[:, :-1])
    loss = ((head(out) - series[:, 1:]) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
for bad in [lambda: rnn(torch.randn(5, 2, 4)), lambda: rnn(torch.randn(5)),
            lambda: nn.RNN(3, 4, nonlinearity="sigmoid")]:
    try:
        bad()
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, e)

lcell = nn.LSTMCell(3, 5)
print(lcell, nn.LSTMCell(2, 2, bias=False))
h, c = torch.zeros(2, 5), torch.zeros(2, 5)
xs = torch.randn(4, 2, 3, requires_grad=True)
for t in range(4):
    h, c = lcell(xs[t], (h, c))
print(h.grad_fn.name(), c.grad_fn.name(), h, c)
(h.sum() + c.pow(2).sum()).backward()
print(xs.grad[2], lcell.weight_hh.grad[13], lcell.bias_ih.grad)
h1, c1 = lcell(torch.randn(3))
print(h1.shape, c1)
