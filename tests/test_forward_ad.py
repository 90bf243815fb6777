"""Forward-mode AD in the REPL (issue 15): torch.autograd.forward_ad's dual tensors, eager
through the op table's forward rules (ddx/graph/dual.py), custom Functions' jvp, gradcheck's
check_forward_ad, and setattr/delattr on modules (the tutorial's way of putting duals in
one). The scripts in tests/pyscripts/forward_ad/ print what PyTorch prints; the engine's part
is checked against reverse mode and central differences."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.engine import reverse
from ddx.graph import dual, record
from ddx.graph.tensor import Tensor
from ddx.ops import OPS

SCRIPTS = sorted((Path(__file__).parent / "pyscripts" / "forward_ad").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_forward_ad_script_prints_as_pytorch(path):
    torch_or_skip()
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(path)], capture_output=True,
                          text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0 and "error" not in ours.stderr, ours.stderr
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()


UNARY = ["exp", "sin", "tanh", "sigmoid", "softplus", "atan", "square", "neg", "erf", "silu"]
BINARY = ["add", "sub", "mul", "div"]


def _chain(x: Tensor, y: Tensor, steps: list) -> Tensor:
    """An expression of x (4,) and y (3, 1), broadcast to (3, 4), reduced by sum at the end."""
    cur = x
    for kind, name in steps:
        if kind == "u":
            cur = record.apply(OPS[name], [cur])
        else:
            other = y if name != "div" else record.apply(OPS["exp"], [y])
            cur = record.apply(OPS[name], [cur, other])
    return record.apply(OPS["sum"], [cur])


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.one_of(st.tuples(st.just("u"), st.sampled_from(UNARY)),
                                st.tuples(st.just("b"), st.sampled_from(BINARY))),
                      min_size=1, max_size=6),
       seed=st.integers(0, 2**16))
def test_dual_tangent_is_the_jacobian_times_the_tangent(steps, seed):
    """<grad f, t> three ways: the dual's tangent (forward AD), reverse mode's gradient dotted
    with t, central differences along t; and every tangent is gone after the level."""
    rng = np.random.default_rng(seed)
    xv, yv = rng.uniform(-1, 1, 4) * 0.5, rng.uniform(-1, 1, (3, 1)) * 0.5
    tx, ty = rng.standard_normal(4), rng.standard_normal((3, 1))
    dual.enter()
    try:
        x, y = Tensor(xv, True), Tensor(yv, True)
        dual.set_tangent(x, Tensor(tx))
        dual.set_tangent(y, Tensor(ty))
        out = _chain(x, y, steps)
        forward = dual.tangent_of(out).value
    finally:
        dual.leave()
    assert dual.tangent_of(out) is None and not hasattr(out, "tangent")
    got = reverse.vjp(out, np.ones(()))
    backward = np.sum(got.get(id(x), 0) * tx) + np.sum(got.get(id(y), 0) * ty)
    np.testing.assert_allclose(forward, backward, rtol=1e-9, atol=1e-12)
    h = 1e-6
    up = _chain(Tensor(xv + h * tx), Tensor(yv + h * ty), steps).value
    down = _chain(Tensor(xv - h * tx), Tensor(yv - h * ty), steps).value
    np.testing.assert_allclose(forward, (up - down) / (2 * h), rtol=1e-5, atol=1e-6)


def test_a_float32_tangent_keeps_its_dtype_through_a_linear_op():
    """PyTorch's formula's dtype: clone of a float64 dual with a float32 tangent keeps float32;
    sin mixes in the float64 primal (cos x), so float64; the shape follows broadcasting."""
    dual.enter()
    try:
        x = Tensor(np.array([1.0, 2.0]))
        dual.set_tangent(x, Tensor(np.array([1.0, 0.5], dtype=np.float32)))
        c = record.apply(OPS["clone"], [x])
        s = record.apply(OPS["sin"], [x])
        b = record.apply(OPS["add"], [x, Tensor(np.zeros((3, 1)))])
        assert dual.tangent_of(c).value.dtype == np.float32
        assert dual.tangent_of(s).value.dtype == np.float64
        np.testing.assert_array_equal(dual.tangent_of(s).value,
                                      np.array([1.0, 0.5], np.float32) * np.cos([1.0, 2.0]))
        assert dual.tangent_of(b).value.shape == (3, 2)
        assert dual.tangent_of(b).value.tolist() == [[1.0, 0.5]] * 3
    finally:
        dual.leave()


def test_nested_levels_are_refused_and_outside_a_level_nothing_is_carried():
    dual.enter()
    try:
        with pytest.raises(Exception, match="Nested forward mode AD is not supported"):
            dual.enter()
    finally:
        dual.leave()
    x = Tensor(np.array([1.0]))
    x.tangent = Tensor(np.array([1.0]))  # (a stale slot: outside a level it is not read)
    assert dual.tangent_of(x) is None
    assert not hasattr(record.apply(OPS["exp"], [x]), "tangent")


def _ddx_run(tmp_path, text: str):
    script = tmp_path / "s.py"
    script.write_text(text)
    return subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=60)


def test_the_forward_ad_tutorial_runs_through_a_custom_function(tmp_path):
    """The tutorial's custom Function (jvp, `del ctx.result`) and gradcheck's forward check:
    the tangent of exp is exp(x) * t."""
    got = _ddx_run(
        tmp_path, "import torch\nimport torch.autograd.forward_ad as fwAD\n"
        "class Fn(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, foo):\n        ctx.result = torch.exp(foo)\n"
        "        return ctx.result\n"
        "    @staticmethod\n    def jvp(ctx, gI):\n        gO = gI * ctx.result\n"
        "        del ctx.result\n        return gO\n"
        "p = torch.tensor([0.0, 1.0], dtype=torch.double)\n"
        "with fwAD.dual_level():\n"
        "    out = Fn.apply(fwAD.make_dual(p, torch.tensor([2.0, 3.0], dtype=torch.double)))\n"
        "    print(fwAD.unpack_dual(out).tangent.tolist())\n"
        "print(torch.autograd.gradcheck(Fn.apply, (p.requires_grad_(),), check_forward_ad=True,"
        " check_backward_ad=False))\n")
    assert got.stdout.splitlines() == [str([2.0, 3 * float(np.exp(1.0))]), "True"], got.stderr


def test_threads_run_their_targets_in_start_order(tmp_path):
    """threading.Thread's start() runs the target to its end at once: the autograd notes'
    train_fn in three threads gives x.grad = (x + 4) * 0.5 + (x + 3) * 0.5 = 4.5 each time,
    printed in start order; join before start is Python's error."""
    got = _ddx_run(
        tmp_path, "import torch\nimport threading\norder = []\n"
        "def train_fn(k):\n    x = torch.ones(2, requires_grad=True)\n"
        "    ((x + 3) * (x + 4) * 0.5).sum().backward()\n    order.append((k, x.grad.tolist()))\n"
        "ts = [threading.Thread(target=train_fn, args=(k,)) for k in range(3)]\n"
        "for t in reversed(ts):\n    t.start()\n"
        "for t in ts:\n    t.join()\nprint(order)\n"
        "try:\n    threading.Thread(target=print).join()\n"
        "except RuntimeError as e:\n    print(e)\n")
    assert got.stdout.splitlines() == [
        "[(2, [4.5, 4.5]), (1, [4.5, 4.5]), (0, [4.5, 4.5])]",
        "cannot join thread before it is started"], got.stderr


# rows whose PyTorch op has no forward AD ("Trying to use forward AD with _cdist_forward that
# does not support it because it has not been implemented yet."): checked against differences
NO_TORCH_FORWARD_AD = {"cdist"}


def _dual_replay(trace, tangents: dict):
    """The traced computation run again inside a dual level, each leaf given its tangent:
    the output's tangent by forward AD (record.apply's propagation, row by row)."""
    new: dict = {}
    dual.enter()
    try:
        for t in record.ancestors(trace.output):
            if not t.inputs:
                leaf = Tensor(t.value, weak=t.weak)
                if t.name in tangents:
                    dual.set_tangent(leaf, Tensor(tangents[t.name]))
                new[id(t)] = leaf
            else:
                new[id(t)] = record.apply(OPS[t.op], [new[id(s)] for s in t.inputs], t.kw)
        got = dual.tangent_of(new[id(trace.output)])
        return None if got is None else got.value
    finally:
        dual.leave()


@pytest.mark.parametrize("name", [n for n in sorted(OPS) if OPS[n].differentiable])
def test_every_rows_tangent_is_pytorchs_forward_ad(name):
    """Each differentiable row's example, its leaves made duals with random tangents: ddx's
    tangent against torch.autograd.forward_ad's on the emitted torch code (float64)."""
    torch = torch_or_skip()
    import torch.autograd.forward_ad as fwAD
    from test_table import _torch_function, traced

    g, values = traced(name, b"forward-ad")
    rng = np.random.default_rng(7)
    tangents = {var: rng.standard_normal(np.shape(values[var])) for var in g.leaves}
    ours = _dual_replay(g, tangents)
    assert ours is not None, name
    f = _torch_function(g, torch)
    if name in NO_TORCH_FORWARD_AD:  # (then against central differences along the tangent)
        def at(h):
            return f(*[torch.tensor(np.asarray(values[v], dtype=np.float64) + h * tangents[v])
                       for v in g.leaves]).detach().numpy()
        np.testing.assert_allclose(ours, (at(1e-6) - at(-1e-6)) / 2e-6, rtol=1e-5, atol=1e-7)
        with pytest.raises(RuntimeError, match="not been implemented"), fwAD.dual_level():
            f(*[fwAD.make_dual(torch.tensor(np.asarray(values[v], dtype=np.float64)),
                               torch.tensor(tangents[v])) for v in g.leaves])
        return
    with fwAD.dual_level():
        args = [fwAD.make_dual(torch.tensor(np.asarray(values[var], dtype=np.float64)),
                               torch.tensor(tangents[var])) for var in g.leaves]
        theirs = fwAD.unpack_dual(f(*args)).tangent
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == np.float64


def test_a_long_level_keeps_only_the_living_tensors_references():
    """10,000 ops in one level, each result dropped at once: the level's list of tensors with
    tangents stays small (dead references pruned), and the live dual still loses its tangent
    at the end."""
    dual.enter()
    try:
        x = Tensor(np.array([1.0, 2.0]))
        dual.set_tangent(x, Tensor(np.array([1.0, 1.0])))
        for _ in range(10_000):
            y = record.apply(OPS["exp"], [x])
        assert dual.tangent_of(y).value.tolist() == np.exp([1.0, 2.0]).tolist()
        assert dual.carried() < 4200
    finally:
        dual.leave()
    assert not hasattr(x, "tangent") and not hasattr(y, "tangent")
