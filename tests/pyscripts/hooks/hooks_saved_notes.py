import torch
torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False

def pack_hook(x):
    print("Packing", x)
    return x

def unpack_hook(x):
    print("Unpacking", x)
    return x

a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()

x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()

# hooks execution order
t = torch.tensor(1., requires_grad=True).sin()
t.retain_grad()
t.register_hook(lambda grad: grad * 2)
t.sum().backward()
print(t.grad)
t = torch.tensor(1., requires_grad=True).sin()
t.register_hook(lambda grad: grad * 2)
t.retain_grad()
t.sum().backward()
print(t.grad)

a = torch.tensor([1., 2.], requires_grad=True)
b = a.clone()
b.register_hook(lambda grad: print("b hook", grad))
b.grad_fn.register_prehook(lambda gO: print("prehook", gO))
b.grad_fn.register_hook(lambda gI, gO: print("posthook", gI, gO))
b.sum().backward()
