# nn.Module backward hooks (docs/source/notes/modules.rst, "Module Hooks"):
# register_full_backward_hook / register_full_backward_pre_hook, what they see, their order,
# replacements, removal, the BackwardHookFunctionBackward nodes, and the global hooks.
import torch
import torch.nn as nn
from torch.nn.modules.module import register_module_forward_hook
from torch.nn.modules.module import register_module_full_backward_hook

torch.manual_seed(1)


def forward_pre_hook(m, inputs):
    return inputs[0] + 1.


def forward_hook(m, inputs, output):
    return output + inputs[0]


def backward_hook(m, grad_inputs, grad_outputs):
    new_grad_inputs = [torch.ones_like(gi) * 42. for gi in grad_inputs]
    return new_grad_inputs


# the notes' example
m = nn.Linear(3, 3)
x = torch.randn(2, 3, requires_grad=True)
print('output with no forward hooks: {}'.format(m(x)))
forward_pre_hook_handle = m.register_forward_pre_hook(forward_pre_hook)
print('output with forward pre hook: {}'.format(m(x)))
forward_hook_handle = m.register_forward_hook(forward_hook)
print('output with both forward hooks: {}'.format(m(x)))
forward_pre_hook_handle.remove()
forward_hook_handle.remove()
print('output after removing forward hooks: {}'.format(m(x)))
m(x).sum().backward()
print('x.grad with no backwards hook: {}'.format(x.grad))
m.zero_grad()
x.grad.zero_()
m.register_full_backward_hook(backward_hook)
m(x).sum().backward()
print('x.grad with backwards hook: {}'.format(x.grad))
print(m.weight.grad)

# what the hooks see: tuples, shapes, the node names
out = m(x)
print(out.grad_fn.name(), type(out.grad_fn).__name__)
print(out.grad_fn.next_functions[0][0].name())
print([f.name() if f is not None else None
       for f, _ in out.grad_fn.next_functions[0][0].next_functions])


def shapes(ts):
    return [None if t is None else tuple(t.shape) for t in ts]


lin = nn.Linear(4, 2)
seen = []


def show(module, grad_input, grad_output):
    print("full", type(module).__name__, type(grad_input).__name__, shapes(grad_input),
          shapes(grad_output))


def show_pre(module, grad_output):
    print("pre", type(module).__name__, len(grad_output), grad_output[0])


h1 = lin.register_full_backward_hook(show)
h2 = lin.register_full_backward_pre_hook(show_pre)
x = torch.randn(3, 4, requires_grad=True)
lin(x).sum().backward()
print(x.grad.shape, lin.weight.grad.shape)

# several hooks: in the order registered, prepend=True first; each sees the last replacement
order = []
h3 = lin.register_full_backward_hook(lambda m, gi, go: order.append("second"))
h4 = lin.register_full_backward_hook(lambda m, gi, go: order.append("first"), prepend=True)
lin(x).sum().backward()
print(order)
for h in (h1, h2, h3, h4):
    h.remove()
h1.remove()
order.clear()
lin(x).sum().backward()
print(order)

# a pre-hook replacing grad_output: the gradients of everything before it follow
x.grad = None
lin.zero_grad()
h = lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
lin(x).sum().backward()
print(x.grad[0], lin.bias.grad)
h.remove()

# the hooks taken when the module was called: removing one after forward still runs it
late = lin.register_full_backward_hook(lambda m, gi, go: print("still runs", shapes(gi)))
y = lin(x)
late.remove()
y.sum().backward()
lin(x).sum().backward()

# nn.Sequential with hooks on inner layers, and on the Sequential itself
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
for i, layer in enumerate(model):
    layer.register_full_backward_hook(
        lambda mod, gi, go, i=i: print("layer", i, type(mod).__name__, gi[0], go[0]))
model.register_full_backward_pre_hook(lambda mod, go: print("model pre", go))
model.register_full_backward_hook(lambda mod, gi, go: print("model", shapes(gi)))
inp = torch.randn(1, 3, requires_grad=True)
out = model(inp)
print(out.grad_fn.name(), out.grad_fn.next_functions[0][0].name())
out.register_hook(lambda g: print("tensor hook", g))
out.backward()
print(inp.grad)

# scaling gradients flowing back through one layer
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
a = torch.ones(1, 2, requires_grad=True)
net(a).backward()
before = a.grad.clone()
a.grad = None
handle = net[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0.5,))
net(a).backward()
print(torch.allclose(a.grad, before * 0.5))
handle.remove()


# a module with two inputs, one of which does not require grad, and a number
class Scale(nn.Module):
    def forward(self, t, w, k):
        return t * w * k


scale = Scale()
scale.register_full_backward_hook(lambda mod, gi, go: print("scale", gi, go))
t = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([2., 2., 2.])
r = scale(t, w, 3.0)
r.sum().backward()
print(t.grad)
r = scale(w, t, 0.5)
r.sum().backward()


# two inputs that require grad, and a tuple output
class Pair(nn.Module):
    def forward(self, p, q):
        return p * q, p + q


pair = Pair()
pair.register_full_backward_pre_hook(lambda mod, go: print("pair pre", go))
pair.register_full_backward_hook(lambda mod, gi, go: print("pair", gi, go))
p = torch.tensor([1., 2.], requires_grad=True)
q = torch.tensor([3., 4.], requires_grad=True)
s, d = pair(p, q)
print(s.grad_fn.name(), d.grad_fn.name())
s.sum().backward()
print(p.grad, q.grad)
s, d = pair(p, q)
(s + d).sum().backward()
print(p.grad, q.grad)

# errors: a wrong number of gradients, an in-place change of a hooked module's output
bad = nn.Linear(2, 2)
bad.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
try:
    bad(torch.ones(1, 2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print(e)
bad2 = nn.Linear(2, 2)
bad2.register_full_backward_pre_hook(lambda mod, go: (torch.ones(3),))
try:
    bad2(torch.ones(1, 2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print(e)
try:
    bad2(torch.ones(1, 2, requires_grad=True)).relu_()
except RuntimeError as e:
    print(e)
fixed = bad2(torch.ones(1, 2, requires_grad=True)).clone()
fixed.relu_()
print(fixed.grad_fn.name())

# global hooks: every module's, before the module's own
calls = []
g1 = register_module_forward_hook(lambda mod, args, output: calls.append(type(mod).__name__))
g2 = register_module_full_backward_hook(lambda mod, gi, go: calls.append("bw " +
                                                                          type(mod).__name__))
model(inp).sum().backward()
g1.remove()
g2.remove()
print(calls)
# a hook that returns None for the input gradient: nothing flows on past the module
lin2 = nn.Linear(3, 2)
seq2 = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), lin2)
def none_hook(m, gin, gout):
    return (None,)
lin2.register_full_backward_hook(none_hook)
x2 = torch.randn(4, 2, requires_grad=True)
seq2(x2).sum().backward()
print(seq2[0].weight.grad, x2.grad, lin2.weight.grad)
