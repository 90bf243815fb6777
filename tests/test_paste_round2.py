"""Everyday PyTorch and Python pasted into `ddx run` (issue 15, round 2): starred and nested
unpacking, keyword-only parameters, nested and set comprehensions, nonlocal, Python's ordering
of values and the builtins that use it. Each script runs through ddx and through Python (with
PyTorch where it imports it); the outputs must be equal line for line."""

from __future__ import annotations

import pytest
from conftest import ddx_and_python, torch_or_skip

SCRIPTS = {
    "starred_and_nested_unpacking": """
import torch
x = torch.arange(6.0).reshape(2, 3)
a, *rest = [1, 2, 3, 4]
print(a, rest)
first, *_ = x.shape
print(first, _)
*init, last = (1, 2, 3)
print(init, last)
h, (i, j) = 1, (2, 3)
print(h, i, j)
for k, (p, q) in enumerate([(1, 2), (3, 4)]):
    print(k, p, q)
for (p, q), r in zip([(1, 2), (3, 4)], "ab"):
    print(p, q, r)
a, *b, c = range(5)
print(a, b, c)
[m, n] = [5, 6]
print(m, n)
for i, (a, *b) in enumerate([[1, 2, 3], [4]]):
    print(i, a, b)
rows, *cols = x
print(rows, cols)
w = torch.ones(2, 2, requires_grad=True)
r0, r1 = w
print(r0, r1.grad_fn.name(), [*w][0].grad_fn.name(), [row.grad_fn.name() for row in w])
(a, b), (c, d) = w.tolist()
print(a, b, c, d)
for first, *others in [[1, 2, 3], [4, 5]]:
    print(first, others)
try:
    p, *q, r = [1]
except ValueError as err:
    print(err)
try:
    p, q = [1, 2, 3]
except ValueError as err:
    print(err)
""",
    "starred_displays": """
import torch
a = [1, 2]
b = [*a, 3]
c = (*a, 4)
d = *a, 5
print(b, c, d, [*range(3)], (*a,))
x = torch.ones(2)
print([*x.shape, 3], (*x.shape, 1), torch.zeros(*x.shape, 2).shape)
print([*x])
""",
    "keyword_only_parameters": """
def f(*, k=1):
    return k
def g(a, *, b):
    return a * b
def h(a, *args, scale=2, **kw):
    return (a + sum(args)) * scale, kw
print(f(), f(k=3), g(2, b=4), h(1, 2, 3), h(1, scale=3, tag="t"))
for call in (lambda: g(1, 2), lambda: g(1), lambda: f(2)):
    try:
        call()
    except TypeError as err:
        print(err)
""",
    "nested_and_set_comprehensions": """
print([(i, j) for i in range(3) for j in range(i)], {v % 3 for v in range(10)})
print([x + y for x in [1, 2] if x > 1 for y in [10, 20] if y > 10])
print({k: v for k in "ab" for v in range(2)}, [c for row in [[1, 2], [3]] for c in row])
print(sum(i * j for i in range(3) for j in range(3)), sorted({-v for v in [1, 2, 2]}))
""",
    "nonlocal_closures": """
def outer():
    count = 0
    def inner():
        nonlocal count
        count += 1
        return count
    return inner
step = outer()
print(step(), step(), outer()())
def make_adder(n):
    def add(x):
        return x + n
    return add
print(make_adder(3)(4))
""",
    "ordering_builtins": """
print(sorted([3, 1, 2]), sorted([3, 1, 2], reverse=True), sorted(["b", "a"]))
print(sorted([(2, "a"), (1, "b")]), sorted([3, 1, 2], key=lambda v: -v))
print(min([3, 1, 2]), max([3, 1, 2]), min(3, 1), max(1.5, 2), max([1, 5], key=lambda v: -v))
print(max([], default=0), min([(1, "b"), (1, "a")]), max("abc"), sorted([1, 2, 1], key=lambda v: 0))
pairs = [("b", 2), ("a", 3), ("c", 1)]
pairs.sort(key=lambda p: p[1])
print(pairs, sorted(pairs), max(pairs, key=lambda p: p[1])[0])
print("a" < "b", "ab" >= "a", [1, 2] < [1, 3], (1, 2) <= (1, 2), [1, [2, 3]] < [1, [2, 4]])
print(round(2.567, 2), round(2.5), round(3.5), round(-0.5), round(1.23456, 3), round(7))
print(abs(-3), abs(-2.5), sum([1, 2, 3]), sum([1.5, 2]), sum([[1], [2]], []), sum(range(5), 10))
print(True + True, True * 2.5, [1] + [2])
l = [3, 1, 2]
l.remove(1)
l.sort(reverse=True)
print(l)
for bad in (lambda: "a" < 1, lambda: [1] < (1,), lambda: sorted([1, "a"]), lambda: max([]),
            lambda: l.remove(9), lambda: sum(["a"], "")):
    try:
        bad()
    except (TypeError, ValueError) as err:
        print(type(err).__name__, err)
""",
    "python_number_errors": """
for bad in (lambda: 1 / 0, lambda: 1.0 / 0, lambda: 1 // 0, lambda: 2.5 // 0, lambda: 1 % 0,
            lambda: 0 ** -1):
    try:
        bad()
    except ZeroDivisionError as err:
        print(type(err).__name__, err)
try:
    {}["k"]
except KeyError as err:
    print("key", err)
""",
    "grad_fn_called_and_its_members": """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = x * 3
print(y.grad_fn.name(), y.grad_fn.metadata, type(y.grad_fn).__name__, type(y.grad_fn))
y.grad_fn.metadata["k"] = 1
print(y.grad_fn.metadata, y.retains_grad, x.retains_grad)
print(y.grad_fn(torch.ones(2)))
print((x ** 2).sum().grad_fn(torch.tensor(1.0)))
node = (x ** 2).grad_fn
print(node(torch.ones(2)), x.exp().grad_fn(torch.ones(2)), x.mean().grad_fn(torch.tensor(1.0)))
for t in (x.tanh(), x.sigmoid(), x.log(), x.sqrt(), x.relu(), x.sin(), x.abs(), 2 / x):
    print(t.grad_fn.name(), t.grad_fn(torch.ones(2)))
print((x * w).grad_fn(torch.ones(2)), (x / w).grad_fn(torch.ones(2)))
print((x + w).grad_fn(torch.ones(2)), (x - w).grad_fn(torch.ones(2)), (-x).grad_fn(torch.ones(2)))
print((x.view(1, 2) @ w.view(2, 1)).grad_fn(torch.ones(1, 1)), (x @ w).grad_fn(torch.tensor(1.)))
with torch.no_grad():
    print(x.exp().grad_fn)
e = x.exp()
print(e.grad_fn(torch.ones(2)).requires_grad)
with torch.no_grad():
    print(e.grad_fn(torch.ones(2)))
z = x.unsqueeze(1)
print(z.grad_fn.name(), z.grad_fn._saved_dim, x[0].grad_fn._saved_index, x[-1].grad_fn._saved_index)
m = torch.ones(4, 3, requires_grad=True)
for t in (m[1:], m[-2:], m[::2], m[:-1], m[:, :2], m[..., 1], m[:, 1], m.transpose(0, 1),
          m.permute(1, 0), m.unsqueeze(0).squeeze(0), m.repeat(2, 1), m.split(1)[0]):
    fn = t.grad_fn
    print(fn.name(), [getattr(fn, "_saved_" + a) for a in ("dim", "start", "end", "step", "index",
                                                          "self_sym_sizes", "dim0", "dims",
                                                          "repeats", "split_size")
                      if hasattr(fn, "_saved_" + a)])
""",
    "item_assignment_recorded_as_copyslices": """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y[0] = 5
print(y, y.grad_fn.name(), len(y.grad_fn.next_functions), y.grad_fn.next_functions[1])
t = torch.tensor(4.0, requires_grad=True)
y[1] = t * 1
print(y, y.grad_fn.next_functions[0][0].name(), y.grad_fn.next_functions[1][0].name())
y.sum().backward()
print(x.grad, t.grad)
z = x.clone()
z[z > 1] = torch.tensor(0.0)
print(z, z.grad_fn.name(), z.grad_fn.next_functions[1])
z = x.clone()
z[[0, 2]] = t
print(z, z.grad_fn.next_functions[1][0].name())
(z * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(t.grad, x.grad)
m = torch.zeros(2, 3)
m[0] = x
print(m, m.grad_fn.next_functions[0], m.is_leaf, m.requires_grad)
m[:, 1] = torch.ones(2)
print(m)
m.sum().backward()
print(x.grad)
u = x * 1
v = u * u
u[0] = 1
try:
    v.backward(torch.ones(3))
except RuntimeError as e:
    print(e)
w = x * 1
w[0] += 10
print(w)
h = torch.zeros(2, 2, requires_grad=True) * 1
h[0, 1] = 7
h[1] = torch.tensor([1.0, 2.0], dtype=torch.float64)
print(h)
with torch.no_grad():
    q = x * 1
    q[0] = 9
print(q, q.grad_fn)
try:
    y[5] = 1
except IndexError as e:
    print("IE", e)
try:
    y[0:2] = torch.ones(3)
except RuntimeError as e:
    print("RE", e)
try:
    x[x > 1] = 0
except RuntimeError as e:
    print("leaf", e)
""",
    "gradcheck": """
import torch
from torch.autograd import gradcheck
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t
    @staticmethod
    def backward(ctx, g):
        t, = ctx.saved_tensors
        return g * 3 * t
d = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
try:
    gradcheck(Bad.apply, (d,))
except RuntimeError as e:
    print(type(e).__name__)
    print(e)
print(gradcheck(torch.sin, (d,)), gradcheck(lambda a, b: a * b, (d, torch.ones(2, dtype=torch.double))))
r = torch.randn(3, dtype=torch.double, requires_grad=True)
print(gradcheck(lambda a: (a.exp(), a.sum()), d), gradcheck(torch.nn.functional.softmax, (r, 0)))
try:
    gradcheck(torch.sin, (torch.ones(2),))
except ValueError as e:
    print(e)
""",
    "custom_function_needs_input_grad_once_differentiable": """
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

class MyMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        print("needs", ctx.needs_input_grad)
        ga = grad * b if ctx.needs_input_grad[0] else None
        gb = grad * a if ctx.needs_input_grad[1] else None
        return ga, gb

x = torch.tensor([1.0, 2.0], requires_grad=True)
c = torch.tensor([3.0, 4.0])
y = MyMul.apply(x, c)
print(y, y.grad_fn.name(), type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result
    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

d = torch.tensor([0.5, 1.0], dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Exp.apply, (d,), eps=1e-6, atol=1e-4))
print(torch.autograd.gradcheck(lambda t: (t ** 2).sum(), (d,)))
class Scale(Function):
    @staticmethod
    def forward(ctx, t, k):
        ctx.k = k
        return t * k
    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None
s = Scale.apply(x, 3.0)
s.backward(torch.ones(2))
print(x.grad, s)
class Bad(Function):
    @staticmethod
    def forward(ctx, t):
        return t.clone()
    @staticmethod
    def backward(ctx, g):
        return g * 2
try:
    print(torch.autograd.gradcheck(Bad.apply, (d,), raise_exception=False))
except Exception as e:
    print(type(e).__name__)
""",
    "differentiable_grad_accumulates_as_pytorchs": """
import torch
w = torch.ones(2, requires_grad=True)
(w * w).sum().backward(create_graph=True)
print(w.grad)
w.grad.sum().backward()
print(w.grad)
v = torch.tensor([1.0, 2.0], requires_grad=True)
(v * 3).sum().backward()
(v * v).sum().backward(create_graph=True)
print(v.grad, v.grad.grad_fn.name())
x = torch.tensor(2.0, requires_grad=True)
dy, = torch.autograd.grad(x ** 3, x, create_graph=True)
print(dy, torch.autograd.grad(dy, x))
""",
    "python_string_methods": """
print("a-b".partition("-"), "a-b-c".rpartition("-"), "abcb".rfind("b"), "a b c".rsplit(" ", 1))
print("ab".isalpha(), "a1".isalnum(), " ".isspace(), "AB".isupper(), "ab".islower(), "12".isnumeric())
print("aB".swapcase(), "Straße".casefold(), "test_x".removeprefix("test_"), "x.py".removesuffix(".py"))
print("hello".index("l"), "hello".rindex("l"))
try:
    "ab".index("z")
except ValueError as e:
    print(e)
""",
    "user_exception_classes": """
class MyErr(Exception):
    pass
class Sub(MyErr, ValueError):
    pass
try:
    raise MyErr("mine")
except MyErr as e:
    print("mine", e, type(e).__name__, isinstance(e, MyErr), isinstance(e, Exception))
try:
    raise Sub("sub %d" % 2)
except ValueError as e:
    print("as value", e, type(e).__name__)
try:
    raise Sub
except MyErr as e:
    print("bare", repr(str(e)))
try:
    raise ValueError("v")
except MyErr:
    print("wrong")
except ValueError as e:
    print("right", e)
def check(x):
    if x < 0:
        raise MyErr(f"negative: {x}")
    return x
for v in (1, -1):
    try:
        print(check(v))
    except Exception as e:
        print("caught", e)

try:
    raise RuntimeError("x")
except Exception as e:
    print(isinstance(e, RuntimeError), isinstance(e, Exception), isinstance(e, ValueError))
""",
    "python_builtins_formats_and_bound_methods": """
import math
d = {"b": 2, "a": 3, "c": 1}
print(sorted(d.items(), key=lambda kv: kv[1]), max(d, key=d.get), min(d.values()))
print(d.get("z", 0), d.pop("a"), d, d.setdefault("q", 5), d)
print("%(name)s is %(age)d" % {"name": "Bob", "age": 30})
print("{:.2%}".format(0.5), "{0[1]}".format([1, 2]), "{:>{w}}".format("x", w=4))
print(math.exp(1), math.isclose(0.1 + 0.2, 0.3), math.inf, -math.inf, math.floor(2.5), math.ceil(2.1))
print(math.sqrt(2), math.log(8, 2), math.log10(100), math.pi, math.e, math.tau, math.factorial(5))
print(list(enumerate(zip("ab", [1, 2]))), [(i, c) for i, c in enumerate("hi", 1)])
n = 0
while True:
    n += 1
    if n >= 3:
        break
print(n)
print(abs(-0.0), 0.1 + 0.2)
print(10 / 4, 10 // 4, -10 // 4, 10 % -3, 2 ** -1, 7.5 // 2, pow(2, 10), pow(2, 3, 5))
print(int(True), str(None), bool([]), bool([0]), None is None, 3 in [1, 2, 3], "x" not in "abc")
print(list(range(10, 0, -3)), list(range(0)), len(range(5)))
print([1, 2, 3][::-1], "hello"[1:4], (1, 2, 3)[-1], [[1, 2], [3]][0][1])
squares = {x: x * x for x in range(4)}
print(squares, list(squares), 3 in squares)
x = [1, 2, 3]
y = x
y.append(4)
print(x, x is y, x == [1, 2, 3, 4], x.copy() is x)
a, b = 1, 2
a, b = b, a
print(a, b)
print(f"{3:03d} {3.5:08.3f} {'left':<8}| {1234567.891:,.2f} {255:x} {255:#b} {0.000123:.2e}")
print(type(1 / 2), type(4 // 2), type(True), 1_000_000)
print("{:>{w}.{p}f}|{0}".format(3.14159, w=8, p=2) if False else "{:>{}}|".format("x", 3))
for bad in ("{0[5]}", "{name}", "{0}{}", "{"):
    try:
        bad.format([1])
    except (IndexError, KeyError, ValueError) as e:
        print(type(e).__name__, e)
print(sorted(["b", "A", "c"], key=str.lower) if False else sorted(["bb", "a", "ccc"], key=len))
print(list(map("x{}".format, [1, 2])), sorted("bca"), "-".join(map(str, [1, 2])))
""",
    "learners_errors": """
import torch
x = torch.ones(2, 3, requires_grad=True)
tests = [
    lambda: (x * 2).backward(),
    lambda: torch.tensor([1, 2], requires_grad=True),
    lambda: x @ x,
    lambda: x.numpy(),
    lambda: x.add_(1),
    lambda: x.view(5),
    lambda: x + torch.ones(3, 2),
    lambda: torch.ones(2).item(),
    lambda: x.grad.zero_(),
    lambda: torch.cat([x, torch.ones(2)]),
    lambda: x.reshape(4, -1),
    lambda: x[:, 5],
    lambda: torch.stack([x, torch.ones(3, 2)]),
    lambda: x.sum(dim=2),
    lambda: torch.mm(x, torch.ones(2)),
    lambda: x.T.view(6),
    lambda: torch.zeros(2).long().requires_grad_(),
    lambda: x.new_tensor(1).backward(),
    lambda: x.retain_grad() if False else torch.ones(1).retain_grad(),
    lambda: torch.autograd.grad(x.sum(), torch.ones(1)),
    lambda: x.expand(3, 3),
    lambda: x.squeeze(5),
    lambda: torch.nn.Linear(3, 2)(torch.ones(2, 4)),
]
for i, f in enumerate(tests):
    try:
        f()
        print(i, "ok")
    except Exception as e:
        print(i, type(e).__name__, str(e).splitlines()[0][:150])
""",
    "user_classes_special_methods": """
import torch
class Point:
    count = 0
    def __init__(self, x, y=0):
        self.x, self.y = x, y
        Point.count += 1
    def __repr__(self):
        return f"Point({self.x}, {self.y})"
    def __str__(self):
        return f"<{self.x},{self.y}>"
    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)
    def __eq__(self, other):
        return self.x == other.x and self.y == other.y
    def __len__(self):
        return 2
    def __getitem__(self, i):
        return (self.x, self.y)[i]
    def __call__(self, k):
        return self.x * k
    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
p = Point(3, 4)
q = Point(1)
print(p, repr(p), [p, q], str(q), p + q, p == Point(3, 4), len(p), p[1], p(2), p.norm, Point.count)
class Data:
    def __init__(self, n):
        self.xs = torch.arange(float(n))
    def __len__(self):
        return len(self.xs)
    def __getitem__(self, i):
        return self.xs[i], self.xs[i] * 2
ds = Data(3)
print(len(ds), ds[1])
for i in range(len(ds)):
    a, b = ds[i]
    print(a.item(), b.item())
""",
    "optimizer_param_groups_and_lr_schedulers": """
import torch
w = torch.ones(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for g in opt.param_groups:
    g["lr"] = 0.5
(w * w).sum().backward()
opt.step()
print(w, opt.param_groups[0]["lr"], len(opt.param_groups), opt.param_groups[0]["momentum"])
import torch
from torch.optim.lr_scheduler import ExponentialLR, LambdaLR, MultiStepLR
torch.manual_seed(1)
w = torch.randn(3, requires_grad=True)
opt = torch.optim.Adam([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for i in range(5):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    sched.step()
    print(i, loss.item(), opt.param_groups[0]["lr"], sched.get_last_lr(), sched.last_epoch)
print(w)
for make in (lambda o: ExponentialLR(o, gamma=0.9), lambda o: MultiStepLR(o, milestones=[1, 3], gamma=0.1),
             lambda o: LambdaLR(o, lr_lambda=lambda e: 1 / (e + 1))):
    v = torch.ones(2, requires_grad=True)
    o = torch.optim.SGD([v], lr=0.3)
    s = make(o)
    for i in range(4):
        o.zero_grad()
        (v * v).sum().backward()
        o.step()
        s.step()
        print(s.get_last_lr(), v.tolist())
""",
    "clip_grad_norm_and_value": """
import torch
from torch import nn
torch.manual_seed(3)
model = nn.Linear(4, 3)
x = torch.randn(8, 4)
for i in range(3):
    model.zero_grad()
    loss = (model(x) ** 2).sum() * 10
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    print(total, model.weight.grad.norm(), model.bias.grad)
w = torch.randn(5, requires_grad=True)
(w * 3).sum().backward()
print(torch.nn.utils.clip_grad_norm_([w], 100.0), w.grad)
print(torch.nn.utils.clip_grad_norm_(w, 0.5, norm_type=1.0), w.grad)
torch.nn.utils.clip_grad_value_([w], 0.05)
print(w.grad)
""",
}


# scripts whose PyTorch warns (a UserWarning on stderr): ddx's stderr is its warnings only
WARNS = {"differentiable_grad_accumulates_as_pytorchs": "warning: Using backward() with "
                                                         "create_graph=True will create"}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_prints_what_python_prints(name, tmp_path):
    if "import torch" in SCRIPTS[name]:
        torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPTS[name], tmp_path, WARNS.get(name))
    assert ours == theirs


def test_a_failing_statement_undoes_a_recorded_item_assignment():
    from conftest import session_run

    out = session_run("import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                      "if True:\n    y[0] = 5.0\n    y[9] = 1\nprint(y)\n"
                      "y.sum().backward()\nprint(x.grad)")
    assert out == ["error: index 9 is out of bounds for dimension 0 with size 2",
                   "tensor([2., 2.], grad_fn=<MulBackward0>)", "tensor([2., 2.])"]


def test_gradcheck_of_float32_inputs_warns_as_pytorch(tmp_path):
    import subprocess
    import sys

    torch_or_skip()
    script = tmp_path / "check.py"
    script.write_text("import torch\nf = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                      "print(torch.autograd.gradcheck(torch.sin, (f,), eps=1e-3, atol=1e-2))\n")
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert ours.stdout == theirs.stdout == "True\n"
    warning = ("Input #0 requires gradient and is not a double precision floating point or "
               "complex. This check will likely fail if all the inputs are not of double "
               "precision floating point or complex.")
    assert f"warning: {warning}" in ours.stderr and f"UserWarning: {warning}" in theirs.stderr
