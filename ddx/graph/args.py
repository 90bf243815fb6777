"""Argument handling shared by every function callable by name: arity and keyword checks,
tensors from plain numbers, a row's parameters, and PyTorch's ``dim``/``keepdim``/string options.

A caller is ``caller(ev, node, args, kw)``: ``args`` the positional values, ``kw`` maps a
keyword to ``(value, position in the source)``; ``ev`` the Evaluator (its dtype, op(),
int_arg(), binary(), check_broadcast()). Values arrive as the language makes them: a Tensor
(a plain number is a weak 0-d Tensor), a Python str, tuple, bool or None."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from .tensor import Tensor
from .values import type_name

Evaluating = Any  # the Evaluator (ddx/graph/program.py imports this module's users)


def check_arity(node: Ast, args: list, n: int, kw: dict, allowed: tuple = ()) -> None:
    if len(args) != n:
        want = {1: "1 argument", 2: "2 arguments"}.get(n, f"{n} arguments")
        raise DdxTypeError(f"{node.value}() takes {want} ({len(args)} given)",
                           start=node.pos, end=node.end)
    check_keywords(node, kw, allowed)


def check_keywords(node: Ast, kw: dict, allowed: tuple) -> None:
    for name, (_, pos) in kw.items():
        if name not in allowed:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{name}'",
                               start=pos, end=pos + len(name))


def as_tensor(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, bool):
        return Tensor(np.asarray(value), weak=True)
    raise DdxTypeError(f"{node.value}() needs a tensor or a number, got {type_name(value)}",
                       start=node.pos, end=node.end)


def called_in_torch(node: Ast) -> bool:
    """Whether the call is spelled torch.X(...) (not the bare name, nor a tensor's method)."""
    return node.kind == "method" and bool(node.kids) and node.kids[0].kind == "name" and \
        node.kids[0].value == "torch"


def numbers_in_torch(ev: Evaluating, fn, a: Tensor, b: Tensor) -> Tensor:
    """torch.X(a, b) of two plain numbers, as PyTorch gives it: a 0-d tensor (torch.add(1, 2)
    is tensor(3)), int64 from ints, else the default dtype, computed in that dtype. (The
    expression language's bare add(1, 2) stays a plain number, as 1 + 2 does: SPEC section 2.)"""
    x, y = np.asarray(a.value), np.asarray(b.value)
    ints = x.dtype.kind in "biu" and y.dtype.kind in "biu"
    value = np.asarray(fn(x.astype(np.int64), y.astype(np.int64))) if ints else None
    if value is None or value.dtype.kind == "f":  # (torch.div(1, 2): in the default dtype)
        value = np.asarray(fn(x.astype(ev.dtype), y.astype(ev.dtype)))
    return Tensor(value)


def unary_input(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    """The tensor a unary function works on: a plain number becomes a 0-d tensor of the
    default float dtype (sin(1) is a float), marked weak so that it stays a plain number."""
    a = as_tensor(ev, node, value)
    if a.weak:
        if called_in_torch(node):  # torch.sin(1): PyTorch's TypeError (the bare sin(1) is 0.84)
            refuse_number(node, a)
        a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "f"
                              else a.value.dtype), weak=True)
        a.const = True
    return a


def refuse_number(node: Ast, a: Tensor) -> None:
    """PyTorch's TypeError for a plain number where torch.X takes a tensor input."""
    kind = {"b": "bool", "f": "float"}.get(np.asarray(a.value).dtype.kind, "int")
    raise DdxTypeError(f"{node.value}(): argument 'input' (position 1) must be Tensor, not {kind}",
                       start=node.pos, end=node.end)


def bind(node: Ast, args: list, kw: dict, names: tuple, required: int = 1) -> dict:
    """PyTorch's argument binding: ``args`` by position onto ``names``, then keywords; the
    first ``required`` names must be given. Returns name -> value for the names given."""
    if len(args) > len(names):
        raise DdxTypeError(f"{node.value}() takes at most {len(names)} arguments "
                           f"({len(args)} given)", start=node.pos, end=node.end)
    given = dict(zip(names, args))
    for key, (value, pos) in kw.items():
        if key not in names:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{key}'",
                               start=pos, end=pos + len(key))
        if key in given:
            raise DdxTypeError(f"{node.value}() got multiple values for argument '{key}'",
                               start=pos, end=pos + len(key))
        given[key] = value
    for key in names[:required]:
        if key not in given:
            raise DdxTypeError(f"{node.value}() missing required argument '{key}'",
                               start=node.pos, end=node.end)
    return given


def number(node: Ast, key: str, value: Any) -> float:
    """A plain-number argument (negative_slope=0.2)."""
    if isinstance(value, bool) or not (isinstance(value, Tensor) and value.weak):
        raise DdxTypeError(f"{node.value}(): {key} must be a number, got {type_name(value)}",
                           start=node.pos, end=node.end)
    return float(value.value.item())


def params(ev: Evaluating, node: Ast, extra: list, kw: dict, names: tuple) -> dict:
    """A row's keyword parameters (Op.params), given by position after the tensor or by name,
    as plain numbers; the ones not given are left to the kernel's defaults."""
    if len(extra) > len(names):
        raise DdxTypeError(f"{node.value}() takes at most {len(names) + 1} arguments "
                           f"({len(extra) + 1} given)", start=node.pos, end=node.end)
    given = bind(node, extra, kw, names, required=0)
    return {key: number(node, key, value) for key, value in given.items()}


def string(node: Ast, key: str, value: Any, choices: tuple) -> str:
    """A string option (reduction='mean', approximate='tanh'), checked against its choices."""
    if not isinstance(value, str):
        raise DdxTypeError(f"{node.value}(): argument '{key}' must be str, not "
                           f"{type_name(value)}", start=node.pos, end=node.end)
    if value not in choices:
        raise DdxTypeError(f"{node.value}(): {key} must be one of "
                           f"{', '.join(repr(c) for c in choices)}, got {value!r}",
                           start=node.pos, end=node.end)
    return value


def truth_arg(node: Ast, key: str, value: Any) -> bool:
    """A flag (keepdim=True): a bool, or a number as Python would take it."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.weak and value.value.dtype.kind in "bi":
        return bool(value.value.item())
    raise DdxTypeError(f"{node.value}(): argument '{key}' must be bool, not {type_name(value)}",
                       start=node.pos, end=node.end)


def one_dim(ev: Evaluating, node: Ast, value: Any, ndim: int) -> int:
    """One dimension, negative allowed, checked as PyTorch checks it; 0-d tensors take 0/-1."""
    d = ev.int_arg(value, node)
    top = max(ndim, 1)
    if not -top <= d < top:
        raise DdxShapeError(f"Dimension out of range (expected to be in range of [{-top}, "
                            f"{top - 1}], but got {d})", start=node.pos, end=node.end)
    return d % top if ndim else 0


def dims(ev: Evaluating, node: Ast, value: Any, ndim: int) -> tuple[int, ...] | None:
    """``dim``: None, an int or a tuple/list of ints, as sorted non-negative dimensions."""
    if value is None:
        return None
    items = value if isinstance(value, (tuple, list)) else None
    if items is None and isinstance(value, Tensor) and not value.weak and value.value.ndim == 1:
        items = [Tensor(np.asarray(v), weak=True) for v in value.value.tolist()]
    if items is None:
        return (one_dim(ev, node, value, ndim),)
    out = []
    for item in items:
        d = one_dim(ev, node, item, ndim)
        if d in out:
            raise DdxShapeError(f"dim {d} appears multiple times in the list of dims",
                                start=node.pos, end=node.end)
        out.append(d)
    return tuple(sorted(out))
