"""A template read from the disk (ddx/replay/diskread.py), replayed once straight from the file's
columns, made whole only if it is used again.

A new process that reads a 10^5-op template runs it once and often exits. Making the whole
Template and its Plan (ddx/replay/plan.py) first means some thirty lists of 10^5 Python
objects, most of them in memory the process has never touched: page faults cost more than
the replay itself. So ``DiskTemplate`` has only what its first forward and backward read;
those two run over the file's validated columns (numpy arrays, read through memoryviews, one
Python int at a time: nothing is kept) with the very calls, arguments and order of the Plan
that ``Plan.restore`` would make of the same columns, so the numbers are the same bits. Any
other use (a second forward, a Plan, the JSON's fields, a column) first makes the template
whole (diskread's ``_whole``: the same ``from_columns`` and ``Plan.restore`` as a complete
read), which sets every field a Template has; from then on it is an ordinary template."""

from __future__ import annotations

import numpy as np

from ..engine.reverse import unbroadcast
from ..graph import record
from .plan import ONE, TWO, enter_guard, leave_guard
from .template import Template

# the fields made only when the template is made whole
_LAZY = frozenset(("values0", "op", "fn", "vjp", "kw", "a", "b", "many", "grad_slots",
                   "forward_order", "backward_order", "shapes", "statics", "fmt", "plan"))


class Steps:
    """The first replay's steps as columns (numpy arrays, validated by diskread): forward per
    op: form, function index, inputs; backward per gradient sent: node, form, VJP index, the
    node's inputs, target, first flag. ``fns``/``vjps``: the functions the indexes name;
    ``numbers``: the list of plain numbers in the value list's order (reversed), made at
    the first forward; ``whole``: makes the complete template (diskread)."""

    __slots__ = ("fform", "fid", "fa", "fb", "bi", "bform", "bid", "ba", "bb", "bj", "bfirst",
                 "fns", "vjps", "numbers", "whole", "ran")

    def forward(self, t, bindings: list) -> list | None:
        """Plan.forward on the columns (one run: the next one makes the template whole)."""
        self.ran = True
        scalar = t.scalar
        values = self.numbers()
        for k, arr in zip(t.slots, bindings):
            values[k] = arr[()] if scalar else arr
        kinds = (np.ndarray, np.float64) if scalar else (np.ndarray,)
        asarray = np.asarray
        fns = self.fns
        token = enter_guard()
        try:
            for i, form, f, a, b in zip(range(len(t.slots), t.n), memoryview(self.fform),
                                        memoryview(self.fid), memoryview(self.fa),
                                        memoryview(self.fb)):
                if form == TWO:
                    v = fns[f](values[a], values[b])
                elif form == ONE:
                    v = fns[f](values[a])
                else:  # SAME (diskread admits no other form)
                    values[i] = values[a]
                    continue
                values[i] = v if type(v) in kinds else asarray(v)
        finally:
            leave_guard(token)
        if record.FP_EVENTS:
            record.FP_EVENTS.clear()
            return None
        return values

    def backward(self, t, values: list, g0) -> list | None:
        """Plan.backward on the columns."""
        adj: list = [None] * t.n
        scalar = t.scalar
        adj[t.output] = g0[()] if scalar else g0
        kinds = (np.ndarray, np.float64) if scalar else (np.ndarray,)
        asarray = np.asarray
        vjps = self.vjps
        shapes = None if scalar else t.shapes
        steps = zip(memoryview(self.bi), memoryview(self.bform), memoryview(self.bid),
                    memoryview(self.ba), memoryview(self.bb), memoryview(self.bj),
                    memoryview(self.bfirst))
        token = enter_guard()
        try:
            if scalar:
                for i, form, f, a, b, j, first in steps:
                    g = adj[i]
                    if form == TWO:
                        gi = vjps[f](g, values[i], values[a], values[b])
                    elif form == ONE:
                        gi = vjps[f](g, values[i], values[a])
                    else:
                        gi = g
                    if type(gi) not in kinds:
                        gi = asarray(gi)
                    adj[j] = gi if first else adj[j] + gi
            else:
                for i, form, f, a, b, j, first in steps:
                    g = adj[i]
                    if form == TWO:
                        gi = vjps[f](g, values[i], values[a], values[b])
                    elif form == ONE:
                        gi = vjps[f](g, values[i], values[a])
                    else:
                        gi = g
                    if type(gi) is not np.ndarray:
                        gi = asarray(gi)
                    shape, dtype = shapes[j]  # (Plan.backward's checks, in its order)
                    if gi.shape != shape:
                        gi = unbroadcast(gi, shape)
                    if gi.dtype != dtype:
                        gi = gi.astype(dtype)
                    adj[j] = gi if first else asarray(adj[j] + gi)
        finally:
            leave_guard(token)
        if record.FP_EVENTS:
            record.FP_EVENTS.clear()
            return None
        return adj


class DiskTemplate(Template):
    """A Template whose first forward and backward run on ``Steps`` (see the module's
    docstring); any other field, asked for, makes it whole first."""

    __slots__ = ("steps",)

    def __getattr__(self, name: str):
        # (only reached for a field not set yet)
        if name not in _LAZY:
            raise AttributeError(name)
        self.make_whole()
        return object.__getattribute__(self, name)

    def make_whole(self) -> None:
        """Set every field a Template has, from the file's columns, and drop the columns."""
        steps = self.steps
        if steps is None:
            return
        whole = steps.whole()
        for name in Template.__slots__:
            try:
                value = object.__getattribute__(whole, name)
            except AttributeError:
                continue
            object.__setattr__(self, name, value)
        self.steps = None

    def forward(self, bindings: list, *, reuse: bool = False) -> list | None:
        steps = self.steps
        if steps is not None and not steps.ran:
            return steps.forward(self, bindings)
        self.make_whole()  # (used again: worth its Plan)
        return Template.forward(self, bindings, reuse=reuse)

    def backward(self, values: list, g0, *, reuse: bool = False) -> list | None:
        steps = self.steps
        if steps is not None:
            return steps.backward(self, values, g0)
        return Template.backward(self, values, g0, reuse=reuse)

