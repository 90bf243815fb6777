"""PyTorch's version counters in `ddx run`: a tensor a backward needs as it was saved (an
op's output its formula reads, an input another input's gradient reads), changed in place
since, is PyTorch's "modified by an inplace operation" error, with the tensor's type, shape,
the op that made it and the versions; an in-place op's own node, a tensor no formula saved,
and the parameter updates of a training loop are fine. Each case runs through ddx and Python
with PyTorch; the outputs are equal line for line."""

from __future__ import annotations

from conftest import ddx_and_python, torch_or_skip

SCRIPT = """import torch
def attempt(f):
    try:
        f()
        print("ok")
    except RuntimeError as e:
        print("RuntimeError:", e)
def c1():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    c = b * 2
    b.add_(1)
    c.sum().backward()
def c2():
    a = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    b = a * 1
    c = b ** 2
    b.add_(1)
    c.sum().backward()
def c3():
    s = torch.tensor(2.0, requires_grad=True)
    t = s.exp()
    u = t * t
    t.mul_(2)
    u.backward()
def c4():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (w * x).sum()
    with torch.no_grad():
        w.add_(1)
    y.backward()
def ok1():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * 2
    b.mul_(3)
    (b.sum() + c.sum()).backward()
    print(a.grad)
def ok2():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.sigmoid_()
    b.sum().backward()
    print(a.grad)
def ok3():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
    print(w)
def ok4():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a + 1
    s = b.sum()
    b.add_(5)
    s.backward()
    print(a.grad)
def ok5():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    x.pow_(2)
    y = x * 3
    x.cos_()
    (x.sum() + y.sum()).backward()
    print(a.grad)
def ok6():
    t = torch.tensor(1., requires_grad=True).sin()
    t.cos_()
    t.backward()
def c6():
    a = torch.tensor([1.0, -2.0], requires_grad=True)
    b = a.relu()
    b.zero_()
    b.sum().backward()
for f in (c1, c2, c3, c4, ok1, ok2, ok3, ok4, c6, ok5, ok6):
    attempt(f)
"""


def test_in_place_changes_of_saved_tensors_fail_where_pytorch_fails(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPT, tmp_path)
    assert ours == theirs
    assert "\n".join(ours).count("is at version 1; expected version 0 instead") == 6
