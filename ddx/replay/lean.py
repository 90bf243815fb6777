"""Source text compiled straight to a replay template, without a syntax tree or Tensor graph.

Most traces ask only for a value and gradients. For the common programs (numbers, bound
names, + - * / ^, unary minus, the elementwise functions and whole reductions, assignments to
names) this module decides while parsing, from the reductions and the bindings' shapes alone,
exactly which ops ``program.Evaluator`` would record, with which inputs, names and labels, and
in which order ``reverse.propagate`` would visit them; the result is the same ``Template``
that ``Template.from_trace`` makes from a finished trace (tests compare the two field by
field), so values and gradients are bit-identical to the ordinary path. Anything else,
including every error, returns None and the caller takes the ordinary path (which parses the
text into a syntax tree and reports errors in its own words).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..errors import DdxSyntaxError
from ..gcpause import paused
from ..graph.program import compile_expr
from ..graph.tensor import label_of
from ..graph.values import CONSTANTS, fold_numbers
from ..lang.lowering import BINARY
from ..lang.parser import Unexpected, lex, parse_tokens, tables
from ..lang.syntax import CACHE
from ..lang.tree import Program
from ..limits import limit
from ..ops import CALLS, OPS
from . import diskcache
from .lean_template import build_template
from .template import Template


class _Weak:
    """A plain number on the value stack (PyTorch's wrapped scalar): ``v`` as ``.item()`` gives."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v


class _Decline(Exception):
    """The program uses something this module does not model: the ordinary path takes it."""


_UNBOUND = _Weak(None)  # a name that is neither bound nor a constant (fine as a target only)
_NOT_A_NAME = ""  # an assignment target that is not a bare name

# Tables.rules for LeanBuilder, built once per thread (the builder keeps per-compile state)
_LOCAL = threading.local()


def compile_source(source: str, names: list[str], shapes: list[tuple],
                   dtype: np.dtype) -> Template | None:
    """The template the ordinary path would record for these bindings, or None."""
    if dtype != np.float64:
        return None
    disk = len(source) >= diskcache.MIN_CHARS  # (a long text: parsed once across processes)
    if disk:
        template = diskcache.load(source, names, shapes)
        if template is not None:
            return template
    tab = tables()
    found = getattr(_LOCAL, "found", None)
    if found is None:
        builder = LeanBuilder()
        found = _LOCAL.found = (builder, [tab._callback(builder, *rule) for rule in tab.data_rules])
    builder, rules = found
    builder.reset(source, names, shapes)
    program = CACHE.get(source)  # parsed already (the REPL, a materialised trace): no parse
    # The collector stays off until the builder's rows (a tuple per op) are gone: for a long
    # program, its passes over them would cost more than the whole compile.
    with paused():
        try:
            if program is not None:
                _replay_tree(program, builder)
            else:
                text = source if source.endswith("\n") else source + "\n"
                parse_tokens(lex(text, tab), tab, rules)
            template = builder.template()
            if disk and template is not None:
                diskcache.save(source, names, shapes, builder, template)
            return template
        except (_Decline, Unexpected, DdxSyntaxError):
            return None  # (the ordinary path parses again and reports errors in its own words)
        finally:
            builder.reset("", [], [])  # the per-thread builder keeps nothing of this program


def _replay_tree(program: Program, builder: LeanBuilder) -> None:
    """Drive ``builder`` from a program already parsed into a syntax tree: its core steps in
    the order the parser would have taken them (post-order), on plain values, with the spans
    the tree keeps; so one LeanBuilder decides both ways."""
    cache = program._compiled  # post-order code by root, shared with the Evaluator
    if cache is None:
        cache = program._compiled = {}
    for stmt in program.stmts:
        if stmt.kind == "with":
            raise _Decline
        code = cache.get(id(stmt.value))
        if code is None:
            code = cache[id(stmt.value)] = compile_expr(stmt.value)
        stack: list = []
        push, pop, binary = stack.append, stack.pop, builder.binary
        for node in code:
            kind = node.kind
            if kind == "bin":
                b = pop()
                kid = node.kids[1]
                push(binary(node.value, pop(), b, node.start, node.end, kid.start, kid.end))
            elif kind == "num":
                push(_Weak(node.value[0]))
            elif kind == "name":
                push(builder.lookup(node.value))
            elif kind == "unop":
                push(builder.unary(node.value, pop(), node.start, node.end))
            elif kind == "call" and not node.kw and len(node.kids) == 1:
                push(builder.function(node.value, pop(), node.start, node.end))
            else:
                raise _Decline
        target = stmt.target
        if target is None:
            builder.statement(None, stack[-1])
        elif target.kind == "name":
            builder.statement(target.value, stack[-1])
        else:
            raise _Decline


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
        # per recorded op, a row: op, its forward and VJPs, kw or None, input, second input or
        # None, and its label's span: start, end (or the label, and None); inputs are node
        # indexes, or negative indexes of plain numbers (Template's layout)
        self.rows: list[tuple] = []
        self.shape_of: list[tuple] = list(shapes)
        self.numbers: list = []
        self.named: dict[int, str] = {}  # op nodes given a name by an assignment
        self.env: dict[str, object] = {name: i for i, name in enumerate(names)}
        self.result = None
        self.out_name = "out"
        self.stmts = 0
        self.assigned = False

    # -- the parser's reductions: values are (value, start, end, ostart, oend, name) ------

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
        name = tok[1]
        got = self.env.get(name)  # (lookup, inline: most names are bindings)
        if got is None:
            got = self.lookup(name)
        return (got, tok[2], tok[3], tok[2], tok[3], name)

    def paren(self, lpar, inner, rpar):
        return (inner[0], inner[1], inner[2], lpar[2], rpar[3], inner[5])

    def binop(self, x, op, y):
        start, end = x[3], y[4]
        value = self.binary("^" if op[1] == "**" else op[1], x[0], y[0], start, end, y[1], y[2])
        return (value, start, end, start, end, None)

    def unop(self, op, x):
        start, end = op[2], x[4]
        return (self.unary(op[1], x[0], start, end), start, end, start, end, None)

    def call(self, fname, lpar, args, rpar):
        if len(args) != 1 or type(args[0]) is not tuple:
            raise _Decline  # keyword arguments are KwArgs (declined), other counts: errors
        start, end = fname[2], rpar[3]
        return (self.function(fname[1], args[0][0], start, end), start, end, start, end, None)

    def assign(self, target, eq, value):
        self.statement(target[5] or _NOT_A_NAME, value[0])

    def expr_stmt(self, value):
        self.statement(None, value[0])

    # -- the steps themselves, on plain values: a node index or a _Weak number -------------

    def lookup(self, name: str):
        got = self.env.get(name)
        if got is None:
            got = CONSTANTS.get(name)
            return _UNBOUND if got is None else _Weak(got)
        return got

    def _emit(self, op, kw, a: int, b, start, end: int | None, shape: tuple) -> int:
        self.rows.append((op, op.fn, op.vjp, kw, a, b, start, end))
        shape_of = self.shape_of
        shape_of.append(shape)
        return len(shape_of) - 1

    def binary(self, sym: str, a, b, start: int, end: int, b_start: int, b_end: int):
        """``a sym b`` spanning start:end (b's own span, without parentheses, b_start:b_end)."""
        if a is _UNBOUND or b is _UNBOUND:
            raise _Decline
        wa, wb = type(a) is _Weak, type(b) is _Weak
        shape_of = self.shape_of
        if wa or wb:
            if wa and wb:
                r = fold_numbers(sym, a.v, b.v)
                if r is None or not math.isfinite(r):
                    raise _Decline  # '@' of numbers, or a folded inf/nan: own messages
                return _Weak(r)
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
                if math.prod(shape) > limit("DDX_MAX_ELEMENTS"):
                    raise _Decline  # (the ordinary path says which limit)
        # the op (the one lowering's choice), its kw, its node input, and its second input:
        # a node, a plain number (Template keeps those apart, at negative indexes) or none
        plan = BINARY.get((sym, wa, wb))
        if plan is None:
            raise _Decline  # '@'
        op = OPS[plan.op]
        kw = second = None
        if plan.first == "1/b":  # 2/x is 2 * reciprocal(x), as PyTorch records it
            first = self._emit(OPS["reciprocal"], None, b, None,
                               "1/" + label_of(self.source, b_start, b_end), None, shape)
        else:
            first = a if plan.first == "a" else b
        if plan.key is not None:
            kw = {plan.key: (a if wa else b).v}
        else:
            other = a if plan.second == "a" else b
            if type(other) is _Weak:
                numbers = self.numbers
                numbers.append(other.v)
                second = -len(numbers)
            else:
                second = other
        self.rows.append((op, op.fn, op.vjp, kw, first, second, start, end))  # (_emit, inline)
        shape_of.append(shape)
        return len(shape_of) - 1

    def unary(self, sym: str, a, start: int, end: int):
        if a is _UNBOUND:
            raise _Decline
        if sym == "+":
            return a
        if type(a) is _Weak:
            return _Weak(-a.v)
        return self._emit(OPS["neg"], None, a, None, start, end, self.shape_of[a])

    def function(self, name: str, a, start: int, end: int):
        """``name(a)`` for one positional argument."""
        if a is _UNBOUND:
            raise _Decline
        row = CALLS.get(name)
        if row is None:
            raise _Decline
        kind = row.call
        if kind == "unary" and not row.elementwise:
            raise _Decline  # transpose(x): its own shape checks
        if type(a) is _Weak:
            if kind != "unary":
                raise _Decline  # sum(2): a tensor that does not require grad
            try:  # sin(1): a plain number again, as the ordinary path computes it (where an
                # underflow is no event: sigmoid(8103.1) is 1.0 after exp(-8103.1) underflows)
                with np.errstate(all="raise", under="ignore"):
                    r = float(row.fn(float(a.v)))
            except (FloatingPointError, OverflowError):
                raise _Decline from None
            if not math.isfinite(r):
                raise _Decline
            return _Weak(r)
        if kind == "unary":
            shape = self.shape_of[a]
        elif kind == "reduction":
            if 0 in self.shape_of[a]:
                raise _Decline  # max of nothing is an error, logsumexp of nothing -inf
            shape = ()
        else:
            raise _Decline
        return self._emit(row, None, a, None, start, end, shape)

    def statement(self, target: str | None, v) -> None:
        """An expression statement (``target`` None) or an assignment to a name."""
        if v is _UNBOUND:
            raise _Decline
        if target is not None:
            if target is _NOT_A_NAME or type(v) is _Weak:
                raise _Decline  # x = 2 makes a leaf; attributes belong to the REPL
            if v >= self.k and v not in self.named:
                self.named[v] = target
            self.env[target] = v
            self.assigned = True
        self.result = v
        self.out_name = "out" if target is None else target
        self.stmts += 1

    # -- the rest of the grammar ------------------------------------------------------------

    def args(self, *children):
        return [c for c in children if type(c) is not tuple or len(c) != 4]  # (not tokens)

    def simple_stmts(self, *children):
        return None

    def start(self, *groups):
        return None

    def _decline(self, *children):
        raise _Decline

    with_stmt = index = attr = method = vector = items = kwarg = subscripts = slice = _decline

    def __getattr__(self, name: str):
        """Every other rule of the grammar (strings, tuples, the REPL's Python statements):
        the ordinary path's."""
        if name.startswith("__"):
            raise AttributeError(name)
        return self._decline

    def template(self) -> Template | None:
        out = self.result
        if not self.stmts or type(out) is _Weak or out < self.k:
            return None  # the output must be a recorded op (a leaf output has nothing to replay)
        return build_template(self, out)
