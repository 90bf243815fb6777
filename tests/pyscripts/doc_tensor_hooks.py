# torch/_tensor.py's and _tensor_docs.py's autograd examples: register_hook,
# register_post_accumulate_grad_hook, requires_grad_ (with preprocess written out), is_leaf
import torch
torch.manual_seed(0)
v = torch.tensor([0., 0., 0.], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(torch.tensor([1., 2., 3.]))
print(v.grad)
h.remove()  # removes the hook

v = torch.tensor([0., 0., 0.], requires_grad=True)
lr = 0.01
# simulate a simple SGD update
h = v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
v.backward(torch.tensor([1., 2., 3.]))
print(v)
h.remove()  # removes the hook
v.backward(torch.tensor([1., 2., 3.]))
print(v, v.grad)
a = torch.tensor(2., requires_grad=True)
b = torch.tensor(3., requires_grad=True)
a.register_post_accumulate_grad_hook(lambda p: print("a", p.grad, torch.is_grad_enabled()))
b.register_post_accumulate_grad_hook(lambda p: print("b", p.grad))
b.register_post_accumulate_grad_hook(lambda p: print("b2", p.grad * 2))
(a * b).backward()
torch.autograd.backward([(a * a).sum()])
try:
    (a * 2).register_post_accumulate_grad_hook(lambda p: None)
except RuntimeError as e:
    print(e)


def preprocess(t):
    return t * 2


saved_weights = [0.1, 0.2, 0.3, 0.25]
loaded_weights = torch.tensor(saved_weights)
weights = preprocess(loaded_weights)  # some function
print(weights)
# Now, start to record operations done to weights
weights.requires_grad_()
out = weights.pow(2).sum()
out.backward()
print(weights.grad)

a = torch.rand(10, requires_grad=True)
print(a.is_leaf)
c = torch.rand(10, requires_grad=True) + 2
print(c.is_leaf)
e = torch.rand(10).requires_grad_()
print(e.is_leaf)
