"""Evaluation: the AST run over tensors with PyTorch's semantics, iteratively (post-order code)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DdxError, DdxNameError, DdxTypeError, suggest
from ..lang.tree import Ast, Program, Stmt
from ..ops import OPS
from . import record
from .arithmetic import Arithmetic
from .binding import Binding
from .compound import Compound
from .functions import FUNCTIONS, LISTS, Functions
from .journal import Journal
from .namespaces import MODULES, close_name
from .record import GRAD_MODE, apply
from .tensor import Tensor, label_of
from .values import (
    CONSTANTS,
    DTYPES,
    NO_GRAD,
    Break,
    Continue,
    ControlFlow,
    DType,
    PyBuiltinType,
    Return,
    weak,
)


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


_CALLS = ("call", "method")
# modules by the names code usually imports them as: an unknown one of these is a missing import
IMPORTED_AS = {"nn": "from torch import nn", "optim": "from torch import optim",
               "autograd": "from torch import autograd", "np": "import numpy as np",
               "numpy": "import numpy", "math": "import math"}


def compile_expr(root: Ast, callees: bool = False) -> list[Ast]:
    """Post-order list of nodes: evaluating them in order with a value stack needs no recursion.
    With ``callees`` (the REPL's Python), a call of a name with arguments is preceded by a
    "callee" node: Python looks the function up before it evaluates the arguments.

    (A pre-order walk that visits the last operand first, reversed: each node once on the
    stack, no markers.)"""
    code: list[Ast] = []
    visit = code.append
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        visit(node)
        if node.kind in _CALLS and node.value in LISTS:  # cat([a, b]): a list, not a stack
            for kid in node.kids:
                if kid.kind == "vec":
                    kid.kind = "list"
        if callees and node.kind == "call" and (node.kids or node.kw):
            stack.append(Ast("callee", node.value, (), (), node.start, node.end, node.pos))
        if node.kw or node.kind == "index":
            extend(_operands(node))
        elif node.kids:
            extend(node.kids)
    code.reverse()
    return code


class Evaluator(Arithmetic, Compound, Binding):
    """Runs statements against an environment of names, recording every tensor it makes."""

    journal: Journal | None = None  # a REPL session's undo log for the running statement
    python_values = False  # a .py script: x = 2.0 and x = [1, 2] stay a float and a list

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
        self.frames: list = []  # the user's functions being called (the REPL's Python)
        self.partial = ""  # print(..., end=""): the line printed so far
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
        except ControlFlow as flow:
            word = {Break: "'break' outside loop", Continue: "'continue' not properly in loop",
                    Return: "'return' outside function"}[type(flow)]
            raise DdxTypeError(word).at(stmt.start, stmt.end, self.program.source) from None
        except DdxError as exc:
            raise exc.at(stmt.start, stmt.end, self.program.source)
        finally:
            if record.WARNINGS:
                self.warnings.extend(msg for _, msg in record.WARNINGS)
                record.WARNINGS.clear()

    def run_inner(self, stmt: Stmt) -> Any:
        """A statement inside a block (the REPL's Python): errors keep their own spans, and one
        without a span gets this statement's (not the outermost block's)."""
        try:
            return self._run_stmt(stmt)
        except DdxError as exc:
            raise exc.at(stmt.start, stmt.end, self.program.source)

    def _run_stmt(self, stmt: Stmt) -> Any:
        kind = stmt.kind
        if kind != "with" and kind != "expr" and kind != "assign":
            if self.surface is None:
                raise DdxTypeError(f"'{kind}' belongs to the REPL language (ddx repl, ddx run)",
                                   start=stmt.start, end=stmt.end)
            return self.surface.run_stmt(self, stmt)
        if stmt.kind == "with":
            before = GRAD_MODE.enabled  # (set_grad_enabled(b) sets the mode as it is called)
            ctx = self.evaluate(stmt.value)
            if self.surface is not None and hasattr(ctx, "py_enter"):  # profiler, hooks
                return self.surface.run_with(self, stmt, ctx)
            enabled = getattr(ctx, "grad_enabled", None)
            if enabled is None:
                GRAD_MODE.enabled = before
                raise DdxTypeError("'with' takes no_grad (or torch.no_grad(), enable_grad(), "
                                   "set_grad_enabled(b))", start=stmt.value.start,
                                   end=stmt.value.end)
            GRAD_MODE.enabled = enabled
            try:
                result = None
                for inner in stmt.body:
                    result = self.run_inner(inner)
                return result
            finally:
                GRAD_MODE.enabled = before
        value = self.evaluate(stmt.value)
        if stmt.kind == "expr":
            return value
        result = self.assign(stmt.target, value)
        if stmt.extra and "also" in stmt.extra:  # (a = b = value)
            for target in stmt.extra["also"]:
                self.assign(target, value)
        return result

    # --- expressions ----------------------------------------------------------------------
    def evaluate(self, root: Ast) -> Any:
        cache = self.program._compiled
        if cache is None:
            cache = self.program._compiled = {}
        code = cache.get(id(root))
        if code is None:
            code = cache[id(root)] = compile_expr(root, self.repl)
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
            elif kind == "callee":
                self.callee(node)
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
        if self.repl and out.value.dtype.kind == "f" and out.value.dtype != self.dtype and \
                all(t.weak or t.value.dtype.kind in "biu" for t in inputs):
            out.value = self._in_default_float(OPS[name], inputs, kw, out.value)
        if not out.weak:
            self.nodes.append(out)
        return out

    def _in_default_float(self, row, inputs: list, kw: dict | None, value):
        """A float result of integer tensors (divided, a float function of them, times a
        float): PyTorch casts the tensors to its default float dtype and computes there (so
        float32's own rounding of exp, not float64's rounded once more)."""
        if row.dtype != "same" or all(t.weak for t in inputs):
            return value.astype(self.dtype)
        args = [t.value.item() if t.weak else t.value.astype(self.dtype) for t in inputs]
        done = record.FP_EVENTS[:]
        try:
            again = np.asarray(row.fn(*args, **(kw or {})))
        finally:
            record.FP_EVENTS[:] = done  # (the first run's events were reported)
        return again.astype(self.dtype, copy=False)

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
        if name in MODULES:
            return MODULES[name]
        if name in DTYPES:
            if self.repl and name in ("float", "int", "bool"):  # (Python's: dtype=float)
                return PyBuiltinType(name)
            return DType(DTYPES[name])
        if self.surface is not None:
            got = self.surface.builtin(name, ())  # len, RuntimeError, ... as values
            if got is not None:
                return got
        if self.repl and name in IMPORTED_AS:  # (a module's usual name: the import is missing)
            raise DdxNameError(f"unknown name '{name}'; did you forget '{IMPORTED_AS[name]}'?",
                               start=node.start, end=node.end)
        known = list(self.env) + list(CONSTANTS)
        close = close_name(name, known + list(self.functions), suggest)
        hint = f"did you mean '{close}'?" if close else None
        if name in self.functions:
            raise DdxNameError(f"'{name}' is a function: call it as {name}(...)",
                               start=node.start, end=node.end)
        raise DdxNameError(f"unknown name '{name}'" + (f"; did you mean '{close}'?" if close else ""),
                           start=node.start, end=node.end,
                           hint=None if close else ("bind it on the command line, e.g. "
                                                    f"{name}=1" if not self.repl else hint))
