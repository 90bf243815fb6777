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

from .ops import OPS, REDUCTIONS, UNARY, display_name
from .program import CONSTANTS, compile_expr, fold_numbers
from .syntax import Program
from .template import Template

_UNARY = frozenset(UNARY)
_REDUCTIONS = frozenset(REDUCTIONS)


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
    # per recorded op, in columns: op name, kw or None, input, second input or None, and the
    # Ast whose span is its label (or the label); inputs are node indexes, or negative
    # indexes of plain numbers (Template's layout)
    op_col: list[str] = []
    kw_col: list = []
    a_col: list[int] = []
    b_col: list = []
    label_col: list = []  # the Ast whose span is the label, or the label itself
    shape_of: list[tuple] = list(shapes)
    named: dict[int, str] = {}  # op nodes given a name by an assignment
    env: dict[str, object] = {name: i for i, name in enumerate(names)}
    cache = program._compiled
    if cache is None:
        cache = program._compiled = {}
    broadcast = np.broadcast_shapes
    numbers: list = []  # the plain numbers ops take, referred to by negative indexes

    def number(v) -> int:
        numbers.append(v)
        return -len(numbers)

    def emit(name: str, kw, a: int, b, label, shape: tuple) -> int:
        op_col.append(name)
        kw_col.append(kw)
        a_col.append(a)
        b_col.append(b)
        label_col.append(label)
        shape_of.append(shape)
        return len(shape_of) - 1

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
        pop = stack.pop
        for node in code:
            kind = node.kind
            if kind == "bin":
                b = pop()
                a = pop()
                sym = node.value
                wa, wb = type(a) is _Weak, type(b) is _Weak
                if wa or wb:
                    if wa and wb:
                        r = fold_numbers(sym, a.v, b.v)
                        if r is None or not math.isfinite(r):
                            return None  # '@' of numbers, or a folded inf/nan: own messages
                        push(_Weak(r))
                        continue
                    shape = shape_of[b] if wa else shape_of[a]
                else:
                    sa, sb = shape_of[a], shape_of[b]
                    if sa == sb or not sb:
                        shape = sa
                    elif not sa:
                        shape = sb
                    else:
                        try:
                            shape = broadcast(sa, sb)
                        except ValueError:
                            return None
                if sym == "+" or sym == "*":
                    name = "add" if sym == "+" else "mul"
                    spec = (b, number(a.v)) if wa else (a, number(b.v) if wb else b)
                    kw = None
                elif sym == "-":
                    if wa:
                        name, spec, kw = "rsub", (b, None), {"other": a.v}
                    else:
                        name, spec, kw = "sub", (a, number(b.v) if wb else b), None
                elif sym == "/":
                    if wa:
                        kid = node.kids[1]
                        recip = emit("reciprocal", None, b, None,
                                     "1/" + _label(source, kid.start, kid.end), shape)
                        name, spec, kw = "mul", (recip, number(a.v)), None
                    else:
                        name, spec, kw = "div", (a, number(b.v) if wb else b), None
                elif sym == "^":
                    if wb:
                        name, spec, kw = "pow_scalar", (a, None), {"exponent": b.v}
                    elif wa:
                        name, spec, kw = "rpow_scalar", (b, None), {"base": a.v}
                    else:
                        name, spec, kw = "pow", (a, b), None
                else:
                    return None  # '@'
                push(emit(name, kw, spec[0], spec[1], node, shape))
            elif kind == "name":
                got = env.get(node.value)
                if got is None:
                    if node.value not in CONSTANTS:
                        return None
                    got = _Weak(CONSTANTS[node.value])
                push(got)
            elif kind == "num":
                push(_Weak(node.value[0]))
            elif kind == "unop":
                a = pop()
                if node.value == "+":
                    push(a)
                elif type(a) is _Weak:
                    push(_Weak(-a.v))
                else:
                    push(emit("neg", None, a, None, node, shape_of[a]))
            elif kind == "call":
                fname = node.value
                if node.kw or len(node.kids) != 1:
                    return None
                a = pop()
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
                    continue
                if fname in _UNARY:
                    shape = shape_of[a]
                elif fname in _REDUCTIONS:
                    if fname in ("max", "min") and 0 in shape_of[a]:
                        return None
                    shape = ()
                else:
                    return None
                push(emit(fname, None, a, None, node, shape))
            else:
                return None
        value = stack[-1]
        if stmt.kind == "assign":
            target = stmt.target
            if target.kind != "name" or type(value) is _Weak:
                return None  # x = 2 makes a leaf; attributes belong to the REPL
            if value >= k and value not in named:
                named[value] = target.value
            env[target.value] = value
        result = value
    if type(result) is _Weak or result < k:
        return None  # the output must be a recorded op (a leaf output has nothing to replay)
    return _template(program, names, (op_col, kw_col, a_col, b_col, label_col), numbers,
                     shape_of, named, env, result, dtype)


def _label(source: str, start: int, end: int) -> str:
    """What Tensor.label shows for a span of the source."""
    return source[start:end] if end - start <= 48 else source[start:start + 45] + "..."


def _template(program: Program, names, columns, numbers, shape_of, named, env, out: int,
              dtype) -> Template:
    k = len(names)
    n = len(shape_of)
    self = Template()
    self.n = n
    self.slots = list(range(k))
    self.scalar = not any(shape_of)  # every shape is ()
    self.values0 = [None] * n + numbers[::-1]
    op_col, kw_col, a_col, b_col, label_col = columns
    table = [OPS[name] for name in op_col]
    lead = [None] * k
    self.op = lead + table
    self.fn = lead + [op.fn for op in table]
    self.vjp = lead + [op.vjp for op in table]
    self.kw = lead + kw_col
    a_of = self.a = lead + a_col
    b_of = self.b = lead + b_col
    self.many = {}
    both, first = (0, 1), (0,)  # numbers come second: only node inputs get gradients
    self.grad_slots = [()] * k + [both if b is not None and b >= 0 else first for b in b_col]
    self.forward_order = range(k, n)
    # backward: autograd.propagate's order (graph_order's dependency counts, a LIFO ready list)
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
    self.backward_order = order
    f64 = np.dtype(dtype)
    pairs: dict[tuple, tuple] = {}  # one (shape, dtype) object per distinct shape
    self.shapes = [pairs.get(shape) or pairs.setdefault(shape, (shape, f64))
                   for shape in shape_of]
    self.output = out
    # what backward() (or "ones") seeds the output with
    self.g0 = np.array(1.0, f64) if shape_of[out] == () else np.ones(shape_of[out], f64)
    self.one = self.g0 if shape_of[out] == () else None
    self.grads_at = [(name, i) for name, i in env.items() if i < k]
    out_name = "out"
    last = program.stmts[-1]
    if last.kind == "assign" and last.target.kind == "name":
        out_name = last.target.value
    self.head = {"output": out_name, "shape": list(shape_of[out]), "dtype": f64.name,
                 "grad_fn": table[out - k].grad_fn}
    source = program.source

    def statics() -> list[tuple]:  # the JSON's fixed fields, only when JSON is written
        found = [(i, name, "leaf", None, [], list(shape_of[i]), True, True)
                 for i, name in enumerate(names)]
        for i, (name, a, b, label) in enumerate(zip(op_col, a_col, b_col, label_col), k):
            if type(label) is not str:
                label = _label(source, label.start, label.end)
            found.append((i, named.get(i) or label or "?", display_name(name),
                          table[i - k].grad_fn, [j for j in (a, b) if j is not None and j >= 0],
                          list(shape_of[i]), True, False))
        return found
    self.statics = statics
    self.parts = None
    self.reuse = None
    return self
