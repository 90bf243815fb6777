"""torch.utils.checkpoint: ``checkpoint(fn, *args, use_reentrant=...)`` and
``checkpoint_sequential(functions, segments, input, use_reentrant=...)``. ddx keeps every
activation anyway, so what a checkpoint changes is what PyTorch shows: with
``use_reentrant=False`` the ops' own nodes (the same graph as ``fn(*args)``); with
``use_reentrant=True`` (and, with PyTorch's warning, when it is not given) one
``CheckpointFunctionBackward`` node over the tensor arguments, whose backward runs the
backward of ``fn``'s graph: the arguments' gradients go on from the node, and the parameters
``fn`` used get theirs accumulated there, as PyTorch's recomputation gives them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import reverse
from ..errors import DdxTypeError
from ..graph import record
from ..graph.tensor import Function, Tensor
from ..ops.table import Op
from . import pycalls, pydata, pynn
from .pymodules import MODULES, Native, PyModule
from .values import python_truth

REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")
_TAKEN = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug")


def _reentrant(ev, kw: dict) -> bool:
    if "use_reentrant" not in kw or kw["use_reentrant"][0] is None:
        ev.warnings.append(REENTRANT_WARNING)
        return True
    return python_truth(kw["use_reentrant"][0])


def _checkpoint(ev, node, args: list, kw: dict) -> Any:
    if not args:
        raise DdxTypeError("checkpoint() missing 1 required positional argument: 'function'")
    fn, rest = args[0], list(args[1:])
    reentrant = _reentrant(ev, kw)
    passed = {k: v for k, v in kw.items() if k not in _TAKEN}
    if not reentrant:
        return pycalls.call_value(ev, node, fn, rest, passed)
    tensors = [a for a in rest if isinstance(a, Tensor) and not a.weak]
    if not any(t.requires_grad for t in tensors):
        ev.warnings.append("None of the inputs have requires_grad=True. Gradients will be None")
    copies = {id(t): Tensor(t.value, t.requires_grad) for t in tensors}
    inner = [copies.get(id(a), a) if isinstance(a, Tensor) else a for a in rest]
    out = pycalls.call_value(ev, node, fn, inner, passed)
    if not isinstance(out, Tensor) or not out.requires_grad or not record.GRAD_MODE.enabled:
        return out  # (a tuple of outputs, or nothing to differentiate: fn's result as it is)
    return _node(ev, node, out, tensors, [copies[id(t)] for t in tensors])


def _node(ev, node, out: Tensor, tensors: list, copies: list) -> Tensor:
    memo: dict = {}

    def grads(g) -> list:
        if id(g) not in memo:
            memo.clear()
            for c in copies:
                c.grad = None
            reverse.backward(out, np.asarray(g, dtype=out.value.dtype), retain_graph=True)
            memo[id(g)] = [c.grad for c in copies]
            for c in copies:
                c.grad = None
        return memo[id(g)]

    def rule(k: int):
        return lambda g, o, *xs: grads(g)[k]

    row = Op("checkpoint", "CheckpointFunctionBackward", lambda *xs: out.value,
             tuple(rule(k) for k in range(len(tensors))), elementwise=False)
    result = Tensor(np.array(out.value), True)
    result.op, result.inputs, result.kw = row.name, tuple(tensors), {}
    result.grad_fn = Function(row, row.grad_fn, result.inputs, {}, result)
    result.label = ev.label(node)
    ev.nodes.append(result)
    return result


def _checkpoint_sequential(ev, node, args: list, kw: dict) -> Any:
    """torch's checkpoint_sequential: the modules in ``segments`` runs, each but the last
    through checkpoint()."""
    names = ("functions", "segments", "input")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items() if k in names})
    functions = given["functions"]
    mods = [m for _, m in pynn.own(functions)[1]] if pynn.is_module(functions) else \
        list(functions)
    segments = int(given["segments"].value.item() if isinstance(given["segments"], Tensor)
                   else given["segments"])
    x = given["input"]
    size = len(mods) // segments
    end = -1
    extra = {k: v for k, v in kw.items() if k not in names}
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        part = _Run(mods[start:end + 1])
        x = _checkpoint(ev, node, [part, x], extra)
    for m in mods[end + 1:]:
        x = pycalls.call_value(ev, node, m, [x], {})
    return x


class _Run:
    """Modules run one after another (checkpoint_sequential's run_function)."""

    def __init__(self, mods: list) -> None:
        self.mods = mods

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        (x,) = args
        for m in self.mods:
            x = pycalls.call_value(ev, node, m, [x], {})
        return x


def register() -> None:
    module = PyModule("torch.utils.checkpoint", {
        "checkpoint": Native("checkpoint", _checkpoint),
        "checkpoint_sequential": Native("checkpoint_sequential", _checkpoint_sequential)})
    MODULES["torch.utils.checkpoint"] = module
    pydata.UTILS.members["checkpoint"] = module


register()

__all__ = ["register"]
