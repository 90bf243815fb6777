"""Recording: the grad mode, floating-point events as warnings, and apply(), which runs an op
forward and records it in the graph; ancestors(), the graph's one walk in order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ops import Op
from .dual import LEVEL, propagate
from .tensor import Function, Tensor


class _GradMode:
    """Global grad mode, as torch.is_grad_enabled(); ``no_grad`` flips it."""

    enabled = True


GRAD_MODE = _GradMode()

# Floating-point events (divide by zero, invalid, overflow) reported by numpy's errstate 'call'
# hook while ddx evaluates; apply() turns them into warnings naming the node.
FP_EVENTS: list[str] = []
WARNINGS: list[tuple[str, str]] = []  # (node label, message), drained by the caller


def fp_handler(kind: str, flag: int) -> None:
    FP_EVENTS.append(kind)


def fp_guard():
    """The errstate under which ddx evaluates: domain problems are recorded, never raised.

    Events nobody took up before belong to no op of this evaluation: they are dropped, so
    that they are never reported against the next op."""
    FP_EVENTS.clear()
    return np.errstate(call=fp_handler, divide="call", over="call", invalid="call", under="ignore")


def describe(value: np.ndarray) -> str:
    nan = int(np.count_nonzero(np.isnan(value)))
    inf = int(np.count_nonzero(np.isinf(value)))
    if value.ndim == 0:
        return "nan" if nan else ("inf" if value > 0 else "-inf") if inf else "a finite value"
    parts = [f"{nan} nan" if nan else "", f"{inf} inf" if inf else ""]
    return " and ".join(p for p in parts if p) or "finite values"


def apply(op: Op, inputs: Sequence[Tensor], kw: dict | None = None, *, grad_fn: str | None = None,
          span: tuple[int, int] | None = None, src: str | None = None) -> Tensor:
    """Run ``op`` forward on ``inputs`` and record it in the graph when any input requires grad.

    This is the hot path of every evaluation: plain loops, no generators."""
    kw = kw or {}
    args = []
    requires = False
    weak = const = True
    dtype = None  # the first tensor input's dtype
    for t in inputs:
        if t.weak:
            args.append(t.value.item())
        else:
            args.append(t.value)
            if weak:
                dtype = t.value.dtype
            weak = False
        if t.requires_grad:
            requires = True
        if not t.const:
            const = False
    value = op.fn(*args, **kw)
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    if dtype is not None and value.dtype is not dtype and value.dtype != dtype:
        value = _result_dtype(op, value, inputs)
    requires = requires and GRAD_MODE.enabled and op.differentiable
    out = Tensor(value, requires, span=span, src=src,
                 weak=weak and value.ndim == 0 and not requires)
    out.const = const
    out.op = op.name
    out.inputs = inputs = tuple(inputs)
    out.kw = kw
    if requires:
        out.grad_fn = Function(op, grad_fn or (op.grad_fn_for(kw) if kw else op.grad_fn), inputs,
                               kw, out)
    if LEVEL.depth:  # (forward AD: the tangent beside the value)
        propagate(op, out, inputs, args, kw)
    if FP_EVENTS:
        what = ", ".join(sorted(set(FP_EVENTS)))
        FP_EVENTS.clear()
        node = grad_fn or op.grad_fn_for(kw)
        where = out.label or op.name
        WARNINGS.append((where, f"{where} gives {describe(value)} ({what}) at {node}"))
    return out


def _result_dtype(op: Op, value: np.ndarray, inputs) -> np.ndarray:
    """The row's result dtype (Op.dtype): "same" is PyTorch's promotion of the inputs (plain
    numbers and 0-d tensors do not widen a dimensioned tensor of the same kind: a float32
    vector times a 0-d float64 tensor is float32); a kernel computing in another precision
    is cast."""
    if op.dtype != "same":
        return value.astype(op.dtype, copy=False)
    kind = value.dtype.kind
    if kind not in "fiub":
        return value
    want = promoted([t.value.dtype for t in inputs if not t.weak],
                    [t.value.ndim for t in inputs if not t.weak])
    if want.kind == "b" and kind in "iub" and any(t.weak and t.value.dtype.kind in "iu"
                                                  for t in inputs):
        return value.astype(np.int64, copy=False)  # (a bool tensor & 1: a Python int's int64)
    if want.kind in "iu" and kind in "iu" and len(inputs) > 1 or want.kind == "f" == kind:
        # (between operands: sum of int32 is int64, as PyTorch's reductions make it)
        return value.astype(want, copy=False) if want != value.dtype else value
    return value


_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def promoted(dtypes: list, ndims: list) -> np.dtype:
    """PyTorch's result_type of tensors: the highest kind (bool < int < float) wins; within
    it, the dimensioned tensors' widest dtype, or the 0-d tensors' where none has that kind."""
    top = max(_RANK.get(d.kind, 2) for d in dtypes)
    dims = [d for d, n in zip(dtypes, ndims) if n and _RANK.get(d.kind, 2) == top]
    pool = dims or [d for d in dtypes if _RANK.get(d.kind, 2) == top]
    return np.result_type(*pool)


def ancestors(root: Tensor) -> list[Tensor]:
    """Every tensor ``root`` depends on, inputs before their users, each once (explicit stack)."""
    order: list[Tensor] = []
    seen: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        t, done = stack.pop()
        if done:
            order.append(t)
            continue
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.append((t, True))
        for s in reversed(t.inputs):
            if id(s) not in seen:
                stack.append((s, False))
    return order
