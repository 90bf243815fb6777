import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = x * w
y.register_hook(lambda g: print("tensor hook", g))
y.retain_grad()
y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
y.grad_fn.register_hook(lambda gi, go: print("post", gi, go))
acc = y.grad_fn.next_functions[0][0]
print(acc.name())
acc.register_prehook(lambda go: print("acc pre", go))
acc.register_hook(lambda gi, go: print("acc post", gi, go))
y.sum().backward()
print(x.grad, w.grad, y.grad)
h = y.grad_fn.register_prehook(lambda go: 5)
try:
    y.sum().backward()
except Exception as e:
    print(type(e).__name__, e)
print(type(h).__name__)
h.remove()
z = (x * 2).sum()
z.grad_fn.register_prehook(lambda go: (go[0], go[0]))
try:
    z.backward()
except Exception as e:
    print(type(e).__name__, e)
z = (x * 2).sum()
z.grad_fn.register_hook(lambda gi, go: (gi[0].sum(),))
try:
    z.backward()
except Exception as e:
    print(type(e).__name__, e)
z = (x * 2).sum()
z.grad_fn.register_hook(lambda gi, go: (gi[0].double(),))
try:
    z.backward()
except Exception as e:
    print(type(e).__name__, e)
z = (x * 2).sum()
z.grad_fn.register_prehook(lambda go: [go[0]*2])
z = (x * 2).sum()
z.grad_fn.register_prehook(lambda go: (go[0] * 2,))
z.backward()
print(x.grad)
x.grad = None
z = (x * 2).sum()
def quiet(go):
    return None
def quiet_post(gi, go):
    return None
z.grad_fn.register_prehook(quiet)
z.grad_fn.register_hook(quiet_post)
z.backward()
print(x.grad)
