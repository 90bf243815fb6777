"""Evaluation: the AST run over tensors with PyTorch's semantics, iteratively (post-order code)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import (
    DdxError,
    DdxNameError,
    DdxRuntimeError,
    DdxShapeError,
    DdxTypeError,
    DdxValueError,
    suggest,
)
from ..fmt import number as fmt_number
from ..lang.lowering import BINARY
from ..lang.tree import Ast, Program, Stmt
from ..limits import MAX_DIMS, check_elements, short_int
from ..ops import CALLS, OPS, stack_op
from . import record
from .journal import Journal
from .record import GRAD_MODE, apply
from .tensor import AccumulateGrad, Function, Tensor, label_of

DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "double": np.float64,
          "float": np.float32, "long": np.int64, "bool": np.bool_}
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


class NoGrad:
    """The ``no_grad`` context: ``with no_grad: ...`` records no graph."""

    def __repr__(self) -> str:
        return "<torch.autograd.grad_mode.no_grad object>"


class DType:
    __slots__ = ("np",)

    def __init__(self, np_dtype) -> None:
        self.np = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return f"torch.{self.np.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, DType) and other.np == self.np

    def __hash__(self) -> int:
        return hash(self.np)


class Namespace:
    """``torch``: lets ``torch.tensor(...)`` and ``torch.float32`` be typed as in the seed."""

    def __repr__(self) -> str:
        return "<module 'torch'>"


TORCH = Namespace()
NO_GRAD = NoGrad()


def weak(value: float | int | bool) -> Tensor:
    """A Python-number constant (PyTorch's wrapped scalar)."""
    t = Tensor(np.asarray(value), False, weak=True)
    t.const = True
    return t


def fold_numbers(sym: str, x, y) -> float | None:
    """``x sym y`` for two plain numbers, as Python (and so PyTorch) computes it; None for '@'."""
    x, y = float(x), float(y)
    with np.errstate(all="ignore"):
        if sym == "+":
            return x + y
        if sym == "-":
            return x - y
        if sym == "*":
            return x * y
        if sym == "/":
            return float(np.float64(x) / np.float64(y))
        if sym == "^":
            try:
                r = x ** y
            except (OverflowError, ZeroDivisionError):
                r = float(np.power(np.float64(x), np.float64(y)))
            return math.nan if isinstance(r, complex) else r
    return None


def _operands(node: Ast) -> tuple | list:
    """The sub-expressions a node evaluates first, in order."""
    if node.kind != "index" and not node.kw:
        return node.kids
    kids = list(node.kids)
    if node.kind == "index":
        for sub in node.value:
            if isinstance(sub, tuple):
                kids.extend(p for p in sub[1:] if p is not None)
            else:
                kids.append(sub)
    if node.kw:
        kids.extend(value for _, value, _ in node.kw)
    return kids


def compile_expr(root: Ast) -> list[Ast]:
    """Post-order list of nodes: evaluating them in order with a value stack needs no recursion.

    (A pre-order walk that visits the last operand first, reversed: each node once on the
    stack, no markers.)"""
    code: list[Ast] = []
    visit = code.append
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        visit(node)
        if node.kw or node.kind == "index":
            extend(_operands(node))
        elif node.kids:
            extend(node.kids)
    code.reverse()
    return code


class Evaluator:
    """Runs statements against an environment of names, recording every tensor it makes."""

    journal: Journal | None = None  # a REPL session's undo log for the running statement

    def __init__(self, program: Program, env: dict[str, Any] | None = None, *,
                 dtype=np.float64, leaf_requires: Callable[[str], bool] | None = None,
                 surface=None) -> None:
        self.program = program
        self.env: dict[str, Any] = {} if env is None else env
        self.dtype = np.dtype(dtype)
        self.leaf_requires = leaf_requires or (lambda name: True)
        # The REPL's PyTorch surface (ddx/app/surface.py), handed in by the session: functions,
        # attributes and methods beyond the expression language's. None in one-liners.
        self.surface = surface
        self.repl = surface is not None
        self.source = program.source
        self.nodes: list[Tensor] = []
        self.warnings: list[str] = []
        self.printed: list[str] = []
        self.functions = FUNCTIONS
        if surface is not None:
            self.functions = Functions(surface.REPL_FUNCTIONS)

    # --- statements ---------------------------------------------------------------------
    def run(self) -> Any:
        """Run every statement; the value of the last one (a name's tensor for assignments)."""
        result = None
        for stmt in self.program.stmts:
            result = self.run_stmt(stmt)
        return result

    def run_stmt(self, stmt: Stmt) -> Any:
        try:
            with record.fp_guard():
                return self._run_stmt(stmt)
        except DdxError as exc:
            raise exc.at(stmt.start, stmt.end, self.program.source)
        finally:
            if record.WARNINGS:
                self.warnings.extend(msg for _, msg in record.WARNINGS)
                record.WARNINGS.clear()

    def _run_stmt(self, stmt: Stmt) -> Any:
        if stmt.kind == "with":
            ctx = self.evaluate(stmt.value)
            if not isinstance(ctx, NoGrad):
                raise DdxTypeError("'with' takes no_grad (or torch.no_grad())",
                                   start=stmt.value.start, end=stmt.value.end)
            before = GRAD_MODE.enabled
            GRAD_MODE.enabled = False
            try:
                result = None
                for inner in stmt.body:
                    result = self._run_stmt(inner)
                return result
            finally:
                GRAD_MODE.enabled = before
        value = self.evaluate(stmt.value)
        if stmt.kind == "expr":
            return value
        return self.assign(stmt.target, value)

    def assign(self, target: Ast, value: Any) -> Any:
        if target.kind == "attr":
            return self.set_attr(target, value)
        if target.kind != "name":
            raise DdxTypeError("can only assign to a name or an attribute (x.requires_grad = true)",
                               start=target.start, end=target.end)
        name = target.value
        journal = self.journal
        if isinstance(value, Tensor):
            if value.const:
                value = self.make_leaf(name, value.value, start=target.start)
            elif value.name is None and not value.weak:
                if journal is not None:
                    journal.keep(value, "name")
                value.name = name
            elif value.weak:
                value = self.make_leaf(name, value.value, start=target.start)
        if journal is not None:
            journal.bind(self.env, name, value)
        else:
            self.env[name] = value
        return value

    def make_leaf(self, name: str, raw, *, start: int | None = None, dtype=None) -> Tensor:
        """A named leaf (x = 2, or a binding): float, requiring grad unless told otherwise.

        In the REPL the value is a copy: a literal's array is cached with the parsed text, and
        an in-place op on the leaf (x.zero_()) must not change every later ``x = 2.0``."""
        arr = (np.array(raw, dtype=dtype or self.dtype) if self.repl
               else np.asarray(raw, dtype=dtype or self.dtype))
        t = Tensor(arr, False, name=name, span=(start, start) if start is not None else None)
        t.requires_grad = self.leaf_requires(name) and GRAD_MODE.enabled
        self.nodes.append(t)
        return t

    def set_attr(self, target: Ast, value: Any) -> Any:
        obj = self.evaluate(target.kids[0])
        if not isinstance(obj, Tensor) or obj.weak:
            raise DdxTypeError(f"cannot set .{target.value} on {type_name(obj)}")
        journal = self.journal
        if target.value == "requires_grad":
            flag = truth(value)
            if journal is not None:
                journal.keep(obj, "requires_grad")
            obj.set_requires_grad(flag, via="attr")
        elif target.value == "grad":
            if value is None:
                grad = None
            elif isinstance(value, Tensor) and not value.weak:
                if value is obj:
                    raise DdxRuntimeError("can't assign Variable as its own grad")
                if value.value.dtype != obj.value.dtype:
                    raise DdxRuntimeError("assigned grad has data of a different type",
                                          hint=f"the tensor is {obj.value.dtype}, the grad "
                                               f"{value.value.dtype}")
                if value.value.shape != obj.value.shape:
                    raise DdxRuntimeError("assigned grad has data of a different size",
                                          hint=f"the tensor has shape {list(obj.value.shape)}, "
                                               f"the grad {list(value.value.shape)}")
                grad = np.array(value.value)  # (a copy: .grad never aliases another value)
            else:
                raise DdxTypeError("assigned grad expected to be a Tensor or None but got grad "
                                   f"of type {_py_type(value)}")
            if journal is not None:
                journal.set(obj, "grad", grad)
            else:
                obj.grad = grad
        else:
            raise DdxTypeError(f"cannot set attribute '{target.value}'")
        return None

    # --- expressions ----------------------------------------------------------------------
    def evaluate(self, root: Ast) -> Any:
        cache = self.program._compiled
        if cache is None:
            cache = self.program._compiled = {}
        code = cache.get(id(root))
        if code is None:
            code = cache[id(root)] = compile_expr(root)
        consts = cache.setdefault("consts", {})
        stack: list[Any] = []
        for node in code:
            n = len(node.kids) if node.kind != "index" else None
            kind = node.kind
            if kind == "num":  # constants are immutable: one Tensor per literal, made once
                t = consts.get(id(node))
                if t is None:
                    t = consts[id(node)] = weak(node.value[0])
                stack.append(t)
            elif kind == "name":
                stack.append(self.lookup(node))
            elif kind == "bin":
                b = stack.pop()
                a = stack.pop()
                stack.append(self.binary(node, a, b))
            elif kind == "unop":
                stack.append(self.unary(node, stack.pop()))
            else:
                count = len(_operands(node))
                args = stack[len(stack) - count:] if count else []
                del stack[len(stack) - count:]
                stack.append(self.compound(node, args))
            del n
        return stack[-1]

    def label(self, node: Ast) -> str:
        return label_of(self.program.source, node.start, node.end)

    def record(self, t: Tensor, node: Ast) -> Tensor:
        if t.span is None:
            t.span = (node.start, node.end)
        if t.label is None:
            t.label = self.label(node)
        if not t.weak:
            self.nodes.append(t)
        return t

    def op(self, name: str, node: Ast, inputs: list[Tensor], kw: dict | None = None, *,
           grad_fn: str | None = None) -> Tensor:
        out = apply(OPS[name], inputs, kw, grad_fn=grad_fn, span=(node.start, node.end),
                    src=self.source)
        if not out.weak:
            self.nodes.append(out)
        return out

    def lookup(self, node: Ast) -> Any:
        name = node.value
        if name in self.env:
            return self.env[name]
        if name in CONSTANTS:
            return weak(CONSTANTS[name])
        if name in ("true", "True"):
            return True
        if name in ("false", "False"):
            return False
        if name == "None":
            return None
        if name == "no_grad":
            return NO_GRAD
        if name == "torch":
            return TORCH
        if name in DTYPES:
            return DType(DTYPES[name])
        known = list(self.env) + list(CONSTANTS)
        close = suggest(name, known + list(self.functions))
        hint = f"did you mean '{close}'?" if close else None
        if name in self.functions:
            raise DdxNameError(f"'{name}' is a function: call it as {name}(...)",
                               start=node.start, end=node.end)
        raise DdxNameError(f"unknown name '{name}'" + (f"; did you mean '{close}'?" if close else ""),
                           start=node.start, end=node.end,
                           hint=None if close else ("bind it on the command line, e.g. "
                                                    f"{name}=1" if not self.repl else hint))

    # --- arithmetic ---------------------------------------------------------------------
    def tensor_operand(self, value: Any, node: Ast, side: str) -> Tensor:
        if isinstance(value, Tensor):
            return value
        if isinstance(value, bool):
            return weak(value)
        raise DdxTypeError(f"'{node.value}' needs numbers or tensors, got {type_name(value)} "
                           f"on the {side}", start=node.pos, end=node.pos + 1)

    def check_broadcast(self, node: Ast, a: Tensor, b: Tensor) -> None:
        sa, sb = a.value.shape, b.value.shape
        if sa == sb or not sa or not sb:
            return
        n = max(len(sa), len(sb))
        pa = (1,) * (n - len(sa)) + sa
        pb = (1,) * (n - len(sb)) + sb
        for i in range(n - 1, -1, -1):
            if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
                raise DdxShapeError(
                    f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                    f"non-singleton dimension {i}",
                    start=node.pos, end=node.pos + len(node.value),
                    hint=f"'{node.value}' got shapes {list(sa)} and {list(sb)}")

    def binary(self, node: Ast, a: Any, b: Any) -> Tensor:
        sym = node.value
        a = self.tensor_operand(a, node, "left")
        b = self.tensor_operand(b, node, "right")
        if a.weak and b.weak:
            return self.fold(node, sym, a.value.item(), b.value.item())
        if sym == "@":
            return self.matmul(node, a, b)
        if not (a.weak or b.weak):
            self.check_broadcast(node, a, b)
        plan = BINARY.get((sym, a.weak, b.weak))
        if plan is None:
            raise DdxValueError(f"unknown operator {sym!r}")  # pragma: no cover - grammar forbids
        first = a if plan.first == "a" else b
        if plan.first == "1/b":
            first = self.op("reciprocal", node, [b])
            first.label = f"1/{self.label(node.kids[1])}"
        if plan.key is not None:  # the plain number is a keyword argument: rsub, pow_scalar
            number = a if b is first else b
            return self.op(plan.op, node, [first], {plan.key: number.value.item()})
        return self.op(plan.op, node, [first, a if plan.second == "a" else b])

    def fold(self, node: Ast, sym: str, x, y) -> Tensor:
        """Both operands are plain numbers: Python arithmetic, as PyTorch would see it."""
        r = fold_numbers(sym, x, y)
        if r is None:
            raise DdxTypeError("'@' needs tensors, got two numbers",
                               start=node.pos, end=node.pos + 1)
        if not math.isfinite(r) and math.isfinite(x) and math.isfinite(y):
            self.warnings.append(f"{self.label(node)} gives {fmt_number(r)}")
        return weak(r)

    def matmul(self, node: Ast, a: Tensor, b: Tensor) -> Tensor:
        da, db = a.value.ndim, b.value.ndim
        names = {(1, 1): "dot", (2, 1): "mv", (1, 2): "vm", (2, 2): "mm"}
        if (da, db) not in names:
            raise DdxShapeError(f"'@' needs 1-D or 2-D tensors, got shapes {list(a.shape)} and "
                                f"{list(b.shape)}", start=node.pos, end=node.pos + 1)
        inner_a = a.shape[-1]
        inner_b = b.shape[0]
        if inner_a != inner_b:
            raise DdxShapeError(
                f"'@' shapes {list(a.shape)} and {list(b.shape)} cannot be multiplied "
                f"({inner_a} != {inner_b})", start=node.pos, end=node.pos + 1)
        return self.op(names[(da, db)], node, [a, b])

    def unary(self, node: Ast, a: Any) -> Any:
        a = self.tensor_operand(a, node, "right")
        if node.value == "+":
            return a
        if a.weak:
            return weak(-a.value.item())
        return self.op("neg", node, [a])

    # --- calls, attributes, methods, indexing, literals --------------------------------------
    def compound(self, node: Ast, values: list) -> Any:
        try:
            return self._compound(node, values)
        except DdxError as exc:
            raise exc.at(node.start, node.end, self.program.source)

    def _compound(self, node: Ast, values: list) -> Any:
        kind = node.kind
        if kind == "vec":
            return self.vector(node, values)
        if kind == "index":
            return self.index(node, values)
        npos = len(node.kids)
        pos, kwv = values[:npos], values[npos:]
        kw = {name: (v, p) for (name, _, p), v in zip(node.kw, kwv)}
        if kind == "call":
            fn = self.functions.get(node.value)
            if fn is None:
                close = suggest(node.value, self.functions)
                raise DdxNameError(
                    f"unknown function '{node.value}'" + (f"; did you mean '{close}'?" if close
                                                          else ""),
                    start=node.pos, end=node.pos + len(node.value))
            return fn(self, node, pos, kw)
        if kind in ("attr", "method"):
            if not self.repl:
                what = f".{node.value}" + ("()" if kind == "method" else "")
                raise DdxTypeError(f"{what} belongs to the REPL language (ddx repl, ddx run)",
                                   start=node.pos, end=node.end)
            surface = self.surface
            if kind == "attr":
                return surface.get_attr(self, node, pos[0])
            return surface.call_method(self, node, pos[0], pos[1:], kw)
        raise DdxValueError(f"cannot evaluate {kind}")  # pragma: no cover

    def vector(self, node: Ast, items: list) -> Tensor:
        if not items:
            t = Tensor(np.zeros((0,), dtype=self.dtype))
            t.const = True
            return self.record(t, node)
        tensors = []
        for item in items:
            if not isinstance(item, Tensor):
                if isinstance(item, bool):
                    item = weak(item)
                else:
                    raise DdxTypeError(f"a vector holds numbers, not {type_name(item)}",
                                       start=node.start, end=node.end)
            tensors.append(item)
        shapes = {t.value.shape for t in tensors}
        if len(shapes) > 1:
            first, other = sorted(shapes, key=len)[:2]
            raise DdxShapeError(f"ragged literal: items have shapes {list(first)} and "
                                f"{list(other)}", start=node.start, end=node.end)
        item = tensors[0].value
        if item.ndim >= MAX_DIMS:
            raise DdxShapeError(f"a literal nests at most {MAX_DIMS} brackets deep (a tensor has "
                                f"at most {MAX_DIMS} dimensions)", start=node.start,
                                end=node.start + 1)
        if len(tensors) * item.size > 100_000:  # (the one check a small literal pays)
            check_elements(len(tensors) * item.size, "a [..] literal")
        if all(t.const for t in tensors):
            values = [t.value for t in tensors]
            arr = np.stack(values)
            if arr.dtype.kind == "f" or not self.repl:
                arr = arr.astype(self.dtype if arr.dtype.kind != "f" or arr.dtype == np.float64
                                 else arr.dtype)
            t = Tensor(arr)
            t.const = True
            t.op = "const"
            return self.record(t, node)
        tensors = [Tensor(np.asarray(t.value, dtype=self.dtype)) if t.weak else t for t in tensors]
        return self.op(stack_op(len(tensors)).name, node, tensors)

    def index(self, node: Ast, values: list) -> Tensor:
        base = values[0]
        if isinstance(base, tuple) and len(node.value) == 1 and not isinstance(node.value[0],
                                                                                tuple):
            i = self.int_arg(values[1], node)
            if not -len(base) <= i < len(base):
                raise DdxShapeError("tuple index out of range", start=node.pos, end=node.end)
            return base[i]
        if not isinstance(base, Tensor) or base.weak:
            raise DdxTypeError(f"cannot index {type_name(base)}", start=node.pos,
                               end=node.pos + 1)
        rest = iter(values[1:])
        cur = base
        dim = 0
        for sub in node.value:
            if dim >= cur.value.ndim:
                raise DdxShapeError(f"too many indices for tensor of dimension {base.value.ndim}",
                                    start=node.pos, end=node.end)
            size = cur.value.shape[dim]
            if isinstance(sub, tuple):
                parts = [self.int_arg(next(rest), node) if p is not None else None
                         for p in sub[1:]]
                if parts[2] is not None and parts[2] <= 0:
                    raise DdxValueError("step must be greater than zero", start=node.pos)
                sl = slice(*parts)
                if sl.indices(size) == (0, size, 1):
                    dim += 1
                    continue
                key = (slice(None),) * dim + (sl,)
                cur = self.op("slice", node, [cur], {"key": key})
                dim += 1
            else:
                i = self.int_arg(next(rest), node)
                if not -size <= i < size:
                    raise DdxShapeError(f"index {short_int(i)} is out of bounds for dimension "
                                        f"{dim} with size {size}", start=node.pos, end=node.end)
                key = (slice(None),) * dim + (i,)
                cur = self.op("select", node, [cur], {"key": key})
        return cur

    def int_arg(self, value: Any, node: Ast) -> int:
        if isinstance(value, Tensor) and value.value.size == 1:
            v = value.value.item()
            if float(v).is_integer():
                return int(v)
        raise DdxTypeError("indices must be integers", start=node.pos, end=node.end)


def truth(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.value.size == 1:
        return bool(value.value.item())
    raise DdxTypeError(f"expected true or false, got {type_name(value)}")


def _py_type(value: Any) -> str:
    """Python's name for a value's type, as PyTorch's messages show it."""
    if isinstance(value, Tensor):
        return "int" if value.value.dtype.kind in "iu" else (
            "bool" if value.value.dtype.kind == "b" else "float")
    return "NoneType" if value is None else type(value).__name__


def type_name(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Tensor):
        return "a number" if value.weak else f"a tensor of shape {list(value.shape)}"
    if isinstance(value, (Function, AccumulateGrad)):
        return f"<{value.name}>"
    if isinstance(value, tuple):
        return "a tuple"
    return type(value).__name__


# --- functions -----------------------------------------------------------------------------

def check_arity(node: Ast, args: list, n: int, kw: dict, allowed: tuple = ()) -> None:
    if len(args) != n:
        want = {1: "1 argument", 2: "2 arguments"}.get(n, f"{n} arguments")
        raise DdxTypeError(f"{node.value}() takes {want} ({len(args)} given)",
                           start=node.pos, end=node.end)
    for name, (_, pos) in kw.items():
        if name not in allowed:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{name}'",
                               start=pos, end=pos + len(name))


def _as_tensor(ev: Evaluator, node: Ast, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    raise DdxTypeError(f"{node.value}() needs a tensor or a number, got {type_name(value)}",
                       start=node.pos, end=node.end)


def _unary(name: str):
    def call(ev: Evaluator, node: Ast, args: list, kw: dict) -> Tensor:
        check_arity(node, args, 1, kw)
        a = _as_tensor(ev, node, args[0])
        if a.weak:
            a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "f"
                                  else a.value.dtype), weak=True)
            a.const = True
        return ev.op(name, node, [a])
    return call


def _dim(ev: Evaluator, node: Ast, a: Tensor, args: list, kw: dict) -> int | None:
    dim = None
    if len(args) == 2:
        dim = args[1]
    elif "dim" in kw:
        dim = kw["dim"][0]
    if dim is None:
        return None
    d = ev.int_arg(dim, node)
    nd = a.value.ndim
    if not -max(nd, 1) <= d < max(nd, 1) or nd == 0:
        raise DdxShapeError(f"Dimension out of range (expected to be in range of "
                            f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {d})",
                            start=node.pos, end=node.end)
    return d % nd


def _reduction(name: str):
    def call(ev: Evaluator, node: Ast, args: list, kw: dict) -> Tensor:
        if len(args) not in (1, 2):
            check_arity(node, args, 1, kw, ("dim",))
        for k, (_, pos) in kw.items():
            if k != "dim":
                raise DdxTypeError(f"{name}() got an unexpected keyword argument '{k}'",
                                   start=pos, end=pos + len(k))
        a = _as_tensor(ev, node, args[0])
        if a.weak:
            a = Tensor(np.asarray(a.value, dtype=ev.dtype))
        dim = _dim(ev, node, a, args, kw)
        if a.value.size == 0 and name in ("max", "min"):
            raise DdxRuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                  "input.numel() == 0. Specify the reduction dim with the 'dim' "
                                  "argument.", start=node.pos, end=node.end)
        kwargs = {"dim": dim} if dim is not None else {}
        return ev.op(name, node, [a], kwargs)
    return call


def _binary_fn(name: str):
    def call(ev: Evaluator, node: Ast, args: list, kw: dict) -> Tensor:
        check_arity(node, args, 2, kw)
        a, b = (_as_tensor(ev, node, x) for x in args)
        if name == "pow":
            fake = Ast("bin", "^", (), (), start=node.start, end=node.end, pos=node.pos)
            return ev.binary(fake, a, b)
        if a.weak and b.weak:
            return weak(float(OPS[name].fn(a.value, b.value)))
        # a plain number stays a wrapped scalar, as for the operators: (None, 0) in next_functions
        ev.check_broadcast(Ast("bin", name, (), (), start=node.start, end=node.end, pos=node.pos),
                           a, b)
        return ev.op(name, node, [a, b])
    return call


def _dot(ev: Evaluator, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 2, kw)
    a, b = (_as_tensor(ev, node, x) for x in args)
    if a.value.ndim != 1 or b.value.ndim != 1:
        raise DdxShapeError(f"1D tensors expected, but got {a.value.ndim}D and {b.value.ndim}D "
                            "tensors", start=node.pos, end=node.end)
    if a.shape != b.shape:
        raise DdxShapeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have "
                            "the same number of elements, but got %d and %d elements respectively"
                            % (a.shape[0], b.shape[0], a.shape[0], b.shape[0]),
                            start=node.pos, end=node.end)
    return ev.op("dot", node, [a, b])


def _transpose(ev: Evaluator, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 1, kw)
    a = _as_tensor(ev, node, args[0])
    if a.value.ndim > 2:
        raise DdxShapeError(f"transpose() expects a tensor with <= 2 dimensions, but got "
                            f"{a.value.ndim}D", start=node.pos, end=node.end)
    return ev.op("transpose", node, [a])


# How each kind of row (Op.call) is called by name; the rows themselves are in ddx/ops.py.
_CALL_KINDS: dict[str, Callable] = {"unary": _unary, "binary": _binary_fn,
                                    "reduction": _reduction}
_SPECIAL: dict[str, Callable] = {"dot": _dot, "transpose": _transpose}  # their shape checks


class Functions(Mapping):
    """Every function a user may call: the op table's callable rows (looked up when called,
    so a row registered at run time is there at once), and ``extra`` (the REPL's own)."""

    def __init__(self, extra: dict[str, Callable] | None = None) -> None:
        self.extra = extra or {}
        self._made: dict[int, tuple] = {}  # id(row) -> (row, its caller)

    def __getitem__(self, name: str) -> Callable:
        fn = self.extra.get(name)
        if fn is not None:
            return fn
        row = CALLS[name]  # (KeyError: not a function)
        made = self._made.get(id(row))
        if made is None or made[0] is not row:
            caller = _SPECIAL.get(row.name) or _CALL_KINDS[row.call](row.name)
            made = self._made[id(row)] = (row, caller)
        return made[1]

    def __contains__(self, name: object) -> bool:
        return name in self.extra or name in CALLS

    def __iter__(self):
        yield from self.extra
        yield from (name for name in CALLS if name not in self.extra)

    def __len__(self) -> int:
        return len(set(self.extra) | set(CALLS))


FUNCTIONS = Functions()
