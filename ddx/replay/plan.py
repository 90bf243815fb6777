"""Small replays as precomputed steps: the fixed cost of a call kept to the numbers' own work.

A template's forward and backward loops decide, op by op and call by call, which form each
call takes (one input, two, keywords), whether a gradient is an input's first or is added to
one, whether it may need a cast. For a template that comes back those answers never change,
so ``Plan`` makes them once: each step is a tuple naming its form, and a backward step knows
whether it assigns or adds. The calls are the same op-table functions on the same values in
the same order as Template's loops, so the numbers are the same bits (tests compare them).

Plans are for scalar templates and arrays of up to SMALL elements, where an op costs about
what the interpreter spends deciding how to call it. Larger arrays take BufferReuse's path,
whose buffers matter more there than the interpreter.

``guard()`` is record.fp_guard with numpy's error state made once: numpy 2 keeps it in a
context variable, and np.errstate builds a new one on every entry (about 2 µs, more than a
scalar replay's arithmetic). Where numpy has no such variable, it is np.errstate itself."""

from __future__ import annotations

from functools import partial
from math import prod
from operator import itemgetter

import numpy as np

from ..engine.reverse import unbroadcast
from ..gcpause import paused
from ..graph import record

SMALL = 1 << 14  # elements (128 KiB of float64): malloc's heap, no buffers to reuse

# step forms
TWO, ONE, MANY, SAME = 0, 1, 2, 3


class _Guard:
    """record.fp_guard's error state, entered without building it again each time."""

    __slots__ = ("token",)

    def __init__(self) -> None:
        self.token = None

    def __enter__(self):
        record.FP_EVENTS.clear()
        self.token = _VAR.set(_EXT)

    def __exit__(self, *exc) -> None:
        _VAR.reset(self.token)


def _errstate():
    try:
        from numpy._core import _ufunc_config as config

        ext = config._make_extobj(call=record.fp_handler, divide="call", over="call",
                                  invalid="call", under="ignore")
        var = config._extobj_contextvar
        token = var.set(ext)  # (checked: the state it sets is fp_guard's)
        try:
            same = np.geterr() == {"divide": "call", "over": "call", "under": "ignore",
                                   "invalid": "call"} and np.geterrcall() is record.fp_handler
        finally:
            var.reset(token)
        return (var, ext) if same else None
    except Exception:  # noqa: BLE001 - another numpy: np.errstate, as fp_guard
        return None


_FOUND = _errstate()
_VAR, _EXT = _FOUND if _FOUND is not None else (None, None)


def guard():
    """A context in which ddx evaluates (record.fp_guard's state); a new one per use, so
    that threads replaying at once each keep their own token."""
    return _Guard() if _VAR is not None else record.fp_guard()


def _enter():
    """guard() without a context manager's calls, for the Plan's loops: a token for _leave."""
    record.FP_EVENTS.clear()
    if _VAR is not None:
        return _VAR.set(_EXT)
    state = record.fp_guard()
    state.__enter__()
    return state


def _leave(token) -> None:
    if _VAR is not None:
        _VAR.reset(token)
    else:
        token.__exit__(None, None, None)


enter_guard, leave_guard = _enter, _leave  # (for the other loops of Plan's kind: disktemplate)


class Plan:
    """A template's replay as steps (see the module's docstring), in columns: lists of ints
    and shared functions, so a 100,000-op plan adds no objects for the collector to walk.

    Forward, per step: node ``fi``, its form, ``ffn``, inputs ``fa``, ``fb``: the node is
    fn(values[a], values[b]) (TWO), fn(values[a]) (ONE), fn(*values at b) (MANY, b the tuple
    of inputs) or values[a] itself (SAME: a whole sum of a single number). Backward, per
    gradient sent: from node ``bi`` to node ``bj``, by the same forms with (g, out) first;
    ``bfirst`` when it is the first gradient j receives (assigned, not added)."""

    __slots__ = ("fi", "fform", "ffn", "fa", "fb", "bi", "bform", "bvjp", "ba", "bb", "bj",
                 "bfirst", "bslot", "scalar", "kinds")

    def __init__(self, t) -> None:
        with paused():
            self._build(t)

    def _build(self, t) -> None:
        self.scalar = scalar = t.scalar
        self.kinds = (np.ndarray, np.float64) if scalar else (np.ndarray,)
        ops, fns, kws, a_of, b_of, many = t.op, t.fn, t.kw, t.a, t.b, t.many
        same: set[int] = set()
        fi, fform, ffn, fa, fb = [], [], [], [], []
        for i in t.forward_order:
            kw, a, b = kws[i], a_of[i], b_of[i]
            fi.append(i)
            fa.append(a)
            if scalar and kw is None and b is None and a is not None and a >= 0 \
                    and ops[i].name == "sum":
                same.add(i)  # the sum of one float64 number is that number, bit for bit
                fform.append(SAME)
                ffn.append(None)
                fb.append(None)
                continue
            ffn.append(fns[i] if kw is None else partial(fns[i], **kw))
            if a is None:
                fform.append(MANY)
                fb.append(many[i])
            else:
                fform.append(ONE if b is None else TWO)
                fb.append(b)
        self.fi, self.fform, self.ffn, self.fa, self.fb = fi, fform, ffn, fa, fb
        bi, bform, bvjp, ba, bb, bj, bfirst, bslot = [], [], [], [], [], [], [], []
        reached = bytearray(t.n)
        vjps_of, slots_of = t.vjp, t.grad_slots
        for i in t.backward_order:
            kw, a, b = kws[i], a_of[i], b_of[i]
            for slot in slots_of[i]:
                j = (many[i][slot] if a is None else b if slot else a)
                bi.append(i)
                bj.append(j)
                bslot.append(slot)
                bfirst.append(not reached[j])
                reached[j] = 1
                ba.append(a)
                if i in same:
                    bform.append(SAME)
                    bvjp.append(None)
                    bb.append(None)
                    continue
                vjp = vjps_of[i][slot]
                bvjp.append(vjp if kw is None else partial(vjp, **kw))
                if a is None:
                    bform.append(MANY)
                    bb.append(many[i])
                else:
                    bform.append(ONE if b is None else TWO)
                    bb.append(b)
        self.bi, self.bform, self.bvjp, self.ba, self.bb = bi, bform, bvjp, ba, bb
        self.bj, self.bfirst, self.bslot = bj, bfirst, bslot

    @classmethod
    def restore(cls, t, fform: list, back: list, kws: dict) -> Plan:
        """The Plan of a compiled template ``t`` (ddx/replay/diskcache.py): forward forms
        per op, and per gradient sent its node, form, target, first flag, input slot and
        the op table's VJP, as ``Plan(t)`` made them; ``kws``: {op row: kw}."""
        self = cls.__new__(cls)
        self.scalar = t.scalar
        self.kinds = (np.ndarray, np.float64) if t.scalar else (np.ndarray,)
        k = t.slots[-1] + 1 if t.slots else 0
        bi, bform, bj, bfirst, bslot, vjps = back
        self.fi, self.fform, self.fa, self.fb = t.forward_order, fform, t.a[k:], t.b[k:]
        ffn = list(t.fn[k:])
        for row, kw in kws.items():
            ffn[row] = partial(ffn[row], **kw)
        self.ffn = ffn
        self.bi, self.bform, self.bj, self.bfirst, self.bslot = bi, bform, bj, bfirst, bslot
        if len(bi) == 1:
            self.ba, self.bb = [t.a[bi[0]]], [t.b[bi[0]]]
        else:
            pick = itemgetter(*bi)
            self.ba, self.bb = pick(t.a), pick(t.b)
        if kws:
            for e, i in enumerate(bi):
                kw = kws.get(i - k)
                if kw:
                    vjps[e] = partial(vjps[e], **kw)
        self.bvjp = vjps
        return self

    @staticmethod
    def fits(t) -> bool:
        """Whether template ``t`` replays by a plan: scalars, or arrays of at most SMALL."""
        return t.scalar or all(prod(shape) <= SMALL for shape, _ in t.shapes)

    def forward(self, values: list) -> list | None:
        kinds = self.kinds
        asarray = np.asarray
        token = _enter()
        try:
            for i, form, fn, a, b in zip(self.fi, self.fform, self.ffn, self.fa, self.fb):
                if form == TWO:
                    v = fn(values[a], values[b])
                elif form == ONE:
                    v = fn(values[a])
                elif form == SAME:
                    values[i] = values[a]
                    continue
                else:
                    v = fn(*[values[k] for k in b])
                values[i] = v if type(v) in kinds else asarray(v)
        finally:
            _leave(token)
        if record.FP_EVENTS:
            record.FP_EVENTS.clear()
            return None
        return values

    def backward(self, t, values: list, g0) -> list | None:
        adj: list = [None] * t.n
        scalar = self.scalar
        adj[t.output] = g0[()] if scalar else g0
        kinds = self.kinds
        asarray = np.asarray
        shapes = t.shapes
        steps = zip(self.bi, self.bform, self.bvjp, self.ba, self.bb, self.bj, self.bfirst)
        token = _enter()
        try:
            if scalar:
                for i, form, vjp, a, b, j, first in steps:
                    g = adj[i]
                    if form == TWO:
                        gi = vjp(g, values[i], values[a], values[b])
                    elif form == ONE:
                        gi = vjp(g, values[i], values[a])
                    elif form == SAME:
                        gi = g
                    else:
                        gi = vjp(g, values[i], *[values[k] for k in b])
                    if type(gi) not in kinds:
                        gi = asarray(gi)
                    adj[j] = gi if first else adj[j] + gi
            else:
                for i, form, vjp, a, b, j, first in steps:
                    g = adj[i]
                    if form == TWO:
                        gi = vjp(g, values[i], values[a], values[b])
                    elif form == ONE:
                        gi = vjp(g, values[i], values[a])
                    elif form == SAME:
                        gi = g
                    else:
                        gi = vjp(g, values[i], *[values[k] for k in b])
                    if type(gi) is not np.ndarray:
                        gi = asarray(gi)
                    shape, dtype = shapes[j]  # (Template._backward_arrays's checks, in order)
                    if gi.shape != shape:
                        gi = unbroadcast(gi, shape)
                    if gi.dtype is not dtype and gi.dtype != dtype:  # (the same object: no
                        gi = gi.astype(dtype)                        # comparison's call)
                    adj[j] = gi if first else asarray(adj[j] + gi)
        finally:
            _leave(token)
        if record.FP_EVENTS:
            record.FP_EVENTS.clear()
            return None
        return adj
