import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
for hook in (lambda go: (3,), lambda go: (None,), lambda go: ()):
    z = (x * 2).sum()
    z.grad_fn.register_prehook(hook)
    try:
        z.backward(); print(x.grad)
    except Exception as e:
        print(type(e).__name__, e)
for hook in (lambda gi, go: 3, lambda gi, go: (None, None), lambda gi, go: (gi[0],), lambda gi, go: (gi[0]*3, 7)):
    x.grad = None
    z = (x * 2)
    z.grad_fn.register_hook(hook)
    try:
        z.sum().backward(); print(x.grad)
    except Exception as e:
        print(type(e).__name__, e)
y = x * 2
acc = y.grad_fn.next_functions[0][0]
acc.register_hook(lambda gi, go: print(gi, go))
h = acc.register_prehook(lambda go: (go[0] * 100,))
x.grad = None
y.sum().backward(); print(x.grad)
h.remove()
x.grad = None
y = x * 2
y.sum().backward(); print(x.grad)
