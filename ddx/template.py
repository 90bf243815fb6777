"""Replaying a recorded graph with new bindings: for batch jobs that share an expression.

The first job with a given expression text, options and binding shapes runs the ordinary way
(parse, evaluate, backward) and its graph is kept as a template: the ops in order, where each
input comes from, the order in which backward visited the nodes, and every field of the JSON
that does not depend on the values. Later jobs only recompute values and gradients through
the same op table, in the same order, so their output is identical to a fresh run's. A job
whose numbers raise a floating-point event (a domain warning) is run the ordinary way."""

from __future__ import annotations

import numpy as np

from . import autograd
from .api import DISPLAY_OP, jsonable
from .autograd import unbroadcast
from .ops import OPS


class Template:
    __slots__ = ("slots", "fixed", "ops", "backward", "output", "g0", "grads", "head",
                 "statics", "n")

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
        self.n = len(nodes)
        self.slots = []
        for k, name in enumerate(binding_names):
            if k >= len(nodes) or nodes[k].name != name or nodes[k].op != "leaf":
                return None
            self.slots.append(k)
        self.fixed = [None if i in self.slots else t.value for i, t in enumerate(nodes)]
        self.ops = []
        for i, t in enumerate(nodes):
            if not t.inputs:
                continue
            spec = []
            for s in t.inputs:
                if s.weak:
                    spec.append((-1, s.value.item()))
                elif id(s) in index:
                    spec.append((index[id(s)], None))
                else:
                    return None
            self.ops.append((i, OPS[t.op], t.kw, spec))
        self.backward = []
        for fn in trace.flow:  # the order backward() processed the nodes in
            t = fn.output
            if t is None or id(t) not in index:
                return None
            i = index[id(t)]
            spec = next(s for j, _, _, s in self.ops if j == i)
            targets = [(slot, index[id(s)], s.value.shape, s.value.dtype)
                       for slot, s in enumerate(t.inputs) if s.requires_grad]
            if any(j is None for _, j, _, _ in targets):
                return None
            self.backward.append((i, fn.op, fn.kw, spec, targets))
        self.output = index[id(out)]
        self.g0 = trace.grad_output
        self.grads = [(name, index[id(t)]) for name, t in trace.leaves.items()]
        self.head = {"output": trace.output_name, "shape": list(out.value.shape),
                     "dtype": str(out.value.dtype), "grad_fn": out.grad_fn.name}
        self.statics = []
        for i, t in enumerate(nodes):
            fn = t.grad_fn
            self.statics.append((i, t.name or t.label or "?",
                                 DISPLAY_OP.get(t.op, "stack" if t.op.startswith("stack")
                                                else t.op),
                                 fn.name if fn is not None else None,
                                 [index[id(s)] for s in t.inputs if id(s) in index],
                                 list(t.value.shape), t.requires_grad, fn is None))
        return self

    def run(self, bindings: list[np.ndarray]) -> dict | None:
        """The JSON document for new binding values, or None to run the job the ordinary way."""
        values = list(self.fixed)
        for k, arr in zip(self.slots, bindings):
            values[k] = arr
        events = autograd._FP_EVENTS
        with autograd.fp_guard():
            for i, op, kw, spec in self.ops:
                args = [values[j] if j >= 0 else w for j, w in spec]
                v = op.fn(*args, **kw)
                values[i] = v if type(v) is np.ndarray else np.asarray(v)
            if events:
                events.clear()
                return None
            adj: list = [None] * self.n
            adj[self.output] = self.g0
            for i, op, kw, spec, targets in self.backward:
                g = adj[i]
                args = [values[j] if j >= 0 else w for j, w in spec]
                for slot, j, shape, dtype in targets:
                    gi = op.vjp[slot](g, values[i], *args, **kw)
                    if type(gi) is not np.ndarray:
                        gi = np.asarray(gi)
                    if gi.shape != shape:
                        gi = unbroadcast(gi, shape)
                    if gi.dtype != dtype:
                        gi = gi.astype(dtype)
                    prev = adj[j]
                    adj[j] = gi if prev is None else np.asarray(prev + gi)
            if events:
                events.clear()
                return None
        nodes = [{"id": i, "name": name, "op": op, "grad_fn": grad_fn, "inputs": inputs,
                  "value": jsonable(values[i]), "shape": shape, "requires_grad": rg,
                  "is_leaf": leaf, "grad": jsonable(adj[i])}
                 for i, name, op, grad_fn, inputs, shape, rg, leaf in self.statics]
        head = self.head
        return {"output": head["output"], "value": jsonable(values[self.output]),
                "shape": head["shape"], "dtype": head["dtype"], "grad_fn": head["grad_fn"],
                "gradients": {name: jsonable(adj[j]) for name, j in self.grads},
                "nodes": nodes, "warnings": []}
