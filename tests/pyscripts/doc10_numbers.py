# Numbers and dtypes as PyTorch gives them (probes of round 10): a number divided by an int
# tensor (1/x is x.reciprocal() * 1, a float), float64 list literals kept to the last digit,
# 0-d and Python-number promotion (int32 + tensor(5) is int32, a bool tensor & 1 int64),
# int ** 2.0 and clamp of ints, torch.where(cond), dtype=float/int, '%.3f' % tensor, Size +
# tuple, x[idx] with idx a tuple, casts of a tensor that requires grad to ints, sum(dtype=).
import torch
print(1 / torch.tensor([2, 4]), 1.0 / torch.tensor([2, 4]), 3 / torch.tensor(2))
print(torch.tensor([2, 4]) / 4, torch.tensor([2, 4]) / torch.tensor([4, 8]), 7 // torch.tensor([2]))
torch.set_printoptions(precision=10)
print(torch.tensor([0.1], dtype=torch.float64), torch.tensor([1/3], dtype=torch.float64).item())
print(torch.as_tensor([0.1, 0.2], dtype=torch.float64), torch.tensor(0.1, dtype=torch.float64).item())
print(torch.tensor([[0.1, 0.3]], dtype=torch.double).tolist())
torch.set_printoptions(precision=4)
print('loss: %.3f' % torch.tensor(0.1234), '%d items' % torch.tensor(3), '%s' % torch.tensor([1., 2.]))
x = torch.zeros(2, 3, 4)
print(x.size()[:-1] + (2, 4), (1,) + x.shape, torch.Size([1]) + torch.Size([2]), x.shape * 2)
a = torch.arange(12).reshape(3, 4)
idx = (1, 2)
print(a[idx])
a[idx] = 100
print(a)
print(torch.arange(5) ** 2.0, torch.pow(torch.arange(3), 2.0), torch.arange(3).pow(3.0), torch.arange(3) ** 2)
print((torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(5)).dtype, (torch.tensor([1], dtype=torch.int8) + torch.tensor(1000)).dtype)
print((torch.tensor([3], dtype=torch.uint8) * torch.tensor(2)).dtype, (torch.tensor([1.], dtype=torch.float32) + torch.tensor(2., dtype=torch.float64)).dtype)
print(torch.clamp(torch.arange(5), 1, 3), torch.arange(5).clamp(min=2), torch.arange(5).clamp(max=2.5))
print(torch.where(torch.tensor([1., -1., 2.]) > 0))
print(torch.zeros(2, dtype=float), torch.zeros(2, dtype=int), torch.ones(1, dtype=bool))
print(torch.tensor([True]) & 1, 1 / torch.tensor([True, True]), torch.tensor([True]) + 1)
print(torch.arange(3.).requires_grad_().long(), torch.ones(3).type(torch.LongTensor))
print(torch.tensor([1, 2]).sum(dtype=torch.float64))
t = torch.tensor([2, 4])
for f in (torch.reciprocal, torch.sqrt, torch.exp, torch.sin, torch.rsqrt, torch.sigmoid, torch.log, torch.tanh, torch.erf, torch.log1p, torch.expm1, torch.atan, torch.ceil, torch.floor, torch.round, torch.trunc, torch.frac if False else torch.abs, torch.neg, torch.sign, torch.square, torch.relu):
    try:
        print(f.__name__, f(t))
    except Exception as e:
        print(f.__name__, type(e).__name__, e)
print(t.reciprocal(), torch.tensor(3).reciprocal())
a = torch.tensor(2.0, requires_grad=True)
print(torch.tensor([[1, 2], [3, 4]]), torch.tensor([True, 2]), torch.tensor([]), torch.tensor([[0.5], [1.5]]))
print(torch.tensor([1.5, 2]).dtype, torch.tensor([1, 2], dtype=torch.float32), torch.tensor([0.1, 0.2], requires_grad=True))
print(torch.tensor((1.0, 2.0)), torch.tensor([a.item(), 3.0]))
print(torch.DoubleTensor([0.1]).tolist(), torch.as_tensor([0.1], dtype=torch.float64).tolist())
try:
    torch.tensor([[1, 2], [3]])
except Exception as e:
    print(type(e).__name__)
try:
    torch.tensor([[1, 2], [3]])
except ValueError as e:
    print(e)
t = torch.tensor(0.1234)
print('loss: %.3f' % t, '%d items' % torch.tensor(3), '%s' % torch.tensor([1., 2.]), '%r' % t)
print('%5.2f|%e|%g|%d|%i|%x' % (t, t, t, torch.tensor(7.9), torch.tensor(255), torch.tensor(255)))
print('%(a).2f %(b)s' % {'a': torch.tensor([2.5]), 'b': t}, '%s and %s' % (1, 'x'), '%.1f' % 2)
try:
    print('%f' % torch.tensor([1., 2.]))
except ValueError as e:
    print(e)
x = torch.zeros(2, 3, 2)
print(x.shape.count(2), x.shape.index(3), torch.Size([1, 2]) + torch.Size([3]), x.size() * 2)
print(float, int, bool, type(float))
print(torch.zeros(2, dtype=float).dtype, torch.ones(2, dtype=int).dtype, torch.tensor([1.5], dtype=float).dtype, torch.arange(3, dtype=float).dtype, torch.zeros(1).to(float).dtype)
x = 3.0
print(isinstance(x, float), isinstance(3, int), isinstance(True, bool), isinstance(x, (int, float)), float(2), int(2.7), bool(0), type(x) == float, type(3) is int)
f = [float, int]
print(f)
a = torch.arange(3.).requires_grad_()
print(a.long(), a.to(torch.int64), a.int(), a.bool(), a.to(torch.float16) if False else 0, a.long().requires_grad)
print(a.double(), a.float().requires_grad, a.half() if False else 0)
