"""Replays on arrays that write into buffers nothing reads any more, and fused sums of squares."""

from __future__ import annotations

from math import prod

import numpy as np

from ..engine.reverse import unbroadcast
from ..graph import record
from ..ops.kernels_sum import torch_sum
from ..ops.kernels_summap import sum_mapped
from . import parallel
from .plan import guard


def _owned(arr, shape_dtype: tuple) -> bool:
    """Whether a replay may write into ``arr``: a whole array of its own, of that shape/dtype."""
    return type(arr) is np.ndarray and arr.flags.owndata and arr.flags.writeable and \
        arr.flags.c_contiguous and (arr.shape, arr.dtype) == shape_dtype


def unless_events(result: list) -> list | None:
    """``result``, or None when a floating-point event happened while making it (such a
    job runs the ordinary way, which reports the warnings)."""
    if record.FP_EVENTS:
        record.FP_EVENTS.clear()
        return None
    return result


def _stand_in(shape_dtype: tuple) -> np.ndarray:
    """A value given up: zeros of its shape without memory (VJPs may read shapes only)."""
    shape, dtype = shape_dtype
    return np.broadcast_to(np.zeros((), dtype), shape)


SQUARES_CHUNK = 1 << 18  # elements squared at a time: a 2 MiB buffer, in cache (measured best)
_SUMS_AS_NUMPY: list[bool] = []  # sums_as_numpy's answer, once known


def sums_as_numpy() -> bool:
    """Whether _sum_of_squares gives the bits of ddx's own sum of the squares (PyTorch's
    order, ops/kernels_sum.py) for arrays over SQUARES_CHUNK: checked once a process, on
    random numbers at sizes that take two and four blocks; where it would not, the squares
    are made and summed the ordinary way (tests/test_lean.py checks both ways)."""
    if not _SUMS_AS_NUMPY:
        rng = np.random.default_rng(2026)
        same = True
        for n in (SQUARES_CHUNK + 8, 4 * SQUARES_CHUNK + 40):
            x = rng.random(n) - 0.5
            same = same and _sum_of_squares(x).tobytes() == \
                np.asarray(torch_sum(np.square(x))).tobytes()
        _SUMS_AS_NUMPY.append(same)
    return _SUMS_AS_NUMPY[0]


def _sum_of_squares(x: np.ndarray) -> np.float64:
    """torch_sum(np.square(x)) for a C-contiguous float64 array, bit for bit, without the
    array of squares: its blocks are squared and summed a few at a time in PyTorch's order
    (kernels_summap.sum_mapped), each thread's range of PyTorch's two-pass sum on a thread."""
    return np.float64(sum_mapped(x, np.square, SQUARES_CHUNK, parallel.run_all))


def _split_into(op, args: list, kw: dict, out: np.ndarray) -> bool:
    """op.into(*args, **kw, out=out) in blocks on threads, if large (ddx/parallel.py)."""
    return parallel.elementwise(lambda *a: op.into(*a[:-1], **kw, out=a[-1]), args, out)


def _vjp_into(vjp_into, g, out, args: list, kw: dict, buffer: np.ndarray, *,
              whole: bool = True):
    """vjp_into(g, out, *args, **kw, buffer=buffer), in blocks on threads when large; the
    gradient, written into ``buffer`` when it can be. ``whole=False``: None unless split."""
    def block(*a):
        r = vjp_into(*a[:-1], **kw, buffer=a[-1])
        if r is not a[-1]:
            a[-1][...] = r
    if parallel.elementwise(block, [g, out, *args], buffer):
        return buffer
    return vjp_into(g, out, *args, **kw, buffer=buffer) if whole else None


def _big(shape_dtype: tuple) -> bool:
    """Whether a value of this shape is worth splitting between threads."""
    return parallel.threads() > 1 and prod(shape_dtype[0]) >= parallel.MIN_SIZE


class BufferReuse:
    """Template's replays on arrays (a mixin: it reads Template's columns): the plan of which
    arrays may be overwritten, the forward pass that follows it, and the backward pass."""

    __slots__ = ()

    def reuse_plan(self) -> tuple[dict, dict, dict]:
        """Which arrays a replay may overwrite instead of allocating new ones (fresh memory
        means page faults: for large arrays, allocation is most of an op's cost), and which
        sums of squares need no array for the squares. Three maps:

        forward {i: j}: op i writes into the array of its input j when j is an op result no
        later op and no VJP reads (Op.reads), i's op can write into a buffer (Op.into), and
        the two have the same shape and dtype.
        fused {s: q}: sum(q) of q = p^2 that nothing else reads is summed chunk by chunk in
        numpy's own pairwise order (_sum_of_squares), so q's array is never made.
        backward {i: j}: node i's VJP (Op.vjp_into) writes its gradient into the array of
        node j: i itself once its gradient is complete, if i's VJPs do not read it, or i's one
        input, if no other VJP reads that. The output is never overwritten.
        A value given up is replaced by a zero-strided stand-in of its shape. The numbers are
        the same bits: the same ufuncs in the same order (tests compare with a full replay)."""
        if self.reuse is None:
            ops, out, shapes, kws = self.op, self.output, self.shapes, self.kw
            last: dict[int, int] = {}
            readers: dict[int, list[int]] = {}
            for p, i in enumerate(self.forward_order):
                for j in self._inputs(i):
                    last[j] = p
                    readers.setdefault(j, []).append(i)
            read: dict[int, int] = {}  # value -> how many VJPs that run read it
            for i in self.backward_order:
                if "i" in ops[i].reads:
                    for j in set(self._inputs(i)):
                        read[j] = read.get(j, 0) + 1
                if "o" in ops[i].reads:
                    read[i] = read.get(i, 0) + 1
            forward: dict[int, int] = {}
            for p, i in enumerate(self.forward_order):
                op = ops[i]
                if op.into is None or not op.elementwise:
                    continue
                for j in self._inputs(i):
                    if ops[j] is not None and j != out and j not in read and last[j] == p \
                            and shapes[j] == shapes[i]:
                        forward[i] = j
                        break
            fused: dict[int, int] = {}
            for s in self.forward_order:
                q = self.a[s]
                if ops[s].name == "sum" and kws[s] is None and q is not None and q >= 0 \
                        and ops[q] is not None and ops[q].name == "pow_scalar" \
                        and kws[q] == {"exponent": 2} and q != out and q not in read \
                        and readers.get(q) == [s] and shapes[q][1] == np.float64 \
                        and self.a[q] not in forward.values():
                    fused[s] = q
            squares = set(fused.values())  # (their arrays are never made)
            backward: dict[int, int] = {}
            for i in self.backward_order:
                if ops[i].vjp_into is None or i == out:
                    continue
                if "o" not in ops[i].reads and i not in squares:
                    backward[i] = i
                    continue
                ins = self._inputs(i)  # x^2's VJP is 2*x*g: x's array, if only it reads x
                if len(ins) == 1:
                    j = ins[0]
                    mine = 1 if "i" in ops[i].reads else 0
                    if ops[j] is not None and j != out and read.get(j, 0) == mine \
                            and shapes[j] == shapes[i]:
                        backward[i] = j
            self.reuse = (forward, fused, backward)
        return self.reuse

    def _forward_reusing(self, values: list) -> list | None:
        plan, fused, _ = self.reuse_plan()
        squares = {q: s for s, q in fused.items()}
        fns, kws, ops, shapes = self.fn, self.kw, self.op, self.shapes
        with guard():
            for i in self.forward_order:
                if i in squares:  # summed without its array (below), made there if need be
                    values[i] = _stand_in(shapes[i])
                    continue
                if i in fused:
                    q = fused[i]
                    base = values[self.a[q]]
                    if type(base) is np.ndarray and base.dtype == np.float64 and \
                            base.flags.c_contiguous and \
                            (base.size <= SQUARES_CHUNK or sums_as_numpy()):
                        values[i] = np.asarray(_sum_of_squares(base))
                        continue
                    values[q] = np.asarray(fns[q](base, **kws[q]))
                args = self._args(values, i)
                kw = kws[i] or {}
                j = plan.get(i)
                buf = values[j] if j is not None else None
                if _owned(buf, shapes[i]):
                    if not _split_into(ops[i], args, kw, buf):
                        ops[i].into(*args, **kw, out=buf)
                    values[i] = buf
                    values[j] = _stand_in(shapes[j])  # its array now holds node i's value
                    continue
                if ops[i].into is not None and ops[i].elementwise and _big(shapes[i]):
                    buf = np.empty(*shapes[i])  # (no page is touched unless it is used)
                    if _split_into(ops[i], args, kw, buf):
                        values[i] = buf
                        continue
                v = fns[i](*args, **kw)
                values[i] = v if type(v) is np.ndarray else np.asarray(v)
        return unless_events(values)

    def _backward_arrays(self, values: list, g0: np.ndarray, into: dict) -> list | None:
        adj: list = [None] * self.n
        adj[self.output] = g0
        shapes, ops = self.shapes, self.op
        with guard():
            for i in self.backward_order:
                vjps, kw = self.vjp[i], self.kw[i] or {}
                g = adj[i]
                out = values[i]
                args = self._args(values, i)
                for slot in self.grad_slots[i]:
                    j = into.get(i) if into else None
                    buffer = values[j] if j is not None else None
                    write = ops[i].vjp_into[slot] if ops[i].vjp_into is not None else None
                    if write is not None and _owned(buffer, shapes[j] if j is not None else ()):
                        gi = _vjp_into(write, g, out, args, kw, buffer)
                        if gi is buffer:  # the array is a gradient now
                            values[j] = _stand_in(shapes[j])
                    else:
                        gi = None
                        if write is not None and ops[i].elementwise and _big(shapes[i]):
                            gi = _vjp_into(write, g, out, args, kw, np.empty(*shapes[i]),
                                           whole=False)  # (a new array, split or not at all)
                        if gi is None:
                            gi = vjps[slot](g, out, *args, **kw)
                    j = self._slot_input(i, slot)
                    if type(gi) is not np.ndarray:
                        gi = np.asarray(gi)
                    shape, dtype = shapes[j]
                    if gi.shape != shape:
                        gi = unbroadcast(gi, shape)
                    if gi.dtype != dtype:
                        gi = gi.astype(dtype)
                    prev = adj[j]
                    adj[j] = gi if prev is None else np.asarray(prev + gi)
        return unless_events(adj)
