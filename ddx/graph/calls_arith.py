"""Callers for arithmetic by name beyond the operators (ddx/ops/rows_arith.py): torch.add and
torch.sub with ``alpha``, torch.rsub, fmod/remainder by a plain number, PyTorch's refusal of a
plain number where a function takes tensors only, and gelu's ``approximate``."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..lang.tree import Ast
from ..ops import OPS
from .args import (
    Evaluating,
    as_tensor,
    bind,
    called_in_torch,
    number,
    numbers_in_torch,
    string,
    unary_input,
)
from .tensor import Tensor


def _plain(value: Tensor) -> float:
    return value.value.item()


def _alpha(name: str, scaled: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "other", "alpha"), required=2)
        a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["other"])
        if a.weak and b.weak and called_in_torch(node):
            alpha = number(node, "alpha", given["alpha"]) if "alpha" in given else 1
            sign = 1 if name == "add" else -1
            return numbers_in_torch(ev, lambda x, y: x + sign * (y * y.dtype.type(alpha)), a, b)
        if "alpha" not in given:
            return ev.binary(Ast("bin", {"add": "+", "sub": "-"}[name], (), (), start=node.start,
                                 end=node.end, pos=node.pos), a, b)
        alpha = number(node, "alpha", given["alpha"])
        if a.value.dtype.kind in "iu" and b.value.dtype.kind in "iu" and \
                float(alpha).is_integer():
            alpha = int(alpha)  # (integer tensors stay integers: torch.sub(a, b, alpha=2))
        if b.weak:  # torch.add(x, 2, alpha=3): the number scaled first, as PyTorch does
            return ev.binary(Ast("bin", {"add": "+", "sub": "-"}[name], (), (), start=node.start,
                                 end=node.end, pos=node.pos), a,
                             Tensor(b.value * alpha, weak=True))
        ev.check_broadcast(node, a, b)
        return ev.op(scaled, node, [a, b], {"alpha": alpha})
    return call


def rsub(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "other", "alpha"), required=2)
    a, b = as_tensor(ev, node, given["input"]), as_tensor(ev, node, given["other"])
    alpha = number(node, "alpha", given["alpha"]) if "alpha" in given else 1.0
    if b.weak:
        if alpha != 1.0:
            a = ev.op("mul", node, [a, Tensor(a.value.dtype.type(alpha), weak=True)])
        return ev.op("rsub", node, [a], {"other": _plain(b)})
    ev.check_broadcast(node, a, b)
    return ev.op("rsub_tensor", node, [a, b], {"alpha": alpha})


def _by_number(name: str):
    """fmod(x, 2), remainder(x, 2): a row of their own (FmodBackward0); two tensors: the
    binary row (FmodBackward1)."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "other"), required=2)
        a, b = given["input"], as_tensor(ev, node, given["other"])
        if not isinstance(a, Tensor) or a.weak:
            raise DdxTypeError(f"{name}() received an invalid combination of arguments - got "
                               f"({type(_plain(a)).__name__ if isinstance(a, Tensor) else 'a'}"
                               f", {'Tensor' if not b.weak else type(_plain(b)).__name__}), but "
                               "expected (Tensor input, Tensor other) or (Tensor input, Number "
                               "other)", start=node.pos, end=node.end)
        if b.weak:  # (an int tensor by an int stays int: remainder(tensor([-3, 3]), 2))
            v = _plain(b)
            whole = type(v) is int and a.value.dtype.kind in "iu"
            return ev.op(f"{name}_scalar", node, [a], {"other": v if whole else float(v)})
        ev.check_broadcast(node, a, b)
        return ev.op(name, node, [a, b])
    return call


def _tensors_only(name: str):
    """torch.maximum(x, 2) is PyTorch's TypeError: the second argument must be a tensor. ddx's
    own bare name takes the number as a constant tensor (maximum(x, 0) is a relu)."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, ("input", "other"), required=2)
        for pos, key in enumerate(("input", "other"), 1):
            value = given[key]
            if node.kind == "call" and isinstance(value, Tensor) and value.weak:
                continue  # (a plain number stays a wrapped scalar, as before: replayable)
            if not isinstance(value, Tensor) or value.weak:
                got = type(_plain(value)).__name__ if isinstance(value, Tensor) else \
                    type(value).__name__
                raise DdxTypeError(f"{name}(): argument '{key}' (position {pos}) must be Tensor, "
                                   f"not {got}", start=node.pos, end=node.end,
                                   hint=f"wrap the number: {name}(x, tensor(2.0))")
        a, b = given["input"], given["other"]
        if a.weak and b.weak:
            return Tensor(OPS[name].fn(a.value, b.value), weak=True)
        ev.check_broadcast(node, a, b)
        return ev.op(name, node, [a, b])
    return call


def gelu(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "approximate"), required=1)
    how = string(node, "approximate", given.get("approximate", "none"), ("none", "tanh"))
    return ev.op("gelu" if how == "none" else "gelu_tanh", node,
                 [unary_input(ev, node, given["input"])])


CALLERS = {"add": _alpha("add", "add_scaled"), "sub": _alpha("sub", "sub_scaled"),
           "fmod": _by_number("fmod"), "remainder": _by_number("remainder"), "gelu": gelu,
           **{name: _tensors_only(name) for name in ("maximum", "minimum", "atan2", "hypot")
              if name in OPS}}
NAMED = {"rsub": rsub}
NAMED_SPACES = {"rsub": ("torch",)}
