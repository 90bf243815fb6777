"""A parsed program compiled straight to a replay template, without building the Tensor graph.

Most traces ask only for a value and gradients. For the common programs (numbers, bound
names, + - * / ^, unary minus, the elementwise functions and whole reductions, assignments to
names) this module decides, from the AST and the bindings' shapes alone, exactly which ops
``program.Evaluator`` would record, with which inputs, names and labels, and in which order
``autograd.propagate`` would visit them; the result is the same ``Template`` that
``Template.from_trace`` makes from a finished trace (tests compare the two field by field), so
values and gradients are bit-identical to the ordinary path. Anything else, including every
error, returns None and the caller takes the ordinary path, which reports it in its own words.
"""

from __future__ import annotations

import math

import numpy as np

from .ops import OPS, REDUCTIONS, UNARY
from .program import CONSTANTS, DIM_GRAD_FN, compile_expr, fold_numbers
from .syntax import Program
from .template import Template

_UNARY = frozenset(UNARY)
_REDUCTIONS = frozenset(REDUCTIONS)
_DISPLAY = {"pow_scalar": "pow", "rpow_scalar": "pow"}
del DIM_GRAD_FN  # reductions with dim= are not compiled here: the ordinary path names them


class _Weak:
    """A plain number on the value stack (PyTorch's wrapped scalar): ``v`` as ``.item()`` gives."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v


def compile_program(program: Program, names: list[str], shapes: list[tuple],
                    dtype: np.dtype) -> Template | None:
    """The template the ordinary path would record for these bindings, or None."""
    if not program.stmts or dtype != np.float64:
        return None
    source = program.source
    k = len(names)
    # per node: op name (or "leaf"), kw, spec [(input index or -1, weak value)], shape, label
    ops: list[tuple] = []
    shape_of: list[tuple] = list(shapes)
    node_name: list[str | None] = list(names)
    labels: list[str | None] = [None] * k
    env: dict[str, object] = {name: i for i, name in enumerate(names)}
    cache = program._compiled
    if cache is None:
        cache = program._compiled = {}
    broadcast = np.broadcast_shapes

    def record(name: str, node, spec: list, kw: dict, shape: tuple, label=None) -> int:
        i = len(shape_of)
        ops.append((i, name, kw, spec))
        shape_of.append(shape)
        node_name.append(None)
        if label is None:
            start, end = node.start, node.end
            label = source[start:end] if end - start <= 48 else source[start:start + 45] + "..."
        labels.append(label)
        return i

    result = None
    for stmt in program.stmts:
        if stmt.kind == "with":
            return None
        root = stmt.value
        code = cache.get(id(root))
        if code is None:
            code = cache[id(root)] = compile_expr(root)
        stack: list = []
        push = stack.append
        for node in code:
            kind = node.kind
            if kind == "num":
                push(_Weak(node.value[0]))
            elif kind == "name":
                name = node.value
                got = env.get(name)
                if got is None:
                    if name not in CONSTANTS:
                        return None
                    got = _Weak(CONSTANTS[name])
                push(got)
            elif kind == "bin":
                b = stack.pop()
                a = stack.pop()
                sym = node.value
                wa, wb = type(a) is _Weak, type(b) is _Weak
                if wa and wb:
                    r = fold_numbers(sym, a.v, b.v)
                    if r is None or not math.isfinite(r):
                        return None  # '@' of numbers, or a folded inf/nan: its own messages
                    push(_Weak(r))
                    continue
                if sym == "@":
                    return None
                if wa or wb:
                    shape = shape_of[b if wa else a]
                else:
                    try:
                        shape = broadcast(shape_of[a], shape_of[b])
                    except ValueError:
                        return None
                if sym == "+" or sym == "*":
                    name = "add" if sym == "+" else "mul"
                    spec = [(b, None), (-1, a.v)] if wa else \
                        [(a, None), (-1, b.v) if wb else (b, None)]
                    push(record(name, node, spec, {}, shape))
                elif sym == "-":
                    if wa:
                        push(record("rsub", node, [(b, None)], {"other": a.v}, shape))
                    else:
                        push(record("sub", node, [(a, None), (-1, b.v) if wb else (b, None)],
                                    {}, shape))
                elif sym == "/":
                    if wa:
                        kid = node.kids[1]
                        start, end = kid.start, kid.end
                        text = source[start:end] if end - start <= 48 else \
                            source[start:start + 45] + "..."
                        recip = record("reciprocal", node, [(b, None)], {}, shape, "1/" + text)
                        push(record("mul", node, [(recip, None), (-1, a.v)], {}, shape))
                    else:
                        push(record("div", node, [(a, None), (-1, b.v) if wb else (b, None)],
                                    {}, shape))
                elif sym == "^":
                    if wb:
                        push(record("pow_scalar", node, [(a, None)], {"exponent": b.v}, shape))
                    elif wa:
                        push(record("rpow_scalar", node, [(b, None)], {"base": a.v}, shape))
                    else:
                        push(record("pow", node, [(a, None), (b, None)], {}, shape))
                else:
                    return None
            elif kind == "unop":
                a = stack.pop()
                if node.value == "+":
                    push(a)
                elif type(a) is _Weak:
                    push(_Weak(-a.v))
                else:
                    push(record("neg", node, [(a, None)], {}, shape_of[a]))
            elif kind == "call":
                fname = node.value
                if node.kw or len(node.kids) != 1:
                    return None
                a = stack.pop()
                if type(a) is _Weak:
                    if fname not in _UNARY:
                        return None  # sum(2): a tensor that does not require grad
                    try:  # sin(1): a plain number again, as the ordinary path computes it
                        with np.errstate(all="raise"):
                            r = float(OPS[fname].fn(float(a.v)))
                    except (FloatingPointError, OverflowError):
                        return None
                    if not math.isfinite(r):
                        return None
                    push(_Weak(r))
                elif fname in _UNARY:
                    push(record(fname, node, [(a, None)], {}, shape_of[a]))
                elif fname in _REDUCTIONS:
                    if fname in ("max", "min") and 0 in shape_of[a]:
                        return None
                    push(record(fname, node, [(a, None)], {}, ()))
                else:
                    return None
            else:
                return None
        value = stack[-1]
        if stmt.kind == "assign":
            target = stmt.target
            if target.kind != "name" or type(value) is _Weak:
                return None  # x = 2 makes a leaf; attributes belong to the REPL
            if node_name[value] is None:
                node_name[value] = target.value
            env[target.value] = value
        result = value
    if type(result) is _Weak or result < k:
        return None  # the output must be a recorded op (a leaf output has nothing to replay)
    return _template(program, names, ops, shape_of, node_name, labels, env, result, dtype)


def _template(program: Program, names, ops, shape_of, node_name, labels, env, out: int,
              dtype) -> Template:
    k = len(names)
    n = len(shape_of)
    self = Template()
    self.n = n
    self.slots = list(range(k))
    scalar = self.scalar = all(s == () for s in shape_of)
    self.fixed = [None] * n
    inputs: list[list[int]] = [[] for _ in range(n)]  # recorded (non-weak) inputs, in order
    table = []
    for i, name, kw, spec in ops:
        table.append((i, OPS[name], kw, spec))
        inputs[i] = [j for j, _ in spec if j >= 0]
    self.ops = table
    by_node = {i: row for row in table for i in (row[0],)}
    # backward: autograd.propagate's order (graph_order's dependency counts, a LIFO ready list)
    deps: dict[int, int] = {}
    stack = [out]
    seen = {out}
    while stack:
        i = stack.pop()
        for j in inputs[i]:
            if j >= k:
                deps[j] = deps.get(j, 0) + 1
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
    plan = []
    ready = [out]
    while ready:
        i = ready.pop()
        _, op, kw, spec = by_node[i]
        targets = [(slot, j, shape_of[j], dtype) for slot, (j, _) in enumerate(spec) if j >= 0]
        plan.append((i, op, kw, spec, targets))
        for j in inputs[i]:
            if j >= k:
                deps[j] -= 1
                if deps[j] == 0:
                    ready.append(j)
    self.backward_plan = plan
    self.output = out
    self.g0 = np.ones(shape_of[out], dtype)  # what backward() (or "ones") seeds the output with
    self.one = self.g0 if shape_of[out] == () else None
    self.grads_at = [(name, i) for name, i in env.items() if i < k]
    out_name = "out"
    last = program.stmts[-1]
    if last.kind == "assign" and last.target.kind == "name":
        out_name = last.target.value
    op_of = ["leaf"] * k + [row[1].name for row in table]
    self.head = {"output": out_name, "shape": list(shape_of[out]), "dtype": str(np.dtype(dtype)),
                 "grad_fn": table[out - k][1].grad_fn}
    statics = []
    for i in range(n):
        if i < k:
            statics.append((i, node_name[i] or "?", "leaf", None, [], list(shape_of[i]), True,
                            True))
        else:
            op = table[i - k][1]
            statics.append((i, node_name[i] or labels[i] or "?", _DISPLAY.get(op_of[i], op_of[i]),
                            op.grad_fn, inputs[i], list(shape_of[i]), True, False))
    self.statics = statics
    self.parts = None
    del scalar
    return self
