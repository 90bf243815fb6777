# _torch_docs.py's torch.div examples (rounding_mode trunc/floor: DivBackward2, slope 0), with gradients
import torch
a = torch.tensor([-3., 5., 7.5], requires_grad=True); b = torch.tensor([2., -2., 2.])
y = torch.div(a, b, rounding_mode='trunc'); print(y, a.div(b, rounding_mode='floor'), torch.div(a, 2, rounding_mode=None))
y.sum().backward(); print(a.grad)
print(torch.div(torch.tensor([5, -5]), 2, rounding_mode='floor'), torch.div(torch.tensor([5, -5]), 2, rounding_mode='trunc'), torch.tensor([5, -5]) // 2)
print(torch.tensor([5., -5.]) // 2, torch.divide(torch.tensor([1.0]), 0.1, rounding_mode='floor'), torch.div(a, b))
z = torch.div(a, b, rounding_mode=None)
z.sum().backward()
print(z, a.grad)
a = torch.tensor([ 0.3810,  1.2774, -0.2972, -0.3719,  0.4637])
print(torch.div(a, 0.5))
a = torch.tensor([[-0.3711, -1.9353, -0.4605, -0.2917],
                  [ 0.1815, -1.0111,  0.9805, -1.5923],
                  [ 0.1062,  1.4581,  0.7759, -1.2344],
                  [-0.1830, -0.0313,  1.1908, -1.4757]])
b = torch.tensor([ 0.8032,  0.2930, -0.8113, -0.2308])
print(torch.div(a, b))
print(torch.div(a, b, rounding_mode='trunc'))
print(torch.div(a, b, rounding_mode='floor'))
try:
    torch.div(a, b, rounding_mode='round')
except RuntimeError as e:
    print(e)
print(torch.div(7, 2, rounding_mode='floor'), torch.div(-7, 2, rounding_mode='trunc'))
print(torch.div(7, 2, rounding_mode=None), torch.div(7.5, 2, rounding_mode="floor"), torch.div(-7, 2, rounding_mode="floor"))
