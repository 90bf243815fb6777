"""A custom autograd.Function whose forward returns several tensors (``return sorted, idx``).
ddx's nodes have one output each, so the outputs that can carry a gradient are packed, flat
and one after the other, into one hidden node whose rule is the user's backward; each output
is a node of its own (named ``<Cls>Backward``, as PyTorch names every output's grad_fn) that
hands its gradient to its part of the hidden one. An output the user's backward is not
reached from gets zeros there, as PyTorch materializes them; so do the outputs marked
non-differentiable (ctx.mark_non_differentiable), which require no grad."""

from __future__ import annotations

import numpy as np

from ..engine.hessian import Dual
from ..graph.tensor import Function, Tensor
from ..ops.table import Op
from .pycustom_twice import OWNERS, has_duals, plain_of


def _differentiable(t, non_diff: set) -> bool:
    return isinstance(t, Tensor) and t.value.dtype.kind == "f" and id(t) not in non_diff


def _out_rule(lo: int, hi: int, size: int):
    def vjp(g, o, h, **kw):
        full = np.zeros(size, dtype=plain_of(h).dtype)
        full[lo:hi] = plain_of(g).reshape(-1)
        if not isinstance(g, Dual):
            return full
        tangent = np.zeros(size, dtype=full.dtype)  # (a second derivative: g is dual)
        tangent[lo:hi] = np.asarray(g.t).reshape(-1)
        return Dual(full, tangent)
    return vjp


def _out_tangent(lo: int, hi: int, shape: tuple):
    return lambda ts, o, h, **kw: None if ts[0] is None else \
        np.asarray(ts[0])[lo:hi].reshape(shape)


def _split(g, outs: tuple, spans: list) -> list:
    """The packed (dual) gradient of the differentiable outputs, one per output (zeros for
    the others, as PyTorch materializes them)."""
    each = []
    for t, span in zip(outs, spans):
        if span is None:
            each.append(np.zeros(np.shape(t.value)) if isinstance(t, Tensor) else None)
            continue
        part = g[span[0]:span[1]]
        each.append(part.reshape(t.value.shape) if isinstance(part, Dual) else
                    np.asarray(part).reshape(t.value.shape))
    return each


def _packed_tangent(twice, outs: tuple, spans: list):
    def jvp(ts, o, *xs, **kw):
        got = twice.tangents(ts, xs)
        parts = [np.zeros(hi - lo) if got[i] is None else np.asarray(got[i]).reshape(-1)
                 for i, (lo, hi) in ((i, s) for i, s in enumerate(spans) if s is not None)]
        return np.concatenate(parts)
    return jvp


def input_rule(grads, positions: list, k: int, twice=None, none_is_none: bool = False):
    """The VJP a custom Function's node gives input ``k``: its backward's result at that
    input's position (``grads(g)``, the backward called once per upstream gradient), zeros
    where backward returns None for it; on dual numbers (a second derivative)
    ``twice(g, xs)``'s."""
    def vjp(g, o, *xs, **kws):
        if twice is not None and has_duals(g, xs):
            got = twice(g, xs)
            item = got[positions[k]] if positions[k] < len(got) else None
            return np.zeros(np.shape(plain_of(xs[k]))) if item is None else item
        got = grads(g)
        pos = positions[k]
        item = got[pos] if pos < len(got) else None
        if item is None:  # (no gradient this way: the engine sends none, as PyTorch's)
            return None if none_is_none else np.zeros(np.shape(xs[k]),
                                                      dtype=np.asarray(g).dtype)
        return np.asarray(item.value if isinstance(item, Tensor) else item)
    return vjp


def apply_many(ev, node, name: str, outs: tuple, inputs: list, positions: list, call_backward,
               non_diff: set, twice=None) -> tuple:
    """The outputs of ``Cls.apply(...)`` when forward returned the tuple ``outs``;
    ``call_backward(grads)`` runs the user's backward on one gradient per output."""
    parts, spans, at = [], [], 0
    for t in outs:
        if _differentiable(t, non_diff):
            parts.append(np.asarray(t.value).reshape(-1))
            spans.append((at, at + t.value.size))
            at += t.value.size
        else:
            spans.append(None)
    if not parts:
        return outs
    packed = np.concatenate(parts)
    memo: dict = {}

    def grads(g):
        if id(g) not in memo:
            memo.clear()
            each = []
            for t, span in zip(outs, spans):
                if span is None:
                    each.append(Tensor(np.zeros(np.shape(t.value))) if isinstance(t, Tensor)
                                else None)
                else:
                    each.append(Tensor(np.asarray(g[span[0]:span[1]]).reshape(t.value.shape)))
            got = call_backward(each)
            memo[id(g)] = (g, got if isinstance(got, tuple) else (got,))
        return memo[id(g)][1]

    dual_vjp = None if twice is None else \
        (lambda g, xs: twice.vjp(_split(g, outs, spans), xs))
    hidden_row = Op(f"custom_{name}", f"{name}Backward", lambda *xs: packed,
                    tuple(input_rule(lambda g: grads(np.asarray(g)), positions, k, dual_vjp)
                          for k in range(len(inputs))),
                    jvp=None if twice is None else _packed_tangent(twice, outs, spans),
                    elementwise=False)
    hidden = _node(hidden_row, packed, tuple(inputs))
    if twice is not None:
        OWNERS[hidden.grad_fn] = twice
    result = []
    for t, span in zip(outs, spans):
        if span is None:
            result.append(t)
            continue
        row = Op(f"custom_{name}_output", f"{name}Backward",
                 lambda h, lo=span[0], hi=span[1], shape=t.value.shape: h[lo:hi].reshape(shape),
                 (_out_rule(span[0], span[1], packed.size),),
                 jvp=_out_tangent(span[0], span[1], t.value.shape), elementwise=False)
        out = _node(row, np.asarray(t.value), (hidden,))
        out.label = ev.label(node)
        ev.nodes.append(out)
        result.append(out)
    return tuple(result)


def _node(row: Op, value: np.ndarray, inputs: tuple) -> Tensor:
    t = Tensor(value, True)
    t.op, t.inputs, t.kw = row.name, inputs, {}
    t.grad_fn = Function(row, row.grad_fn, inputs, {}, t)
    return t


__all__ = ["apply_many"]
