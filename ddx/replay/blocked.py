"""A whole sum of an elementwise chain, forward and backward in one pass over cached blocks.

``sum(e)`` (or ``mean(e)``: a whole reduction made from the sum, Op.of_sum), where e is made
from the bindings by elementwise ops, every value of one shape, is the loss that a library
trace of large arrays most often is (``sum((w*x+b)^2)``). Its backward starts with the
reduction's VJP, which spreads the seed over e's shape, and goes on by elementwise VJPs
only: each element's gradients depend on that element's values alone. So with backward()'s
default seed the whole replay can run range by range: the ops forward, the range's share of
the sum, the VJPs, on a range that stays in cache, writing only the leaves' gradients.
Memory is then read once (the bindings) and written once (the gradients), where the op-by-op
replay (BufferReuse) reads and writes every intermediate array from memory: about 120 bytes
per element against 48 for ``sum((w*x+b)^2)``.

The numbers are the same bits. The sum is kernels_summap.sum_ranges (PyTorch's order, its
thread ranges on threads); the ops and VJPs are the op table's, called on slices of the
arrays, as ddx/replay/parallel.py calls them, with range edges at multiples of 64 elements
(where PyTorch's thread ranges would put an edge elsewhere, the replay takes BufferReuse's
road); the gradients are added up in the recorded backward order, as Template's loops do.

The gradients are made during the forward pass, for the seed backward() gives a scalar
output: a forward pass that is never followed by backward pays for them, and a backward
with another seed runs the forward pass again the ordinary way (``Template.backward``)."""

from __future__ import annotations

from functools import partial
from math import prod

import numpy as np

from ..ops.kernels_reduce import expand
from ..ops.kernels_sum import GRAIN_SIZE, split_ranges, threads
from ..ops.kernels_summap import sum_ranges
from . import allocator, parallel
from .plan import guard
from .reuse import unless_events

_F64 = np.dtype(np.float64)
MIN_ELEMENTS = 1 << 19  # below, six such arrays fit in L3 and BufferReuse's road is as fast
CHUNK = 1 << 17  # elements per range (1 MiB of float64; measured best at 10^7, 2^13-2^20)
_EDGE = 64  # (parallel.py's block edges)


class Speculated(list):
    """A replay's values, with ``adj``: the gradients backward() with its default seed gives."""

    __slots__ = ("adj",)


def whole_sum(t) -> tuple | None:
    """(the sum node, its input) when template ``t`` (arrays) ends in a whole float64 sum (or
    mean: Op.of_sum) of an op's result, which its forward pass makes last and its backward
    pass starts from; else None. (This module's replays and chain.py's start there.)"""
    if t.scalar or t.one is None:
        return None
    s = t.output
    op, q = t.op[s], t.a[s]
    if op is None or op.of_sum is None or t.kw[s] is not None or q is None or q < 0 \
            or t.b[s] is not None or t.op[q] is None or t.shapes[s] != ((), _F64) \
            or not t.forward_order or t.forward_order[-1] != s \
            or not t.backward_order or t.backward_order[0] != s:
        return None
    return s, q


def steps(t):
    """(sum node, its input, forward steps, backward steps, gradient targets) when template
    ``t`` is a whole float64 sum (or mean: Op.of_sum) of values all of one shape made by elementwise ops that
    split into blocks (Op.into, as parallel.py splits them), else False. Forward steps are
    (node, fn, inputs); backward steps (node, vjp, inputs, target, first, into: the row's
    vjp_into when the target is a leaf that receives this one gradient, else None)."""
    ends = whole_sum(t)
    if ends is None:
        return False
    s, q = ends
    shape = t.shapes[q][0]
    if prod(shape) < MIN_ELEMENTS:
        return False
    whole = (shape, _F64)
    forward = []
    for i in t.forward_order[:-1]:
        op = t.op[i]
        if not op.elementwise or op.into is None or t.shapes[i] != whole:
            return False
        ins = t.many[i] if t.a[i] is None else [j for j in (t.a[i], t.b[i]) if j is not None]
        for j in ins:
            if j >= 0 and t.op[j] is None and t.shapes[j] != whole and (
                    j in t.slots or np.ndim(t.values0[j]) != 0):
                return False  # (a binding or constant of another shape: not a block's)
        fn = t.fn[i] if t.kw[i] is None else partial(t.fn[i], **t.kw[i])
        forward.append((i, fn, tuple(ins)))
    backward = []
    reached = {q}
    sent: dict[int, int] = {}  # gradients each node receives
    for i in t.backward_order[1:]:
        for slot in t.grad_slots[i]:
            j = t._slot_input(i, slot)
            sent[j] = sent.get(j, 0) + 1
    leaves = {j for _, j in t.grads_at}
    for i in t.backward_order[1:]:
        ins = t.many[i] if t.a[i] is None else [j for j in (t.a[i], t.b[i]) if j is not None]
        kw = t.kw[i] or {}
        for slot in t.grad_slots[i]:
            j = t._slot_input(i, slot)
            if t.shapes[j] != whole:
                return False
            vjp = t.vjp[i][slot]
            into = t.op[i].vjp_into[slot] if t.op[i].vjp_into is not None else None
            if into is not None and j in leaves and sent[j] == 1:
                into = partial(into, **kw)  # (a leaf's one gradient: into its own array)
            else:
                into = None
            backward.append((i, partial(vjp, **kw) if kw else vjp, tuple(ins), j,
                             j not in reached, into))
            reached.add(j)
    targets = [j for j in leaves if j in reached]
    return s, q, forward, backward, targets


def _aligned(n: int) -> bool:
    """Whether every range sum_ranges gives a thread starts at a multiple of _EDGE."""
    return n >= GRAIN_SIZE and all(lo % _EDGE == 0 for lo, _ in split_ranges(n, threads(),
                                                                             GRAIN_SIZE))


def replay(t, values: list, plan) -> Speculated | None:
    """The values of template ``t`` replayed by ``plan`` (steps(t)), the output's among them,
    with the leaves' gradients for backward()'s default seed; None when the bindings are not
    whole C-contiguous float64 arrays, a range edge would not fall on a block's edge, or a
    floating-point event happened (the caller then replays the ordinary way)."""
    s, q, forward, backward, targets = plan
    shape = t.shapes[q][0]
    n = prod(shape)
    flat = list(values)
    sliced = []  # the bindings and constants of the blocks' shape, as rows
    for k, v in enumerate(values):
        if type(v) is np.ndarray and v.shape == shape:
            if v.dtype is not _F64 or not v.flags.c_contiguous:
                return None
            flat[k] = v.reshape(-1)
            sliced.append(k)
        elif k in t.slots:
            return None
    if not _aligned(n) or not allocator.tune():
        return None  # (an allocator left as it is maps every block's arrays afresh)
    grads = {j: np.empty(n, _F64) for j in targets}
    seed = t.one
    # the reduction's VJP on the whole shape: one number seen everywhere (its value, at
    # every element of a block, is what each element's VJPs start from)
    spread = t.vjp[s][0](seed, np.zeros((), _F64), np.broadcast_to(np.zeros((), _F64), shape))
    if type(spread) is not np.ndarray or spread.shape != shape or any(spread.strides):
        return None
    spread = np.asarray(spread.flat[0])
    size = len(values)
    odd: list[int] = []
    copied = [j for j in targets if not any(st[3] == j and st[5] is not None for st in backward)]

    def block(lo: int, hi: int) -> np.ndarray:
        vals = list(flat)
        for k in sliced:
            vals[k] = flat[k][lo:hi]
        rows = (hi - lo,)
        for i, fn, ins in forward:
            v = fn(*[vals[j] for j in ins])
            vals[i] = v if type(v) is np.ndarray else np.asarray(v)
        e = vals[q]
        adj = [None] * size
        adj[q] = expand(spread, rows, None)
        for i, vjp, ins, j, first, into in backward:
            if into is not None:  # (written straight into the leaf's gradient)
                buffer = grads[j][lo:hi]
                gi = into(adj[i], vals[i], *[vals[k] for k in ins], buffer=buffer)
                if gi is not buffer and np.shape(gi) == rows:
                    buffer[...] = gi
                    gi = buffer
            else:
                gi = vjp(adj[i], vals[i], *[vals[k] for k in ins])
            if type(gi) is not np.ndarray:
                gi = np.asarray(gi)
            if gi.shape != rows:  # (not an element's own gradient: the ordinary road)
                odd.append(i)
                return e
            adj[j] = gi if first else np.asarray(adj[j] + gi)
        for j in copied:
            grads[j][lo:hi] = adj[j]
        return e

    with guard():
        total = sum_ranges(n, _F64, block, CHUNK, parallel.run_all)
    if unless_events(odd) is None or odd:  # (an event, or a gradient not an element's own)
        return None
    out = Speculated(values)
    out[s] = np.asarray(t.op[s].of_sum(total, n))
    adj: list = [None] * t.n
    adj[s] = seed
    for j, g in grads.items():
        adj[j] = g.reshape(shape)
    out.adj = adj
    return out
