# grad_fn._saved_*: what PyTorch's backward nodes save (None where no gradient reads it), and
# the error for a saved tensor once backward has freed the graph
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.], requires_grad=True)
c = torch.tensor([3., 4.])
a = x * 2
print(a.grad_fn._saved_other, a.grad_fn._saved_self)
print((x * 2.0).grad_fn._saved_other)
b = x * y
print(b.grad_fn._saved_other is y, b.grad_fn._saved_self)
print((c * x).grad_fn._saved_other, (c * x).grad_fn._saved_self)
print((x / 2).grad_fn._saved_self, (x / c).grad_fn._saved_other, (c / x).grad_fn._saved_self)
e = x.exp()
print(e.grad_fn._saved_result)
print((x + y).grad_fn._saved_alpha, (x - y).grad_fn._saved_alpha)
print((x ** 2).grad_fn._saved_exponent, (x ** 2.5).grad_fn._saved_exponent, (x ** 3).grad_fn._saved_self)
print(x.sum().grad_fn._saved_self_sym_sizes, x.mean().grad_fn._saved_self_sym_numel, x.mean().grad_fn._saved_self_sym_sizes)
print(x.sum(0).grad_fn._saved_dim, x.sum(0).grad_fn._saved_keepdim, x.softmax(0).grad_fn._saved_dim)
print(torch.nn.functional.mse_loss(x, y).grad_fn._saved_reduction, torch.nn.functional.mse_loss(x, c, reduction='sum').grad_fn._saved_reduction)
print((x ** y).grad_fn._saved_exponent, (x ** y).grad_fn._saved_result)
print((2 ** x).grad_fn._saved_self, (2 ** x).grad_fn._saved_exponent)
print(x.tanh().grad_fn._saved_result, x.sigmoid().grad_fn._saved_result, x.sin().grad_fn._saved_self, x.log().grad_fn._saved_self)
print(x.square().grad_fn._saved_exponent)
print(torch.nn.functional.leaky_relu(x).grad_fn._saved_negative_slope, torch.nn.functional.gelu(x).grad_fn._saved_approximate)
m = x.view(1, 2) @ c.view(2, 1)
print(m.grad_fn._saved_self, m.grad_fn._saved_mat2, m.grad_fn._saved_mat2_sym_sizes, m.grad_fn._saved_self_sym_sizes)
print(torch.cat([x, c]).grad_fn._saved_dim)
z = (x * y).sum()
f = z.grad_fn.next_functions[0][0]
z.backward()
print(z.grad_fn._saved_self_sym_sizes)
try:
    f._saved_self
except RuntimeError as err:
    print("error:", err)
xx = torch.tensor(2., requires_grad=True)
s = xx * xx
s.backward(retain_graph=True)
print(s.grad_fn._saved_self)
e2 = x.exp()
e2.sum().backward()
try:
    e2.grad_fn._saved_result
except RuntimeError as err:
    print("error:", err)
p = x ** 2
p.sum().backward()
print(p.grad_fn._saved_exponent)
try:
    x.exp().grad_fn._saved_foo
except AttributeError as err:
    print(err)
