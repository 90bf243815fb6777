"""The functions callable by name: the op table's callable rows, checked and called by kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from ..ops import CALLS, OPS
from . import (
    calls_arith,
    calls_compare,
    calls_compose,
    calls_composite,
    calls_conv,
    calls_create,
    calls_div,
    calls_functional,
    calls_interp,
    calls_layers,
    calls_linalg,
    calls_loss5,
    calls_m,
    calls_m2,
    calls_m3,
    calls_m4,
    calls_misc,
    calls_more,
    calls_reduce,
    calls_round5,
    calls_shape,
    create_dropout,
)
from .args import (
    Evaluating,
    as_tensor,
    called_in_torch,
    check_arity,
    numbers_in_torch,
    params,
    refuse_number,
    unary_input,
)
from .tensor import Tensor
from .values import weak

# (their tables are merged below)
CALL_MODULES = (calls_arith, calls_compare, calls_reduce, calls_linalg, calls_shape, calls_create,
                calls_layers, calls_composite, calls_more, calls_misc, calls_compose, calls_div,
                calls_functional, create_dropout, calls_round5,
                calls_loss5, calls_m, calls_m2, calls_m3, calls_m4, calls_conv, calls_interp)

__all__ = ["CALLERS", "FUNCTIONS", "KINDS", "NAMED", "Functions", "check_arity"]


def _unary(name: str):
    names = tuple(OPS[name].params)

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        if names and (len(args) > 1 or kw):
            return ev.op(name, node, [unary_input(ev, node, args[0])],
                         params(ev, node, args[1:], kw, names))
        check_arity(node, args, 1, kw)
        return ev.op(name, node, [unary_input(ev, node, args[0])])
    return call


def _dim(ev: Evaluating, node: Ast, a: Tensor, args: list, kw: dict) -> int | None:
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
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        if len(args) not in (1, 2):
            check_arity(node, args, 1, kw, ("dim",))
        for k, (_, pos) in kw.items():
            if k != "dim":
                raise DdxTypeError(f"{name}() got an unexpected keyword argument '{k}'",
                                   start=pos, end=pos + len(k))
        a = as_tensor(ev, node, args[0])
        if a.weak:
            if called_in_torch(node):
                refuse_number(node, a)
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
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        check_arity(node, args, 2, kw)
        a, b = (as_tensor(ev, node, x) for x in args)
        if name == "pow":
            fake = Ast("bin", "^", (), (), start=node.start, end=node.end, pos=node.pos)
            return ev.binary(fake, a, b)
        if a.weak and b.weak:
            if called_in_torch(node):
                return numbers_in_torch(ev, OPS[name].fn, a, b)
            return weak(float(OPS[name].fn(a.value, b.value)))
        # a plain number stays a wrapped scalar, as for the operators: (None, 0) in next_functions
        ev.check_broadcast(Ast("bin", name, (), (), start=node.start, end=node.end, pos=node.pos),
                           a, b)
        return ev.op(name, node, [a, b])
    return call


# How each kind of row (Op.call) is called by name: kind -> (row name -> caller); the rows
# themselves are in ddx/ops/. A module of callers (calls_*.py) may add kinds of its own.
KINDS: dict[str, Callable] = {"unary": _unary, "binary": _binary_fn, "reduction": _reduction}
# A row's own caller, where it checks more than its kind does (shapes, dims, options):
# row name -> caller
CALLERS: dict[str, Callable] = {}
# Functions that are not one row (cat, split, arange, where over several rows...): name -> caller.
# The namespaces they live in are in NAMED_SPACES (default: torch and the Tensor method).
NAMED: dict[str, Callable] = {}
NAMED_SPACES: dict[str, tuple[str, ...]] = {}
# Functions whose [..] arguments are lists (cat([a, b]), ones([2, 3])), not vector literals
LISTS: set[str] = set()
for _module in CALL_MODULES:
    LISTS.update(getattr(_module, "LISTS", ()))
    KINDS.update(getattr(_module, "KINDS", {}))
    CALLERS.update(getattr(_module, "CALLERS", {}))
    NAMED.update(getattr(_module, "NAMED", {}))
    NAMED_SPACES.update(getattr(_module, "NAMED_SPACES", {}))


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
        row = CALLS.get(name)
        if row is None:
            return NAMED[name]  # (KeyError: not a function)
        made = self._made.get(id(row))
        if made is None or made[0] is not row:
            caller = CALLERS.get(row.name) or KINDS[row.call](row.name)
            made = self._made[id(row)] = (row, caller)
        return made[1]

    def __contains__(self, name: object) -> bool:
        return name in self.extra or name in CALLS or name in NAMED

    def __iter__(self):
        yield from self.extra
        yield from (name for name in CALLS if name not in self.extra)
        yield from (name for name in NAMED if name not in self.extra and name not in CALLS)

    def __len__(self) -> int:
        return len(set(self.extra) | set(CALLS) | set(NAMED))


FUNCTIONS = Functions()
