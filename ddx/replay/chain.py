"""A whole sum of a small elementwise chain, forward and backward, in one call of a C loop.

blocked.py replays ``sum(e)`` (or ``mean(e)``) of an elementwise chain block by block for
arrays of half a million elements and more, where memory is the cost. Below GRAIN_SIZE the
cost is the other one: each op is a numpy call of about a microsecond, and the replay of
``sum((w*x+b)^2)`` at 10^3 elements makes a dozen of them. Here the template becomes a
program once (``program``), and each replay is one call of ddx/replay/chainloop.c, which runs
the ops of a block of 256 elements, feeds the block to ATen's cascade sum, runs the VJPs and
writes the leaves' gradients, block after block, for backward()'s default seed (the
gradients are Speculated, as blocked.py's are).

The ops are the op table's: a row that the C loop can run says how in its ``chain`` field,
formulas in ``a``, ``b`` (the inputs), ``o`` (the output), ``g`` (the gradient that reached
the output) and the row's keyword arguments, one for the forward value and one per input's
VJP, written with the same operations in the same order as the row's numpy functions (one
IEEE operation each: the same bits; tests/test_chain.py checks every such row against its
functions, specials and subnormals included). ``chain`` may instead be a function of
``spread`` (whether g is one number seen everywhere, a broadcast, as right after the sum:
scaled() multiplies in another order then) and the keyword arguments, giving the formulas or
None. A template any of whose ops has no formula, or whose arrays are not all of one shape
(0-d constants aside), or that is outside the sum kernel's one-row range, has no program and
replays as before.

Without the compiled module (no C compiler where ddx was installed) nothing here runs."""

from __future__ import annotations

import ast
from array import array
from math import prod
from operator import itemgetter

import numpy as np

from ..ops.kernels_sum import GRAIN_SIZE
from ..ops.kernels_sumloop import vector_bytes
from . import allocator
from .blocked import Speculated, whole_sum

try:
    from . import chainloop
except ImportError:  # (built by hatch_build.py; absent, every replay takes numpy's road)
    chainloop = None

_F64 = np.dtype(np.float64)
ENABLED = [chainloop is not None]  # (tests compare the two roads)
MIN, MAX_REGS = 32, 512  # the sum kernel's small row starts at 32 elements (kernels_sum)
# the C loop's instructions and register kinds (ddx/replay/chainloop.c)
ADD, SUB, MUL, DIV, NEG, SUM, OUT, FUSE, SUM_OF = range(9)
INPUT, NUMBER, BUFFER, ONE, OUTPUT = range(5)
_BINARY = {ast.Add: ADD, ast.Sub: SUB, ast.Mult: MUL, ast.Div: DIV}
_PARSED: dict[str, ast.expr] = {}


class Program:
    """A template's C program and what a call passes it."""

    __slots__ = ("code", "numbers", "pick", "consts", "targets", "n", "shape", "sum_node",
                 "of_sum", "seed", "size")

    def run(self, values: list) -> Speculated | None:
        """The template's values with the leaves' gradients for the default seed, or None
        (a binding not contiguous, a floating-point event: the caller goes the usual way)."""
        shape = self.shape
        outs = tuple([np.empty(shape, _F64) for _ in self.targets])
        try:  # (the C loop takes C-contiguous float64 arrays only)
            total = chainloop.run(self.code, self.n, self.pick(values) + self.consts, self.numbers,
                               outs)
        except (BufferError, ValueError):
            return None
        if total is None:
            return None
        out = Speculated(values)
        out[self.sum_node] = np.asarray(self.of_sum(_F64.type(total), self.n))
        adj: list = [None] * self.size
        adj[self.sum_node] = self.seed
        for j, g in zip(self.targets, outs):
            adj[j] = g
        out.adj = adj
        return out


class _Builder:
    """Registers and instructions, in the order the C loop wants them."""

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.code: list[int] = []
        self.numbers: list[float] = []
        self.number_regs: dict[tuple, int] = {}
        self.buffers = 0
        self.many: list[bool] = []  # per register: an array (stride 1), or one value

    def _reg(self, kind: int, index: int, many: bool) -> int:
        self.kinds += (kind, index)
        self.many.append(many)
        return len(self.many) - 1

    def input(self, k: int) -> int:
        return self._reg(INPUT, k, True)

    def number(self, x: float) -> int:
        key = (x, np.signbit(x))  # (0.0 and -0.0 are other numbers)
        if key not in self.number_regs:
            self.numbers.append(x)
            self.number_regs[key] = self._reg(NUMBER, len(self.numbers) - 1, False)
        return self.number_regs[key]

    def op(self, code: int, a: int, b: int = 0) -> int:
        many = self.many[a] or (code != NEG and self.many[b])
        d = self._reg(BUFFER if many else ONE, self.buffers, many)
        self.buffers += 1
        self.code += (code, d, a, b)
        return d

    def emit(self, code: int, a: int, b: int = 0) -> None:
        self.code += (code, b, a, 0)

    def fuse(self) -> None:
        """Pairs of arithmetic instructions over arrays whose first result only the second
        reads become one (FUSE: the same two roundings, no store and load between), and an
        operation that only the sum reads is made as the sum adds it (SUM_OF)."""
        code, kinds, many = self.code, self.kinds, self.many
        steps = [code[k:k + 4] for k in range(0, len(code), 4)]
        uses = [0] * len(many)
        for op, _, a, b in steps:
            uses[a] += 1
            if op < NEG:
                uses[b] += 1
        out: list[int] = []
        k = 0
        while k < len(steps):
            op, r, a, b = steps[k]
            nxt = steps[k + 1] if k + 1 < len(steps) else None
            if op < NEG and nxt is not None and kinds[2 * r] == BUFFER and uses[r] == 1 \
                    and many[a] and many[b]:
                op2, d, x, y = nxt
                if op2 < NEG and r in (x, y) and many[d] and many[y if x == r else x]:
                    out += (FUSE, d, a, b, op + 4 * op2 + 16 * (y == r), y if x == r else x, 0, 0)
                    k += 2
                    continue
                if op2 == SUM and x == r:
                    out += (SUM_OF, op, a, b)
                    k += 2
                    continue
            out += steps[k]
            k += 1
        self.code = out

    def formula(self, text: str, names: dict) -> int:
        """The register of ``text`` over the registers in ``names``: a bare name is that
        register itself (a VJP that passes g on passes the very array)."""
        tree = _PARSED.get(text)
        if tree is None:
            tree = _PARSED[text] = ast.parse(text, mode="eval").body
        stack, done = [(tree, False)], []
        while stack:  # (postorder with an explicit stack)
            node, ready = stack.pop()
            if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
                if ready:
                    b, a = done.pop(), done.pop()
                    done.append(self.op(_BINARY[type(node.op)], a, b))
                else:
                    stack += [(node, True), (node.right, False), (node.left, False)]
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                if ready:
                    done.append(self.op(NEG, done.pop()))
                else:
                    stack += [(node, True), (node.operand, False)]
            elif isinstance(node, ast.Name):
                done.append(names[node.id])
            elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
                done.append(self.number(float(node.value)))
            else:
                raise ValueError(f"not a chain formula: {text!r}")
        return done[0]


def replay(t, values: list) -> Speculated | None:
    """Template ``t``'s replay by its program (made at the first call; t.chain False when it
    has none), or None."""
    prog = t.chain
    if prog is None:
        prog = t.chain = program(t) or False
        if prog and allocator.worth_it(t.shapes):
            allocator.tune()  # (once per process: no fresh pages per call)
    return prog.run(values) if prog else None


def formulas(row, kw: dict, spread: bool) -> tuple | None:
    """A row's chain formulas for these keyword arguments, or None."""
    found = row.chain
    if found is None or callable(found) and (found := found(spread, **kw)) is None:
        return None
    return found


def program(t) -> Program | None:
    """Template ``t``'s program (see the module's text), or None."""
    ends = whole_sum(t) if chainloop is not None and vector_bytes() == 32 else None
    if ends is None:
        return None
    s, q = ends
    op = t.op[s]
    shape = t.shapes[q][0]
    n = prod(shape)
    if not MIN <= n < GRAIN_SIZE:
        return None
    whole = (shape, _F64)
    spread = t.vjp[s][0](t.one, np.zeros((), _F64), np.broadcast_to(np.zeros((), _F64), shape))
    if type(spread) is not np.ndarray or spread.shape != shape or any(spread.strides) \
            or spread.dtype != _F64:
        return None
    prog = Program()
    build = _Builder()
    regs: dict[int, int] = {}
    inputs: list[int] = []  # value indexes of the bindings read
    consts: list[np.ndarray] = []  # constant arrays of the whole shape

    def value(j: int) -> int | None:
        if j in regs:
            return regs[j]
        v = t.values0[j]
        if j >= 0 and t.op[j] is None and t.shapes[j] == whole:
            if j in t.slots:
                inputs.append(j)
                regs[j] = build.input(len(inputs) - 1)
            elif type(v) is np.ndarray and v.dtype == _F64:
                consts.append(np.ascontiguousarray(v))
                regs[j] = build.input(-len(consts))
            else:
                return None
        elif (j < 0 or t.op[j] is None and j not in t.slots) and v is not None \
                and np.ndim(v) == 0 and type(v) in (int, float, np.float64, np.ndarray) \
                and (type(v) is not np.ndarray or v.dtype == _F64):
            regs[j] = build.number(float(v))
        else:
            return None
        return regs[j]

    def ins_of(i: int) -> list[int] | None:
        if t.a[i] is None:
            return None
        found = [value(j) if j < 0 or t.op[j] is None else regs.get(j)
                 for j in (t.a[i], t.b[i]) if j is not None]
        return None if None in found else found

    def names(i: int, ins: list[int], extra: dict) -> dict:
        found = dict(zip("ab", ins))
        for key, v in (t.kw[i] or {}).items():
            if type(v) in (int, float):
                found[key] = build.number(float(v))
        found.update(extra)
        return found

    for i in t.forward_order[:-1]:
        row, kw = t.op[i], t.kw[i] or {}
        if not row.elementwise or t.shapes[i] != whole:
            return None
        found = formulas(row, kw, False)
        ins = ins_of(i)
        if found is None or ins is None:
            return None
        regs[i] = build.formula(found[0], names(i, ins, {}))
        if not build.many[regs[i]]:
            return None
    build.emit(SUM, regs[q])
    adj = {q: build.number(float(spread.flat[0]))}
    is_spread = {q: True}
    for i in t.backward_order[1:]:
        row, kw = t.op[i], t.kw[i] or {}
        if i not in adj:
            return None
        for slot in t.grad_slots[i]:
            j = t._slot_input(i, slot)
            found = formulas(row, kw, is_spread[i])
            ins = ins_of(i)
            if t.shapes[j] != whole or found is None or ins is None:
                return None
            g = adj[i]
            gi = build.formula(found[1 + slot], names(i, ins, {"g": g, "o": regs[i]}))
            if j in adj:
                adj[j], is_spread[j] = build.op(ADD, adj[j], gi), False
            else:
                adj[j], is_spread[j] = gi, gi == g and is_spread[i]
    targets = [j for _, j in t.grads_at if j in adj]
    placed: set[int] = set()
    for k, j in enumerate(targets):
        r = adj[j]
        if build.kinds[2 * r] == BUFFER and r not in placed:  # made in the gradient's array
            build.kinds[2 * r:2 * r + 2] = [OUTPUT, k]
            placed.add(r)
        else:
            build.emit(OUT, r, k)
    if len(build.many) > MAX_REGS:
        return None
    build.fuse()
    # the constants' arrays go after the bindings'
    kinds = build.kinds
    for r in range(0, len(kinds), 2):
        if kinds[r] == INPUT and kinds[r + 1] < 0:  # (constant c was -1 - c)
            kinds[r + 1] = len(inputs) - 1 - kinds[r + 1]
    prog.code = array("i", [len(build.many), len(build.code) // 4, *kinds, *build.code]).tobytes()
    prog.numbers = array("d", build.numbers).tobytes()
    prog.pick = itemgetter(*inputs) if len(inputs) > 1 else lambda v, k=inputs[0]: (v[k],)
    prog.consts, prog.size = tuple(consts), t.n
    prog.targets, prog.n, prog.shape, prog.sum_node = targets, n, shape, s
    prog.of_sum, prog.seed = op.of_sum, t.one
    return prog


def run_formula(text: str, names: dict, n: int) -> np.ndarray | None:
    """One chain formula run by the C loop on ``names`` (float64 arrays of n elements, or
    numbers: one value seen everywhere), its n values; None on a floating-point event.
    (How tests/test_chain.py holds each row's formulas to the row's numpy functions.)"""
    build = _Builder()
    arrays = []
    regs = {}
    for key, v in names.items():
        if type(v) is np.ndarray:
            arrays.append(np.ascontiguousarray(v, _F64))
            regs[key] = build.input(len(arrays) - 1)
        else:
            regs[key] = build.number(float(v))
    build.emit(OUT, build.formula(text, regs), 0)
    code = array("i", [len(build.many), len(build.code) // 4, *build.kinds, *build.code])
    out = np.empty(n, _F64)
    total = chainloop.run(code.tobytes(), n, tuple(arrays), array("d", build.numbers).tobytes(),
                       (out,))
    return None if total is None else out
