"""The functions callable by name: the op table's callable rows, checked and called by kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from ..ops import CALLS, OPS
from .tensor import Tensor
from .values import type_name, weak

# The Evaluator (ddx/graph/program.py) calls these with itself, for its dtype, op(), int_arg(),
# binary() and check_broadcast(); typed Any, as program.py imports this module.
Evaluating = Any


def check_arity(node: Ast, args: list, n: int, kw: dict, allowed: tuple = ()) -> None:
    if len(args) != n:
        want = {1: "1 argument", 2: "2 arguments"}.get(n, f"{n} arguments")
        raise DdxTypeError(f"{node.value}() takes {want} ({len(args)} given)",
                           start=node.pos, end=node.end)
    for name, (_, pos) in kw.items():
        if name not in allowed:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{name}'",
                               start=pos, end=pos + len(name))


def _as_tensor(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    raise DdxTypeError(f"{node.value}() needs a tensor or a number, got {type_name(value)}",
                       start=node.pos, end=node.end)


def _unary(name: str):
    params = tuple(OPS[name].params)

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        if params and (len(args) > 1 or kw):
            return ev.op(name, node, [_unary_input(ev, node, args[0])],
                         _params(ev, node, args[1:], kw, params))
        check_arity(node, args, 1, kw)
        return ev.op(name, node, [_unary_input(ev, node, args[0])])
    return call


def _unary_input(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    a = _as_tensor(ev, node, value)
    if a.weak:
        a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "f"
                              else a.value.dtype), weak=True)
        a.const = True
    return a


def _params(ev: Evaluating, node: Ast, extra: list, kw: dict, params: tuple) -> dict:
    """A row's keyword parameters (Op.params), given by position after the tensor or by name,
    as plain numbers; the ones not given are left to the kernel's defaults."""
    if len(extra) > len(params):
        raise DdxTypeError(f"{node.value}() takes at most {len(params) + 1} arguments "
                           f"({len(extra) + 1} given)", start=node.pos, end=node.end)
    given = dict(zip(params, extra))
    for key, (value, pos) in kw.items():
        if key not in params:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{key}'",
                               start=pos, end=pos + len(key))
        if key in given:
            raise DdxTypeError(f"{node.value}() got multiple values for argument '{key}'",
                               start=pos, end=pos + len(key))
        given[key] = value
    out = {}
    for key, value in given.items():
        if not (isinstance(value, Tensor) and value.weak):
            raise DdxTypeError(f"{node.value}(): {key} must be a number, got {type_name(value)}",
                               start=node.pos, end=node.end)
        out[key] = float(value.value.item())
    return out


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
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
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


def _dot(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
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


def _transpose(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 1, kw)
    a = _as_tensor(ev, node, args[0])
    if a.value.ndim > 2:
        raise DdxShapeError(f"transpose() expects a tensor with <= 2 dimensions, but got "
                            f"{a.value.ndim}D", start=node.pos, end=node.end)
    return ev.op("transpose", node, [a])


# How each kind of row (Op.call) is called by name; the rows themselves are in ddx/ops/rows.py.
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
