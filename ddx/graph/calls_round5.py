"""Callers round 5 of pasting PyTorch's documentation added (issue 15): torch.round with
``decimals`` (the round_decimals row, RoundBackward1, even for 0; without it, the round row)."""

from __future__ import annotations

from typing import Any

from ..lang.tree import Ast
from .args import Evaluating, bind, unary_input
from .tensor import Tensor


def call_round(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "decimals"), required=1)
    x = unary_input(ev, node, given["input"])
    d = given.get("decimals")
    d = d.value.item() if isinstance(d, Tensor) else d
    if d is None:
        return ev.op("round", node, [x])
    if isinstance(d, bool) or not isinstance(d, int):
        from ..errors import DdxTypeError

        raise DdxTypeError(f"round(): argument 'decimals' must be int, not {type(d).__name__}",
                           start=node.pos, end=node.end)
    return ev.op("round_decimals", node, [x], {"decimals": d})


CALLERS = {"round": call_round}
