"""Source text compiled straight to a replay template, without a syntax tree or Tensor graph.

Most traces ask only for a value and gradients. For the common programs (numbers, bound
names, + - * / ^, unary minus, the elementwise functions and whole reductions, assignments to
names) this module decides while parsing, from the reductions and the bindings' shapes alone,
exactly which ops ``program.Evaluator`` would record, with which inputs, names and labels, and
in which order ``autograd.propagate`` would visit them; the result is the same ``Template``
that ``Template.from_trace`` makes from a finished trace (tests compare the two field by
field), so values and gradients are bit-identical to the ordinary path. Anything else,
including every error, returns None and the caller takes the ordinary path (which parses the
text into a syntax tree and reports errors in its own words).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from .errors import DdxSyntaxError
from .gcpause import paused
from .ops import OPS, REDUCTIONS, UNARY, display_name
from .program import CONSTANTS, fold_numbers
from .syntax import _lex, _parse_tokens, _Unexpected, tables
from .template import Template

_UNARY = frozenset(UNARY)
_REDUCTIONS = frozenset(REDUCTIONS)
_SHOWN = {name: display_name(name) for name in OPS}  # the JSON's "op" of each op
_ADD, _SUB, _RSUB, _MUL, _DIV, _NEG, _RECIPROCAL, _POW, _POW_SCALAR, _RPOW_SCALAR = (
    OPS[name] for name in ("add", "sub", "rsub", "mul", "div", "neg", "reciprocal", "pow",
                           "pow_scalar", "rpow_scalar"))


class _Weak:
    """A plain number on the value stack (PyTorch's wrapped scalar): ``v`` as ``.item()`` gives."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v


class _Decline(Exception):
    """The program uses something this module does not model: the ordinary path takes it."""


_UNBOUND = _Weak(None)  # a name that is neither bound nor a constant (fine as a target only)

# Tables.rules for LeanBuilder, built once per thread (the builder keeps per-compile state)
_LOCAL = threading.local()


def compile_source(source: str, names: list[str], shapes: list[tuple],
                   dtype: np.dtype) -> Template | None:
    """The template the ordinary path would record for these bindings, or None."""
    if dtype != np.float64:
        return None
    tab = tables()
    found = getattr(_LOCAL, "found", None)
    if found is None:
        builder = LeanBuilder()
        found = _LOCAL.found = (builder, [tab._callback(builder, *rule) for rule in tab.data_rules])
    builder, rules = found
    text = source if source.endswith("\n") else source + "\n"
    builder.reset(source, names, shapes)
    try:
        with paused():
            _parse_tokens(_lex(text, tab), tab, rules)
    except (_Decline, _Unexpected, DdxSyntaxError):
        return None  # (the ordinary path parses again, and reports errors in its own words)
    return builder.template()


class LeanBuilder:
    """The parser's builder for compile_source: instead of syntax-tree nodes, each reduction
    records the op that ``program.Evaluator`` would record for it (the parser reduces in the
    same post-order the Evaluator walks). A value on the parser's stack is a tuple (node index
    or _Weak, start, end, ostart, oend, name): the spans as an Ast would have them (``o``
    including parentheses), and the name when it is a bare name (an assignment's target)."""

    def reset(self, source: str, names: list[str], shapes: list[tuple]) -> None:
        self.source = source
        self.names = names
        self.k = len(names)
        # per recorded op: (op, kw or None, input, second input or None, label span or text);
        # inputs are node indexes, or negative indexes of plain numbers (Template's layout)
        self.ops: list[tuple] = []
        self.shape_of: list[tuple] = list(shapes)
        self.numbers: list = []
        self.named: dict[int, str] = {}  # op nodes given a name by an assignment
        self.env: dict[str, object] = {name: i for i, name in enumerate(names)}
        self.result = None
        self.out_name = "out"
        self.stmts = 0

    # -- atoms -----------------------------------------------------------------------------

    def number(self, tok):
        text = tok[1]
        if text.isdigit():
            if len(text) > 308:
                raise _Decline  # maybe too large for a float64: a syntax error of its own
            value = int(text)
        else:
            value = float(text)
        return (_Weak(value), tok[2], tok[3], tok[2], tok[3], None)

    def name(self, tok):
        text = tok[1]
        got = self.env.get(text)
        if got is None:
            got = CONSTANTS.get(text)
            got = _UNBOUND if got is None else _Weak(got)
        return (got, tok[2], tok[3], tok[2], tok[3], text)

    def paren(self, lpar, inner, rpar):
        return (inner[0], inner[1], inner[2], lpar[2], rpar[3], inner[5])

    # -- operators -------------------------------------------------------------------------

    def _emit(self, op, kw, a: int, b, label, shape: tuple) -> int:
        self.ops.append((op, kw, a, b, label))
        shape_of = self.shape_of
        shape_of.append(shape)
        return len(shape_of) - 1

    def _number(self, v) -> int:
        self.numbers.append(v)
        return -len(self.numbers)

    def binop(self, x, op, y):
        a, b = x[0], y[0]
        if a is _UNBOUND or b is _UNBOUND:
            raise _Decline
        start, end = x[3], y[4]
        sym = "^" if op[1] == "**" else op[1]
        wa, wb = type(a) is _Weak, type(b) is _Weak
        shape_of = self.shape_of
        if wa or wb:
            if wa and wb:
                r = fold_numbers(sym, a.v, b.v)
                if r is None or not math.isfinite(r):
                    raise _Decline  # '@' of numbers, or a folded inf/nan: own messages
                return (_Weak(r), start, end, start, end, None)
            shape = shape_of[b] if wa else shape_of[a]
        else:
            sa, sb = shape_of[a], shape_of[b]
            if sa == sb or not sb:
                shape = sa
            elif not sa:
                shape = sb
            else:
                try:
                    shape = np.broadcast_shapes(sa, sb)
                except ValueError:
                    raise _Decline from None
        span = (start, end)
        if sym == "+" or sym == "*":
            op = _ADD if sym == "+" else _MUL
            if wa:
                i = self._emit(op, None, b, self._number(a.v), span, shape)
            else:
                i = self._emit(op, None, a, self._number(b.v) if wb else b, span, shape)
        elif sym == "-":
            if wa:
                i = self._emit(_RSUB, {"other": a.v}, b, None, span, shape)
            else:
                i = self._emit(_SUB, None, a, self._number(b.v) if wb else b, span, shape)
        elif sym == "/":
            if wa:
                recip = self._emit(_RECIPROCAL, None, b, None,
                                   "1/" + _label(self.source, y[1], y[2]), shape)
                i = self._emit(_MUL, None, recip, self._number(a.v), span, shape)
            else:
                i = self._emit(_DIV, None, a, self._number(b.v) if wb else b, span, shape)
        elif sym == "^":
            if wb:
                i = self._emit(_POW_SCALAR, {"exponent": b.v}, a, None, span, shape)
            elif wa:
                i = self._emit(_RPOW_SCALAR, {"base": a.v}, b, None, span, shape)
            else:
                i = self._emit(_POW, None, a, b, span, shape)
        else:
            raise _Decline  # '@'
        return (i, start, end, start, end, None)

    def unop(self, op, x):
        a = x[0]
        if a is _UNBOUND:
            raise _Decline
        start, end = op[2], x[4]
        if op[1] == "+":
            pass
        elif type(a) is _Weak:
            a = _Weak(-a.v)
        else:
            a = self._emit(_NEG, None, a, None, (start, end), self.shape_of[a])
        return (a, start, end, start, end, None)

    def call(self, fname, lpar, args, rpar):
        if len(args) != 1 or type(args[0]) is not tuple or args[0][0] is _UNBOUND:
            raise _Decline  # keyword arguments are KwArgs (declined), other counts: errors
        a = args[0][0]
        name = fname[1]
        start, end = fname[2], rpar[3]
        if type(a) is _Weak:
            if name not in _UNARY:
                raise _Decline  # sum(2): a tensor that does not require grad
            try:  # sin(1): a plain number again, as the ordinary path computes it
                with np.errstate(all="raise"):
                    r = float(OPS[name].fn(float(a.v)))
            except (FloatingPointError, OverflowError):
                raise _Decline from None
            if not math.isfinite(r):
                raise _Decline
            return (_Weak(r), start, end, start, end, None)
        if name in _UNARY:
            shape = self.shape_of[a]
        elif name in _REDUCTIONS:
            if name in ("max", "min") and 0 in self.shape_of[a]:
                raise _Decline
            shape = ()
        else:
            raise _Decline
        i = self._emit(OPS[name], None, a, None, (start, end), shape)
        return (i, start, end, start, end, None)

    def args(self, *children):
        return [c for c in children if type(c) is not tuple or len(c) != 4]  # (not tokens)

    # -- statements ------------------------------------------------------------------------

    def assign(self, target, eq, value):
        v = value[0]
        if target[5] is None or type(v) is _Weak:
            raise _Decline  # x = 2 makes a leaf; attributes belong to the REPL
        name = target[5]
        if v >= self.k and v not in self.named:
            self.named[v] = name
        self.env[name] = v
        self.result = v
        self.out_name = name
        self.stmts += 1

    def expr_stmt(self, value):
        if value[0] is _UNBOUND:
            raise _Decline
        self.result = value[0]
        self.out_name = "out"
        self.stmts += 1

    def simple_stmts(self, *children):
        return None

    def start(self, *groups):
        return None

    def _decline(self, *children):
        raise _Decline

    with_stmt = index = attr = method = vector = items = kwarg = subscripts = slice = _decline

    def template(self) -> Template | None:
        out = self.result
        if not self.stmts or type(out) is _Weak or out < self.k:
            return None  # the output must be a recorded op (a leaf output has nothing to replay)
        return _template(self, out)


def _label(source: str, start: int, end: int) -> str:
    """What Tensor.label shows for a span of the source."""
    return source[start:end] if end - start <= 48 else source[start:start + 45] + "..."


def _template(lb: LeanBuilder, out: int) -> Template:
    names, k, shape_of, source = lb.names, lb.k, lb.shape_of, lb.source
    n = len(shape_of)
    self = Template()
    self.n = n
    self.slots = list(range(k))
    self.scalar = not any(shape_of)  # every shape is ()
    self.values0 = [None] * n + lb.numbers[::-1]
    table, kw_col, a_col, b_col, label_col = map(list, zip(*lb.ops))
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
    f64 = np.dtype(np.float64)
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

    def statics() -> list[tuple]:  # the JSON's fixed fields, only when JSON is written
        found = [(i, name, "leaf", None, [], shape_of[i], True, True)
                 for i, name in enumerate(names)]
        for i, (op, a, b, label) in enumerate(zip(table, a_col, b_col, label_col), k):
            if type(label) is not str:
                start, end = label
                label = source[start:end] if end - start <= 48 else \
                    source[start:start + 45] + "..."
            found.append((i, named.get(i) or label or "?", _SHOWN[op.name],
                          op.grad_fn, [a] if b is None or b < 0 else [a, b], shape_of[i],
                          True, False))
        return found
    self.statics = statics
    self.fmt = None
    self.reuse = None
    return self
