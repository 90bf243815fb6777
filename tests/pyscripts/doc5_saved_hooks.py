# torch/autograd/graph.py's saved_tensors_hooks example, and two nodes with a retained graph
import torch
def pack_hook(x):
    print("Packing", x)
    return x.detach()

def unpack_hook(x):
    print("Unpacking", x)
    return x

a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
print(y.sum().backward())


a = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a.exp()
    z = (y * a).sin()
z.sum().backward(retain_graph=True)
print(a.grad)
z.sum().backward()
print(a.grad)
