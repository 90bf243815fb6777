"""The engine's PyTorch surface (issue 15): hooks on grad_fn nodes (register_prehook /
register_hook on a Function and on a leaf's AccumulateGrad, register_multi_grad_hook, saved
tensors' unpack hooks), backward(inputs=...) and anomaly mode, in PyTorch's order with
PyTorch's checks and messages (tests/pyscripts/hooks/*.py through ddx and through Python),
and the engine's part on its own, with gradients derived by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import torch_or_skip

from ddx.app.session import Session
from ddx.engine import reverse
from ddx.graph import record
from ddx.graph.tensor import NodeHooks, Tensor
from ddx.ops.table import OPS

SCRIPTS = sorted((Path(__file__).parent / "pyscripts" / "hooks").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_node_hook_script_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = _both(path, tmp_path)
    assert ours == theirs


def _both(path: Path, tmp_path) -> tuple[list[str], list[str]]:
    """stdout of the script through ddx and through Python; ddx's stderr holds only ddx's
    notes of nan and inf and PyTorch's anomaly-mode warning (no error)."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(path.read_text())
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)],
                          capture_output=True, text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0 and "error" not in ours.stderr, ours.stderr
    return ours.stdout.splitlines(), theirs.stdout.splitlines()


def _graph():
    """y = x * w, z = sum(y) with x = [1, 2], w = [3, 4], recorded."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    w = Tensor(np.array([3.0, 4.0]), requires_grad=True)
    y = record.apply(OPS["mul"], [x, w])
    return x, w, y, record.apply(OPS["sum"], [y])


def _hooks(pre=None, post=None) -> NodeHooks:
    h = NodeHooks()
    if pre is not None:
        h.pre[0] = pre
    if post is not None:
        h.post[0] = post
    return h


def test_pre_hook_replaces_what_a_node_receives():
    """A pre-hook on MulBackward0 that triples the incoming ones: dz/dx = 3w, dz/dw = 3x."""
    x, w, y, z = _graph()
    seen = []
    y.grad_fn.node_hooks = _hooks(pre=lambda go: seen.append(go[0].tolist()) or (go[0] * 3,))
    Tensor.hooked += 1
    reverse.backward(z)
    assert seen == [[1.0, 1.0]]
    assert x.grad.tolist() == [9.0, 12.0] and w.grad.tolist() == [3.0, 6.0]


def test_post_hook_sees_both_sides_and_can_drop_an_input():
    """A post-hook gets (grad_inputs, grad_outputs); returning (None, g_w) leaves x no .grad."""
    x, w, y, z = _graph()
    seen = []

    def post(gi, go):
        seen.append(([g.tolist() for g in gi], [g.tolist() for g in go]))
        return (None, gi[1])
    y.grad_fn.node_hooks = _hooks(post=post)
    Tensor.hooked += 1
    reverse.backward(z)
    assert seen == [([[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]])]
    assert x.grad is None and w.grad.tolist() == [1.0, 2.0]


def test_accumulate_grad_pre_hook_runs_once_on_the_summed_gradient():
    """x used twice (x*w + x): its AccumulateGrad's pre-hook sees w + 1 once, before .grad."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    w = Tensor(np.array([3.0, 4.0]), requires_grad=True)
    s = record.apply(OPS["sum"], [record.apply(OPS["add"], [record.apply(OPS["mul"], [x, w]),
                                                              x])])
    seen = []
    x.accumulate_node().node_hooks = _hooks(pre=lambda go: seen.append(go[0].tolist()) or
                                            (go[0] * 10,))
    Tensor.hooked += 1
    reverse.backward(s)
    assert seen == [[4.0, 5.0]]
    assert x.grad.tolist() == [40.0, 50.0] and w.grad.tolist() == [1.0, 2.0]


def test_a_pre_hook_that_returns_none_for_the_gradient_stops_it():
    x, w, y, z = _graph()
    y.grad_fn.node_hooks = _hooks(pre=lambda go: (None,))
    Tensor.hooked += 1
    reverse.backward(z)
    assert x.grad is None and w.grad is None


def test_a_failed_statement_takes_its_node_hook_back():
    """SPEC section 5: a statement that fails leaves the state as it was, the hook it registered
    too (one statement: after `a; b` the first has run, as in Python)."""
    out: list[str] = []
    session = Session(out.append, out.append)
    session.run_script("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                       "y = x * 2\n"
                       "h = [y.grad_fn.register_prehook(lambda go: (go[0] * 100,)), nope]\n"
                       "y.sum().backward()\nprint(x.grad)\n")
    assert out[-1].strip() == "tensor([2., 2.])"


def test_backward_inputs_runs_only_the_nodes_toward_them():
    """z = sum(x*w) + sum(exp(w)); backward(inputs=[x]) runs MulBackward0 for x alone:
    x.grad = w, w gets nothing, and the exp branch (whose node would record) never runs."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    w = Tensor(np.array([3.0, 4.0]), requires_grad=True)
    e = record.apply(OPS["exp"], [w])
    z = record.apply(OPS["add"], [record.apply(OPS["sum"], [record.apply(OPS["mul"], [x, w])]),
                                  record.apply(OPS["sum"], [e])])
    seen: dict = {}
    reverse.backward(z, inputs=[x], record=seen, retain_graph=True)
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None
    assert e.grad_fn not in seen and sorted(f.name for f in seen) == [
        "AddBackward0", "MulBackward0", "SumBackward0"]
    reverse.backward(z, inputs=[w])  # both ways into w: x + exp(w)
    assert w.grad.tolist() == [1.0 + np.exp(3.0), 2.0 + np.exp(4.0)]
    assert x.grad.tolist() == [3.0, 4.0]


def test_anomaly_mode_stops_at_the_first_node_that_returns_nan():
    """sqrt at 0 in anomaly mode: SqrtBackward0's gradient g / (2 sqrt(0)) with g = 0 is nan,
    so PyTorch's message names it (its 0th output); without the mode the nan reaches .grad."""
    from ddx.engine.nodehooks import ANOMALY
    from ddx.errors import DdxRuntimeError

    def run():
        x = Tensor(np.array([0.0, 1.0]), requires_grad=True)
        y = record.apply(OPS["mul"], [record.apply(OPS["sqrt"], [x]),
                                      Tensor(np.array([0.0, 1.0]))])
        with np.errstate(all="ignore"):
            reverse.backward(record.apply(OPS["sum"], [y]))
        return x
    ANOMALY[:] = [True, True]
    try:
        with pytest.raises(DdxRuntimeError) as err:
            run()
        assert err.value.message == "Function 'SqrtBackward0' returned nan values in its 0th " \
                                    "output."
    finally:
        ANOMALY[:] = [False, True]
    record.FP_EVENTS.clear()
    record.WARNINGS.clear()
    x = run()
    assert np.isnan(x.grad[0]) and x.grad[1] == 0.5


def test_a_second_derivative_through_a_custom_function():
    """A custom Function (PyTorch 2's setup_context form) differentiated twice: the first
    gradient 3x^2 at 1, 2 is 3, 12; the second, through the user's backward run again on
    dual numbers, 6x: 6, 12; with respect to a non-leaf (x2 = x * 1) as well."""
    out: list[str] = []
    session = Session(out.append, out.append)
    failed = session.run_script(
        "import torch\n"
        "class Cube(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(x):\n"
        "        return x ** 3\n"
        "    @staticmethod\n"
        "    def setup_context(ctx, inputs, output):\n"
        "        ctx.save_for_backward(inputs[0])\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        x, = ctx.saved_tensors\n"
        "        return g * 3 * x ** 2\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "g, = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)\n"
        "print(g.tolist())\n"
        "print(torch.autograd.grad(g.sum(), x)[0].tolist())\n"
        "x2 = x * 1\n"
        "g2, = torch.autograd.grad(Cube.apply(x2).sum(), x2, create_graph=True)\n"
        "print(torch.autograd.grad(g2.sum(), x)[0].tolist())\n")
    assert failed == 0, out
    assert out == ["[3.0, 12.0]", "[6.0, 12.0]", "[6.0, 12.0]"]
