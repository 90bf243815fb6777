"""The losses of torch.nn.functional that ATen (or functional.py) builds from other ops,
recorded as those ops in ATen's order: margin_ranking_loss (``(-target * (x1 - x2) +
margin).clamp_min(0)``), hinge_embedding_loss (two wheres over ``(margin - x).clamp_min(0)``
and x), soft_margin_loss (``log1p(exp(-input * target))``; PyTorch records it as one node,
SoftMarginLossBackward0, ddx as its ops), poisson_nll_loss (``exp(input) - target * input``,
or ``input - target * log(input + eps)``) and multilabel_soft_margin_loss (functional.py's
logsigmoid form, summed over the classes, divided by their number)."""

from __future__ import annotations

from typing import Any

from ..errors import DdxRuntimeError
from ..lang.tree import Ast
from .args import Evaluating, bind, truth_arg
from .calls_loss import reduction_arg, tensor_arg
from .create_args import number_arg
from .tensor import Tensor
from .values import weak

_FLAGS = ("size_average", "reduce")


def _reduce(ev: Evaluating, node: Ast, loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return ev.op("mean", node, [loss])
    if reduction == "sum":
        return ev.op("sum", node, [loss])
    return loss


def _number(node: Ast, given: dict, key: str, default: float) -> float:
    return float(number_arg(node, key, given[key])) if given.get(key) is not None else default


def margin_ranking_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input1", "input2", "target", "margin") + _FLAGS +
                 ("reduction",), required=3)
    x1, x2 = tensor_arg(node, given["input1"], "input1"), tensor_arg(node, given["input2"],
                                                                     "input2")
    y = tensor_arg(node, given["target"], "target")
    margin = _number(node, given, "margin", 0.0)
    diff = ev.op("sub", node, [x1, x2])
    out = ev.op("add", node, [ev.op("mul", node, [ev.op("neg", node, [y]), diff]), weak(margin)])
    return _reduce(ev, node, ev.op("clamp_min", node, [out], {"min": 0.0}),
                   reduction_arg(node, given))


def hinge_embedding_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "target", "margin") + _FLAGS + ("reduction",),
                 required=2)
    x, y = tensor_arg(node, given["input"], "input"), tensor_arg(node, given["target"], "target")
    margin = _number(node, given, "margin", 1.0)
    zeros = Tensor(x.value * 0 + 0)
    clamp = ev.op("clamp_min", node, [ev.op("sub", node, [weak(margin), x])], {"min": 0.0})
    out_margin = ev.op("where", node, [ev.op("ne", node, [y, weak(1)]), clamp, zeros])
    out_self = ev.op("where", node, [ev.op("ne", node, [y, weak(-1)]), x, zeros])
    return _reduce(ev, node, ev.op("add", node, [out_margin, out_self]),
                   reduction_arg(node, given))


def soft_margin_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "target") + _FLAGS + ("reduction",), required=2)
    x, y = tensor_arg(node, given["input"], "input"), tensor_arg(node, given["target"], "target")
    z = ev.op("mul", node, [ev.op("neg", node, [x]), y])
    return _reduce(ev, node, ev.op("log1p", node, [ev.op("exp", node, [z])]),
                   reduction_arg(node, given))


def poisson_nll_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "target", "log_input", "full") + _FLAGS +
                 ("eps", "reduction"), required=2)
    x, y = tensor_arg(node, given["input"], "input"), tensor_arg(node, given["target"], "target")
    if truth_arg(node, "full", given.get("full", False)):
        raise DdxRuntimeError("poisson_nll_loss(full=True) (Stirling's term) is not supported "
                              "by ddx", start=node.pos, end=node.end)
    if truth_arg(node, "log_input", given.get("log_input", True)):
        loss = ev.op("sub", node, [ev.op("exp", node, [x]), ev.op("mul", node, [y, x])])
    else:
        eps = _number(node, given, "eps", 1e-8)
        logged = ev.op("log", node, [ev.op("add", node, [x, weak(eps)])])
        loss = ev.op("sub", node, [x, ev.op("mul", node, [y, logged])])
    return _reduce(ev, node, loss, reduction_arg(node, given))


def multilabel_soft_margin_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, kw, ("input", "target", "weight") + _FLAGS + ("reduction",),
                 required=2)
    x, y = tensor_arg(node, given["input"], "input"), tensor_arg(node, given["target"], "target")
    reduction = reduction_arg(node, given)
    pos = ev.op("mul", node, [y, ev.op("logsigmoid", node, [x])])
    neg = ev.op("mul", node, [ev.op("sub", node, [weak(1), y]),
                              ev.op("logsigmoid", node, [ev.op("neg", node, [x])])])
    loss = ev.op("neg", node, [ev.op("add", node, [pos, neg])])
    w = given.get("weight")
    if w is not None:
        loss = ev.op("mul", node, [loss, tensor_arg(node, w, "weight")])
    dim = x.value.ndim - 1
    loss = ev.op("div", node, [ev.op("sum", node, [loss], {"dim": (dim,)}),
                               weak(x.shape[dim])])
    return _reduce(ev, node, loss, reduction)


NAMED = {"margin_ranking_loss": margin_ranking_loss, "hinge_embedding_loss": hinge_embedding_loss,
         "soft_margin_loss": soft_margin_loss, "poisson_nll_loss": poisson_nll_loss,
         "multilabel_soft_margin_loss": multilabel_soft_margin_loss}
NAMED_SPACES = {name: ("F",) for name in NAMED}
NAMED_SPACES["hinge_embedding_loss"] = ("torch", "F")
NAMED_SPACES["margin_ranking_loss"] = ("torch", "F")
NAMED_SPACES["poisson_nll_loss"] = ("torch", "F")
