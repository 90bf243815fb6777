"""torch.nn.functional's activations that PyTorch writes in Python as other ops, recorded as
those ops: F.softsign(x) is ``x / (x.abs() + 1)`` (DivBackward0 over AddBackward0 over
AbsBackward0) and F.tanhshrink(x) is ``x - x.tanh()`` (SubBackward0 over TanhBackward0). So
their grad_fn chains, their saved tensors and, where x is used elsewhere too, the order in
which x's gradients are added are PyTorch's (a single row would add its two paths first)."""

from __future__ import annotations

from typing import Any

from ..lang.tree import Ast
from .args import Evaluating, bind, unary_input
from .values import weak


def softsign(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    x = unary_input(ev, node, bind(node, args, kw, ("input",))["input"])
    return ev.op("div", node, [x, ev.op("add", node, [ev.op("abs", node, [x]), weak(1)])])


def tanhshrink(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    x = unary_input(ev, node, bind(node, args, kw, ("input",))["input"])
    return ev.op("sub", node, [x, ev.op("tanh", node, [x])])


NAMED = {"softsign": softsign, "tanhshrink": tanhshrink}
NAMED_SPACES = {"softsign": ("F",), "tanhshrink": ("F",)}
