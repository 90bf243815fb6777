"""torch.func in `ddx run` against PyTorch 2.13 (issue 15, "Paste PyTorch"): each script runs
through ddx and through Python with PyTorch, and prints the same lines, PyTorch's error
messages included (caught and printed by the script itself).

- vmap: in_dims as int/None/tuple/nested pytree, out_dims, nested vmap, torch.vmap, a vmap
  inside a backward, randomness ('same': each index draws the first's numbers); PyTorch's
  ValueErrors for mapped sizes that differ, in_dims of another structure, an in_dim out of
  range, a number mapped, nothing mapped, a number returned, no inputs, and the
  RuntimeErrors for a random draw in 'error' mode (the generator untouched, as PyTorch
  refuses before drawing) and an unknown randomness;
- grad/jacrev/jacfwd with argnums tuples, pytree (dict) arguments and results, has_aux,
  hessian of a vector function, jacfwd(jacrev(f)), jacrev(jacrev(f)), jacfwd(grad(f)),
  grad(grad(f)) of a number,
  vmap(grad(f)) (per-sample gradients);
- jvp, vjp (vjp_fn called again, and under vmap), linearize, jvp/vjp of grad (Hessian-vector
  products), functools.partial/reduce, and jvp's/vjp_fn's errors;
- the torch.func docs' examples of torch functions as values (vmap(torch.dot), vmap(torch.mv,
  in_dims=(0, None)), grad(grad(torch.sin)), ...) and a keyword argument through vmap;
- functional_call (a tuple of dicts, dotted names into a Sequential, a buffer, a bare
  argument, strict's error, the module's own tensors back after a call that fails),
  stack_module_state, copy.deepcopy of a module (its own parameters), vmap over stacked
  models, per-sample gradients through functional_call."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = {
    "docs_examples": """
import torch
from torch.func import vmap, grad, jacrev, jacfwd, functional_call, hessian, jvp, vjp
torch.manual_seed(0)
x = torch.randn(2, 5)
batched_dot = torch.func.vmap(torch.dot)
print(batched_dot(torch.randn(64, 5), torch.randn(64, 5)).shape)
batched_mv = torch.func.vmap(torch.mv, in_dims=(0, None))
print(batched_mv(torch.randn(4, 3, 5), torch.randn(5)).shape)
print(vmap(torch.sum, in_dims=1)(x))
def f(x, scale=4.):
    return x * scale
print(vmap(f)(x, scale=2.))
print(vmap(torch.trace)(torch.randn(3, 4, 4)))
print(grad(torch.sin)(torch.tensor(1.)))
print(grad(grad(torch.sin))(torch.tensor(1.)))
print(vmap(grad(torch.sin))(torch.randn(3)))
print(jacrev(torch.sin)(torch.randn(3)).diag())
print(jacfwd(torch.sin, argnums=0)(torch.randn(3)).shape)
print(hessian(torch.sin)(torch.tensor(1.)))
model = torch.nn.Linear(3, 3)
x = torch.randn(4, 3)
print(functional_call(model, dict(model.named_parameters()), (x,)).shape)
print(jvp(torch.sin, (torch.tensor(1.),), (torch.tensor(1.),)))
print(vmap(torch.outer)(torch.ones(2, 3), torch.ones(2, 2)).shape)
""",
    "vmap": """
import torch
from torch.func import vmap
torch.manual_seed(0)
x = torch.randn(3, 4)
y = torch.randn(4, 3)
print(vmap(torch.dot)(x, y.t()))
print(vmap(lambda a, b: a * b, in_dims=(1, None))(x, torch.tensor(2.0)))
print(vmap(lambda a: a.sum(), in_dims=-1)(x))
print(vmap(lambda a: (a.sin(), a.cos()), out_dims=(0, 1))(x)[1].shape)
print(vmap(vmap(lambda a, b: a * b))(x, x))
print(vmap(vmap(torch.outer, in_dims=(None, 0)), in_dims=(0, None))(x, y).shape)
print(vmap(lambda d: d['a'] + d['b'][0])({'a': x, 'b': [y.t()]}))
print(vmap(lambda a, s: a * s, in_dims=(0, None))(x, 3.0))
print(vmap(lambda a: a, out_dims=1)(x).shape)
print(torch.vmap(lambda a: a @ a)(x))
w = torch.randn(4, requires_grad=True)
out = vmap(lambda a: (a * w).sum())(x)
out.sum().backward()
print(w.grad)
f = lambda a, b: a * b
for call in (lambda: vmap(f)(torch.ones(3), torch.ones(4)),
             lambda: vmap(f, in_dims=(0,))(torch.ones(3), torch.ones(3)),
             lambda: vmap(f, in_dims=(0, 2))(torch.ones(3), torch.ones(3)),
             lambda: vmap(f, in_dims=None)(torch.ones(3), torch.ones(3)),
             lambda: vmap(f, in_dims=(None, None))(torch.ones(3), torch.ones(3)),
             lambda: vmap(f)(torch.ones(3), 2.0),
             lambda: vmap(lambda a: 3)(torch.ones(3)),
             lambda: vmap(f)(),
             lambda: vmap(f)(torch.tensor(1.), torch.ones(3)),
             lambda: vmap(f, in_dims=[0, None])(torch.ones(3), torch.ones(3)),
             lambda: vmap(f, in_dims=0.5)(torch.ones(3), torch.ones(3)),
             lambda: vmap(lambda a, b, c: a, in_dims=({'a': 0, 'b': (1, None)}, 0))(
                 torch.ones(3), torch.ones(3), {'x': [torch.ones(3)]}),
             lambda: vmap(lambda a, b, c: a, in_dims=((), 0, 0.5))(x, x, x),
             lambda: vmap(lambda a: (a, a), out_dims=(0, 1, 0))(torch.ones(3))):
    try:
        call()
    except ValueError as e:
        print("ValueError:", e)
try:
    vmap(lambda a: torch.rand(2))(torch.ones(3, 2))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    vmap(f, randomness='x')(torch.ones(3), torch.ones(3))
except RuntimeError as e:
    print("RuntimeError:", e)
print(vmap(lambda a: torch.rand(2) * 0 + a, randomness='different')(torch.ones(3, 2)))
print(vmap(lambda a: torch.rand(2) + a, randomness='same')(torch.zeros(3, 2)))
print(torch.rand(3))
""",
    "transforms": """
import torch
from torch.func import grad, grad_and_value, jacrev, jacfwd, hessian, vmap
torch.manual_seed(0)
x = torch.randn(3)
y = torch.randn(3)
W = torch.randn(2, 3)
f = lambda W, x: (W @ x).tanh()
print(jacrev(f, argnums=(0, 1))(W, x))
print(jacfwd(f, argnums=1)(W, x))
print(hessian(f, argnums=1)(W, x))
print(jacfwd(jacrev(f, argnums=1), argnums=1)(W, x).shape)
print(torch.allclose(jacrev(jacrev(f, argnums=1), argnums=1)(W, x), hessian(f, argnums=1)(W, x)))
print(hessian(lambda t: (t ** 3).sum())(x))
print(jacfwd(grad(lambda t: t.sin().sum()))(x))
loss = lambda p, t: ((p['w'] * t).sum() + p['b']) ** 2
params = {'w': torch.randn(3), 'b': torch.tensor(0.5)}
print(grad(loss)(params, x))
print(vmap(grad(loss), in_dims=(None, 0))(params, torch.randn(4, 3))['w'])
print(grad_and_value(loss)(params, x))
print(jacrev(lambda t: {'s': t.sin(), 'c': (t.cos(), t * 2)})(x)['c'][1])
g, aux = grad(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x)
print(g, aux)
h = lambda t: t.sin() * t ** 2
print(grad(grad(h))(torch.tensor(0.7)), grad(jacrev(h))(torch.tensor(0.7)))
for call in (lambda: grad(lambda t: t * 2)(x), lambda: grad(lambda t: t.sum())(2.0),
             lambda: grad(grad(lambda t: (t ** 3).sum()))(x)):
    try:
        call()
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)
""",
    "jvp_vjp_functools": """
import torch
from functools import partial
import functools
from torch.func import jvp, vjp, linearize, grad, vmap
torch.manual_seed(0)
x = torch.randn(3)
t = torch.randn(3)
W = torch.randn(2, 3)
f = lambda W, x: (W @ x).tanh()
print(jvp(partial(f, W), (x,), (t,)))
print(jvp(f, (W, x), (torch.zeros(2, 3), t))[1])
print(jvp(lambda a: (a.sin(), a * a), (x,), (t,))[1])
out, fn = vjp(f, W, x)
print(out)
print(fn(torch.ones(2)))
print(vmap(fn)(torch.eye(2))[1])
out, jfn = linearize(torch.sin, x)
print(jfn(t))
s = lambda a: a.sin().sum()
print(jvp(grad(s), (x,), (t,)))
_, hfn = vjp(grad(s), x)
print(hfn(t))
print(functools.reduce(lambda a, b: a * b, [1, 2, 3, 4]), functools.reduce(lambda a, b: a + b, [x, t], 10))
p = partial(f, W)
print(p.args[0].shape, p.func is f, type(p).__name__, type(vmap(f)).__name__)
print(grad(lambda a: grad(lambda c: (c ** 2).sum())(torch.ones(2)).sum() * a.sum())(x))
for call in (lambda: jvp(lambda a: a * 2, (torch.ones(2),), (torch.ones(3),)),
             lambda: jvp(lambda a: a * 2, torch.ones(2), (torch.ones(2),)),
             lambda: jvp(lambda a: a * 2, (torch.ones(2),), (torch.ones(2), torch.ones(2))),
             lambda: vjp(lambda a: a * 2, torch.ones(2))[1](torch.ones(3))):
    try:
        call()
    except RuntimeError as e:
        print("RuntimeError:", e)
""",
    "modules": """
import copy
import torch
import torch.nn as nn
from torch.func import functional_call, stack_module_state, vmap, grad
torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.out = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
        self.register_buffer('scale', torch.tensor(2.0))

    def forward(self, x):
        return self.out(self.fc1(x)) * self.scale

net = Net()
x = torch.randn(5, 3)
print([k for k, _ in net.named_parameters()], [k for k, _ in net.named_buffers()])
new = {k: torch.ones_like(v) for k, v in net.named_parameters()}
print(functional_call(net, (new, {'scale': torch.tensor(3.0)}), (x,)))
print(functional_call(net, {'out.1.bias': torch.zeros(2)}, x))
print(net(x))
print(torch.equal(net.out[1].bias, net.out[1].bias), net.out[1].bias)
try:
    functional_call(net.fc1, {'weight2': torch.ones(4, 3)}, (x,), strict=True)
except RuntimeError as e:
    print(e)
models = [Net() for _ in range(3)]
params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()}, buffers['scale'], params['fc1.weight'].requires_grad)
base = copy.deepcopy(models[0])
print(base.fc1.weight is models[0].fc1.weight, torch.equal(base.fc1.weight, models[0].fc1.weight))
with torch.no_grad():
    base.fc1.weight.zero_()
print(models[0].fc1.weight.abs().sum() > 0, base(x).shape)
out = vmap(lambda p, b, a: functional_call(base, (p, b), (a,)), in_dims=(0, 0, None))(params, buffers, x)
print(torch.allclose(out, torch.stack([m(x) for m in models])))
def loss(p, a):
    return functional_call(models[0], p, (a,)).sum()
g = vmap(grad(loss), in_dims=(None, 0))(dict(models[0].named_parameters()), x)
print({k: tuple(v.shape) for k, v in g.items()})
print(g['out.1.bias'])
try:
    functional_call(net, {'fc1.weight': torch.ones(4, 5)}, (x,))
except RuntimeError as e:
    print('failed')
print(net.fc1.weight.shape, torch.equal(net(x), functional_call(net, {}, (x,))))
""",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_torch_func_script_prints_as_pytorch(name, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPTS[name], tmp_path)
    assert ours == theirs
    assert len(ours) > 5


def test_a_transform_of_an_outer_transforms_tensor_is_one_clear_error(tmp_path):
    """ddx's transforms differentiate their own graph: a transform inside another's function,
    of a tensor that depends on the outer one's inputs (passed, as partial(grad(f), x) under
    jvp, or captured), would leave the outer one a derivative of zero. It is refused in one
    line; a constant inner transform, and vmap of grad, are fine."""
    script = tmp_path / "nested.py"
    script.write_text(
        "import torch\nfrom functools import partial\nfrom torch.func import grad, jvp\n"
        "x = torch.ones(3)\n"
        "print(jvp(partial(grad(lambda a, b: (a * b).sin().sum()), x), (x,), (x,)))\n"
        "print(grad(lambda a: grad(lambda c: (c * a).sum())(x).sum())(x))\n"
        "print(grad(lambda a: grad(lambda c: (c ** 2).sum())(x).sum() * a.sum())(x))\n")
    got = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    errors = [s for s in got.stderr.splitlines() if s.startswith("error:")]
    assert errors == ["error: ddx does not compose torch.func transforms this way: a transform "
                      "inside another's function, of a tensor that depends on the outer one's "
                      "inputs (ddx nests them as hessian, jacfwd/jacrev/grad of "
                      "jacrev/jacfwd/grad, jvp/vjp of grad, and vmap of any)"] * 2
    assert got.stdout == "tensor([6., 6., 6.])\n"


def test_transformed_functions_print_as_pytorchs(tmp_path):
    """torch.func's transforms wrap with functools.wraps: grad(f), vmap(f), ... print as f
    does; vjp_fn and linearize's jvp_fn print as PyTorch's inner functions (addresses vary)."""
    torch_or_skip()
    script = tmp_path / "reprs.py"
    script.write_text(
        "import torch\nfrom torch.func import vmap, grad, jacrev, hessian, vjp, linearize\n"
        "def f(x):\n    return x.sin().sum()\n"
        "print(vmap(f))\nprint(grad(f))\nprint(jacrev(f))\nprint(hessian(f))\n"
        "print(vjp(f, torch.ones(2))[1])\nprint(linearize(f, torch.ones(2))[1])\n")
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                          capture_output=True, text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    address = re.compile(r" at 0x[0-9a-f]+")
    assert address.sub(" at 0x?", ours.stdout) == address.sub(" at 0x?", theirs.stdout)
    assert ours.stdout.count("<function f at 0x") == 4
