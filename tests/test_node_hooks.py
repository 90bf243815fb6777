"""Hooks on grad_fn nodes (issue 15): register_prehook / register_hook on a Function and on a
leaf's AccumulateGrad, and torch.autograd.graph.register_multi_grad_hook, run in PyTorch's
order with PyTorch's checks (tests/pyscripts/hooks_*.py through ddx and through Python), and
the engine's part on its own, with gradients derived by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import ddx_and_python, torch_or_skip

from ddx.app.session import Session
from ddx.engine import reverse
from ddx.graph import record
from ddx.graph.tensor import NodeHooks, Tensor
from ddx.ops.table import OPS

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("hooks_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_node_hook_script_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


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
