"""A custom autograd.Function whose forward returns several tensors (``return sorted, idx``).
ddx's nodes have one output each, so the outputs that can carry a gradient are packed, flat
and one after the other, into one hidden node whose rule is the user's backward; each output
is a node of its own (named ``<Cls>Backward``, as PyTorch names every output's grad_fn) that
hands its gradient to its part of the hidden one. An output the user's backward is not
reached from gets zeros there, as PyTorch materializes them; so do the outputs marked
non-differentiable (ctx.mark_non_differentiable), which require no grad."""

from __future__ import annotations

import numpy as np

from ..graph.tensor import Function, Tensor
from ..ops.table import Op


def _differentiable(t, non_diff: set) -> bool:
    return isinstance(t, Tensor) and t.value.dtype.kind == "f" and id(t) not in non_diff


def _out_rule(lo: int, hi: int, size: int):
    def vjp(g, o, h, **kw):
        full = np.zeros(size, dtype=np.asarray(h).dtype)
        full[lo:hi] = np.asarray(g).reshape(-1)
        return full
    return vjp


def input_rule(grads, positions: list, k: int):
    """The VJP a custom Function's node gives input ``k``: its backward's result at that
    input's position (``grads(g)``, the backward called once per upstream gradient), zeros
    where backward returns None for it."""
    def vjp(g, o, *xs, **kws):
        got = grads(g)
        pos = positions[k]
        item = got[pos] if pos < len(got) else None
        if item is None:
            return np.zeros(np.shape(xs[k]), dtype=np.asarray(g).dtype)
        return np.asarray(item.value if isinstance(item, Tensor) else item)
    return vjp


def apply_many(ev, node, name: str, outs: tuple, inputs: list, positions: list, call_backward,
               non_diff: set) -> tuple:
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

    hidden_row = Op(f"custom_{name}", f"{name}Backward", lambda *xs: packed,
                    tuple(input_rule(lambda g: grads(np.asarray(g)), positions, k)
                          for k in range(len(inputs))), elementwise=False)
    hidden = _node(hidden_row, packed, tuple(inputs))
    result = []
    for t, span in zip(outs, spans):
        if span is None:
            result.append(t)
            continue
        row = Op(f"custom_{name}_output", f"{name}Backward",
                 lambda h, lo=span[0], hi=span[1], shape=t.value.shape: h[lo:hi].reshape(shape),
                 (_out_rule(span[0], span[1], packed.size),), elementwise=False)
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
