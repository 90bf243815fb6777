"""Template assembly for compile_source: a LeanBuilder's rows as Template's columns."""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..graph.tensor import LABEL_MAX, label_of
from .jsonfmt import PLAIN_TEXT, middle_fields, node_format, op_fields
from .template import Template

_LEAF_FIELDS = op_fields("leaf", None)  # a leaf's "op" and "grad_fn" fields in the JSON


class _OpFields(dict):
    """An op row's "op" and "grad_fn" fields in the JSON, by the row (made on first use, so
    a row registered at run time has them too)."""

    def __missing__(self, row):
        text = self[row] = op_fields(row.shown, row.grad_fn)
        return text


_OP_FIELDS = _OpFields()


def _backward_order(a_of, b_of, k: int, n: int, out: int) -> list[int]:
    """reverse.propagate's order: graph_order's dependency counts, a LIFO ready list."""
    # (every op here has a node as its first input; the second is None, a number (< 0) or
    # a node; leaves (< k) are not visited)
    deps = [0] * n
    seen = bytearray(n)
    seen[out] = 1
    stack = [out]
    pop, push = stack.pop, stack.append
    while stack:
        i = pop()
        j = a_of[i]
        if j >= k:
            deps[j] += 1
            if not seen[j]:
                seen[j] = 1
                push(j)
        j = b_of[i]
        if j is not None and j >= k:
            deps[j] += 1
            if not seen[j]:
                seen[j] = 1
                push(j)
    order = []
    ready = [out]
    pop, push, visit = ready.pop, ready.append, order.append
    while ready:
        i = pop()
        visit(i)
        j = a_of[i]
        if j >= k:
            deps[j] -= 1
            if not deps[j]:
                push(j)
        j = b_of[i]
        if j is not None and j >= k:
            deps[j] -= 1
            if not deps[j]:
                push(j)
    return order


def build_template(lb, out: int) -> Template:
    """The template of a finished LeanBuilder (ddx/replay/lean.py) whose result is node ``out``:
    its rows as Template's columns, and the JSON's fixed fields written when asked for."""
    return from_columns(lb, out, tuple(zip(*lb.rows)))


def from_columns(lb, out: int, columns: tuple, pick_slots: list | None = None) -> Template:
    """build_template from the rows already as columns: op, forward, VJPs, kw, first input,
    second input, label start and end per op (ddx/replay/diskcache.py reads them so;
    ``pick_slots``: per op, 1 where its second input is a node, if known). ``lb`` needs a
    LeanBuilder's names, k, shape_of, source, numbers, named, env, out_name, stmts and
    assigned."""
    names, k, shape_of, source = lb.names, lb.k, lb.shape_of, lb.source
    n = len(shape_of)
    self = Template()
    self.n = n
    self.slots = list(range(k))
    self.scalar = not any(shape_of)  # every shape is ()
    self.values0 = [None] * n + lb.numbers[::-1]
    # the rows as Template's columns (tuples: nothing changes them)
    table, fns, vjps, kw_col, a_col, b_col, lb_starts, lb_ends = columns
    lead = (None,) * k
    self.op = lead + table
    self.fn = lead + fns
    self.vjp = lead + vjps
    self.kw = lead + kw_col
    a_of = self.a = lead + a_col
    b_of = self.b = lead + b_col
    self.many = {}
    both, first = (0, 1), (0,)  # numbers come second: only node inputs get gradients
    if pick_slots is None:  # (else, per op, 1 where its second input is a node)
        self.grad_slots = [()] * k + [both if b is not None and b >= 0 else first
                                      for b in b_col]
    else:
        self.grad_slots = [()] * k + ([(first, both)[pick_slots[0]]] if len(pick_slots) == 1
                                      else list(itemgetter(*pick_slots)((first, both))))
    self.forward_order = range(k, n)
    if lb.stmts == 1 and not lb.assigned and out == n - 1:
        # one expression: a tree, each op read once, by an op recorded after it. For a tree,
        # propagate's order below is the reverse of the recording order (the parser's post-
        # order: a's ops, b's ops, the op; propagate: the op, then b's, then a's).
        self.backward_order = list(range(n - 1, k - 1, -1))
    else:
        self.backward_order = _backward_order(a_of, b_of, k, n, out)
    f64 = np.dtype(np.float64)
    if self.scalar:
        self.shapes = [((), f64)] * n
    else:
        pairs: dict[tuple, tuple] = {}  # one (shape, dtype) object per distinct shape
        self.shapes = [pairs.get(shape) or pairs.setdefault(shape, (shape, f64))
                       for shape in shape_of]
    self.output = out
    # what backward() (or "ones") seeds the output with
    self.g0 = np.array(1.0, f64) if shape_of[out] == () else np.ones(shape_of[out], f64)
    self.one = self.g0 if shape_of[out] == () else None
    self.grads_at = [(name, i) for name, i in lb.env.items() if i < k]
    self.head = {"output": lb.out_name, "shape": list(shape_of[out]), "dtype": "float64",
                 "grad_fn": table[out - k].grad_fn}
    named = lb.named

    def labels() -> list[str]:  # each op node's name in the JSON
        found = [start if end is None else source[start:end] if end - start <= LABEL_MAX else
                 label_of(source, start, end) for start, end in zip(lb_starts, lb_ends)]
        for i, name in named.items():
            found[i - k] = name
        return [label or "?" for label in found] if "" in found else found

    def statics() -> list[tuple]:  # the JSON's fixed fields (Template.static_rows)
        found = [(i, name, _LEAF_FIELDS, [], middle_fields(shape_of[i], True, True))
                 for i, name in enumerate(names)]
        for i, op, a, b, label in zip(range(k, n), table, a_col, b_col, labels()):
            found.append((i, label, _OP_FIELDS[op], [a] if b is None or b < 0 else [a, b],
                          middle_fields(shape_of[i], True, False)))
        return found

    def nodes_format() -> str:  # the same as Template.json_format writes it from statics()
        parts = [node_format(i, name, _LEAF_FIELDS, [], middle_fields(shape_of[i], True, True))
                 for i, name in enumerate(names)]
        if not PLAIN_TEXT(source):  # a label may need escapes
            parts += [node_format(*row) for row in statics()[k:]]
            return ", ".join(parts)
        # (labels and names are plain text here, as node_format would check)
        middles = {shape: middle_fields(shape, True, False) for shape in set(shape_of[k:])}
        parts += [f'{{"id": {i}, "name": "{label}", {_OP_FIELDS[op]}, "inputs": [{a}], '
                  f'"value": %s{middles[shape]}' if b is None or b < 0 else
                  f'{{"id": {i}, "name": "{label}", {_OP_FIELDS[op]}, "inputs": [{a}, {b}], '
                  f'"value": %s{middles[shape]}'
                  for i, op, a, b, label, shape in zip(range(k, n), table, a_col, b_col,
                                                      labels(), shape_of[k:])]
        return ", ".join(parts)
    self.statics = statics
    self.fmt = nodes_format
    self.reuse = None
    self.blocked = None
    self.chain = None
    self.plan = 0
    return self
