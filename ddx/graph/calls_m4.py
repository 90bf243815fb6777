"""Callers of round 7's picking rows (ddx/ops/rows_m2.py): cummax/cummin(input, dim) and
kthvalue(input, k, dim=-1, keepdim=False), each a named result (values, indices)."""

from __future__ import annotations

from ..lang.tree import Ast
from .args import Evaluating, bind
from .calls_loss import aliased
from .calls_shape import dim_of, fail, int_of, tensor_arg
from .values import ReturnTypes


def _cumulative(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
        given = bind(node, args, aliased(node, kw), ("input", "dim"), 2)
        a = tensor_arg(ev, node, given["input"])
        dim = dim_of(ev, node, given["dim"], max(a.value.ndim, 1)) if a.value.ndim else 0
        ckw = {"dim": dim, "largest": name == "cummax"}
        return ReturnTypes(name, ("values", "indices"),
                           (ev.op(name, node, [a], ckw),
                            ev.op("cumulative_index", node, [a], ckw)))
    return call


def call_kthvalue(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
    given = bind(node, args, aliased(node, kw), ("input", "k", "dim", "keepdim"), 2)
    a = tensor_arg(ev, node, given["input"])
    k = int_of(ev, node, given["k"])
    dim = dim_of(ev, node, given.get("dim", -1), max(a.value.ndim, 1)) if a.value.ndim else 0
    size = a.shape[dim] if a.value.ndim else 1
    if not 1 <= k <= size:
        raise fail(node, f"kthvalue(): selected number k out of range for dimension {dim}")
    keep = given.get("keepdim", False)
    kkw = {"k": k, "dim": dim}
    if bool(keep.value if hasattr(keep, "value") else keep):
        kkw["keepdim"] = True
    return ReturnTypes("kthvalue", ("values", "indices"),
                       (ev.op("kthvalue", node, [a], kkw),
                        ev.op("kthvalue_index", node, [a], kkw)))


NAMED: dict = {"cummax": _cumulative("cummax"), "cummin": _cumulative("cummin"),
               "kthvalue": call_kthvalue}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
