"""Values and gradients without the Tensor graph: a graph as flat columns, replayed.

A template holds the ops in order, where each input comes from, the order in which backward
visits the nodes, and every field of the JSON that does not depend on the values. It comes
from a finished trace (``Template.from_trace``, when the same text, options and binding
shapes come back) or straight from the source text (``lean.compile_source``). A replay only
recomputes values and gradients through the same op table, in the same order, so its
numbers and JSON are identical to a fresh run's. A replay whose numbers raise a
floating-point event (a domain warning) returns None and the caller runs the ordinary way,
which reports the warnings. A template that comes back replays by a ``Plan`` of precomputed
steps (ddx/replay/plan.py) when its arrays are small; library replays of large arrays
overwrite arrays nothing reads any more (``Template.reuse_plan``, ddx/replay/reuse.py) and
keep glibc from mapping fresh pages per call (ddx/replay/allocator.py). The JSON is written
by ddx/replay/jsonfmt.py."""

from __future__ import annotations

import numpy as np

from ..ops import OPS, display_name
from . import allocator, blocked, chain
from .jsonfmt import JsonBody, JsonDocument, middle_fields, op_fields, texts
from .plan import Plan, guard
from .reuse import BufferReuse, unless_events

LARGE = 2  # Template.plan for arrays too large for a Plan

# The input slots that receive gradients, shared between ops (no new object per op).
_SLOTS = {(): (), (0,): (0,), (1,): (1,), (0, 1): (0, 1)}


class Template(JsonDocument, BufferReuse):
    """A recorded graph in columns, replayable on new bindings.

    Per node i: ``fn[i]`` (the op table's forward function, None for leaves and constants),
    ``vjp[i]``, ``kw[i]`` (None when empty), its inputs ``a[i]`` and ``b[i]`` (``b[i]`` None
    for one input; ops with more inputs have ``a[i]`` None and their inputs in ``many[i]``),
    and ``grad_slots[i]``, which inputs receive a gradient. Inputs index into the value list:
    nodes first, then the plain numbers the ops take, in reverse order, so that a number is a
    negative index and every argument one list lookup. ``values0`` is that list before a
    replay: None where the replay computes a value, else a constant the program made.
    Columns of shared objects keep the number of objects per op, and with it the garbage
    collector's work on a 100,000-op graph, near zero."""

    __slots__ = ("n", "slots", "scalar", "values0", "op", "fn", "vjp", "kw", "a", "b", "many",
                 "grad_slots", "forward_order", "backward_order", "shapes", "output", "g0",
                 "one", "grads_at", "head", "statics", "fmt", "reuse", "plan", "blocked",
                 "chain")

    def _columns(self, n: int) -> None:
        self.op = [None] * n
        self.fn = [None] * n
        self.vjp = [None] * n
        self.kw = [None] * n
        self.a = [None] * n
        self.b = [None] * n
        self.many: dict[int, tuple] = {}
        self.grad_slots = [()] * n

    def set_op(self, i: int, op, kw: dict | None, inputs, slots: tuple) -> None:
        self.op[i] = op
        self.fn[i] = op.fn
        self.vjp[i] = op.vjp
        self.kw[i] = kw or None
        if len(inputs) <= 2:
            self.a[i] = inputs[0]
            self.b[i] = inputs[1] if len(inputs) == 2 else None
        else:
            self.many[i] = tuple(inputs)
        self.grad_slots[i] = _SLOTS.get(slots, slots)

    @classmethod
    def from_trace(cls, trace, binding_names: list[str]) -> Template | None:
        """A template of a finished one-liner trace, or None when it cannot be replayed."""
        out = trace.output
        if (out.grad_fn is None or not trace.backward_done or trace.warnings or trace.extras
                or trace.retain_grad):
            return None
        nodes = trace.nodes
        index = {id(t): i for i, t in enumerate(nodes)}
        if id(out) not in index:
            return None
        self = cls()
        n = self.n = len(nodes)
        self.slots = []
        for k, name in enumerate(binding_names):
            if k >= len(nodes) or nodes[k].name != name or nodes[k].op != "leaf":
                return None
            self.slots.append(k)
        # all float64 scalars: replay on numpy scalars (the same C arithmetic as 0-d arrays,
        # bit for bit, at a fraction of the call cost)
        scalar = self.scalar = all(t.value.shape == () and t.value.dtype == np.float64
                                   for t in nodes)
        # values the replay does not compute: constants and leaves the program itself made
        # (op results are recomputed, so none is kept: a template must not pin big arrays)
        values0: list = [None if i in self.slots or t.inputs else
                         (t.value[()] if scalar else t.value) for i, t in enumerate(nodes)]
        numbers: list = []
        self._columns(n)
        order = []
        for i, t in enumerate(nodes):
            if not t.inputs:
                continue
            inputs = []
            for s in t.inputs:
                if s.weak:
                    numbers.append(s.value.item())
                    inputs.append(-len(numbers))
                elif id(s) in index:
                    inputs.append(index[id(s)])
                else:
                    return None
            slots = tuple(k for k, s in enumerate(t.inputs) if s.requires_grad and not s.weak)
            self.set_op(i, OPS[t.op], t.kw, inputs, slots)
            order.append(i)
        self.values0 = values0 + numbers[::-1]
        self.forward_order = order
        self.backward_order = []
        for fn in trace.flow:  # the order backward() processed the nodes in
            t = fn.output
            if t is None or id(t) not in index:
                return None
            self.backward_order.append(index[id(t)])
        self.shapes = [(t.value.shape, t.value.dtype) for t in nodes]
        self.output = index[id(out)]
        self.g0 = trace.grad_output
        self.one = np.ones((), out.value.dtype) if out.value.size == 1 and \
            out.value.shape == () else None
        self.grads_at = [(name, index[id(t)]) for name, t in trace.leaves.items()]
        self.head = {"output": trace.output_name, "shape": list(out.value.shape),
                     "dtype": str(out.value.dtype), "grad_fn": out.grad_fn.name}
        self.statics = []
        for i, t in enumerate(nodes):
            fn = t.grad_fn
            self.statics.append((i, t.name or t.label or "?",
                                 op_fields(display_name(t.op), fn.name if fn is not None else None),
                                 [index[id(s)] for s in t.inputs if id(s) in index],
                                 middle_fields(t.value.shape, t.requires_grad, fn is None)))
        self.fmt = None  # written on first use: only batch output needs it
        self.reuse = None
        self.blocked = None
        self.chain = None
        self.plan = 0
        return self

    def forward(self, bindings: list[np.ndarray], *, reuse: bool = False) -> list | None:
        """Every node's value for new bindings; None when a floating-point event happens.

        ``reuse``: the caller reads no value but the output's and hands the list to backward
        only, so array values nothing reads any more may be overwritten (see reuse_plan)."""
        values = list(self.values0)
        scalar = self.scalar
        for k, arr in zip(self.slots, bindings):
            values[k] = arr[()] if scalar else arr
        if reuse and not scalar and self.chain is not False and chain.ENABLED[0]:
            found = chain.replay(self, values)  # a small sum: one call of a C loop
            if found is not None:
                return found
        # self.plan: 0 before the first run; then LARGE for large arrays (buffers reused),
        # else 1 until the second run makes the Plan (making one costs about one run of the
        # loops below, so a one-off job makes none)
        plan = self.plan
        if plan.__class__ is not Plan:
            if plan == 1:
                plan = self.plan = Plan(self)
            elif plan == 0:
                plan = self.plan = 1 if Plan.fits(self) else LARGE
                if not scalar and (plan == LARGE or allocator.worth_it(self.shapes)):
                    allocator.tune()  # (once per process: no fresh pages per call)
        if plan.__class__ is Plan:
            return plan.forward(values)
        if reuse and plan == LARGE:  # (small arrays: allocations are cheap)
            if self.blocked is None:
                self.blocked = blocked.steps(self)
            if self.blocked:  # a whole sum of an elementwise chain: one pass over blocks
                found = blocked.replay(self, values, self.blocked)
                if found is not None:
                    return found
            return self._forward_reusing(values)
        fns, kws, a_of, b_of = self.fn, self.kw, self.a, self.b
        kinds = (np.ndarray, np.float64) if scalar else (np.ndarray,)
        with guard():
            for i in self.forward_order:
                a, b, kw = a_of[i], b_of[i], kws[i]
                if kw is not None:
                    v = fns[i](*self._args(values, i), **kw)
                elif b is not None:
                    v = fns[i](values[a], values[b])
                elif a is not None:
                    v = fns[i](values[a])
                else:
                    v = fns[i](*self._args(values, i))
                values[i] = v if type(v) in kinds else np.asarray(v)
        return unless_events(values)

    def _args(self, values: list, i: int) -> list:
        if self.a[i] is None:
            return [values[j] for j in self.many[i]]
        if self.b[i] is None:
            return [values[self.a[i]]]
        return [values[self.a[i]], values[self.b[i]]]

    def _inputs(self, i: int) -> list[int]:
        """Node i's inputs that are nodes (numbers have negative indexes)."""
        ins = self.many[i] if self.a[i] is None else (self.a[i], self.b[i])
        return [j for j in ins if j is not None and j >= 0]

    def backward(self, values: list, g0: np.ndarray, *, reuse: bool = False) -> list | None:
        """Every node's gradient, in the order the recorded backward pass used; None as above.

        ``reuse``: as for forward; ``values`` may be consumed."""
        scalar = self.scalar
        plan = self.plan
        if type(values) is blocked.Speculated:  # gradients made with the values
            if g0 is self.one or (type(g0) is np.ndarray and g0.shape == () and
                                  g0.dtype == self.one.dtype and g0 == 1):
                return values.adj
            if plan == LARGE:  # another seed: the values again, to read
                fresh = list(self.values0)
                for k in self.slots:
                    fresh[k] = values[k]
                values = self._forward_reusing(fresh)
            else:
                values = self.forward([values[k] for k in self.slots])
                plan = self.plan
            if values is None:
                return None
        if plan.__class__ is Plan:
            return plan.backward(self, values, g0)
        if reuse and plan == LARGE:
            return self._backward_arrays(values, g0, self.reuse_plan()[2])
        if not scalar:
            return self._backward_arrays(values, g0, {})
        adj: list = [None] * self.n
        adj[self.output] = g0[()]
        vjp_of, kws, a_of, b_of, slots_of = self.vjp, self.kw, self.a, self.b, self.grad_slots
        kinds = (np.ndarray, np.float64)
        with guard():
            for i in self.backward_order:
                vjps, a, b, kw = vjp_of[i], a_of[i], b_of[i], kws[i]
                g = adj[i]
                out = values[i]
                for slot in slots_of[i]:
                    if kw is None and b is not None:
                        gi = vjps[slot](g, out, values[a], values[b])
                        j = b if slot else a
                    elif kw is None and a is not None:
                        gi = vjps[0](g, out, values[a])
                        j = a
                    else:
                        gi = vjps[slot](g, out, *self._args(values, i), **(kw or {}))
                        j = self._slot_input(i, slot)
                    if type(gi) not in kinds:
                        gi = np.asarray(gi)
                    prev = adj[j]
                    adj[j] = gi if prev is None else prev + gi
        return unless_events(adj)

    def _slot_input(self, i: int, slot: int) -> int:
        if self.a[i] is None:
            return self.many[i][slot]
        return self.b[i] if slot else self.a[i]

    def grads(self, adj: list) -> dict:
        return {name: None if adj[j] is None else np.asarray(adj[j]) for name, j in self.grads_at}

    def run(self, bindings: list[np.ndarray]) -> JsonBody | None:
        """The JSON document for new binding values, or None to run the job the ordinary way."""
        values = self.forward(bindings)
        adj = self.backward(values, self.g0) if values is not None else None
        if adj is None:
            return None
        n = self.n
        value_texts = texts(values[:n])
        grad_texts = texts(adj)
        fields = [None] * (2 * n)
        fields[::2] = value_texts
        fields[1::2] = grad_texts
        head = [value_texts[self.output]]
        head += [grad_texts[j] for _, j in self.grads_at]
        return self.json_format() % tuple(head + fields)
