import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x ** 2
I = torch.eye(3)
g, = torch.autograd.grad(y, x, grad_outputs=I, is_grads_batched=True)
print(g)
w = torch.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
out = torch.tanh(w * x)
jac, = torch.autograd.grad(out, w, grad_outputs=torch.eye(3).reshape(3, 1, 3),
                           is_grads_batched=True)
print(jac)
a = torch.ones(2, 3, requires_grad=True)
for shape in [(), (3,), (1, 3), (2, 1), (1, 1), (2, 3)]:
    v = torch.full(shape, 2., requires_grad=True)
    gv, = torch.autograd.grad((v * a).sum(), v, create_graph=True)
    print(shape, type(gv.grad_fn).__name__, gv)
