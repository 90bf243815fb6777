import torch
# torch.remainder's documented examples: the sign of a zero result is fmod's (ATen), not numpy's
print(torch.remainder(torch.tensor([-3., -2, -1, 1, 2, 3]), 2))
print(torch.remainder(torch.tensor([1, 2, 3, 4, 5]), -1.5))
print(torch.remainder(torch.tensor([-2.,2.,-0.,0.]), torch.tensor([2.,-2.,3.,-3.])))
print(torch.tensor([-2.,2.]) % 2, torch.tensor([4., -4.]) % -2, 5 % torch.tensor([-2.5, 2.5]))
x = torch.tensor([-4.0, 4.0, 2.5], requires_grad=True)
y = x % 2
print(y)
y.sum().backward()
print(x.grad)
print(torch.remainder(torch.tensor([-3, 3]), 2), torch.tensor([-3.0, 7.5], dtype=torch.float64) % torch.tensor([1.5, -2.5], dtype=torch.float64))
print(torch.tensor([-3, 3]) % 2, torch.remainder(torch.tensor([-3, 3]), 2), torch.fmod(torch.tensor([-3, 3]), 2), torch.tensor([-3, 3]).remainder(2), torch.remainder(torch.tensor([-3, 3]), torch.tensor([2, 2])))
