"""torch.nn.functional's gaussian_nll_loss (functional.py's Python: var clamped to eps under
no_grad, ``0.5 * (log(var) + (input - target) ** 2 / var)``), cosine_embedding_loss and
triplet_margin_loss (ATen's compositions in Loss.cpp), multi_margin_loss and
multilabel_margin_loss (ATen's kernels' sums, as ops: the final node named as PyTorch's),
and their modules nn.GaussianNLLLoss, CosineEmbeddingLoss, TripletMarginLoss,
MultiMarginLoss and MultiLabelMarginLoss (PyTorch's constructor parameters, printed
``Kind()``)."""

from __future__ import annotations

import math

import numpy as np

from ..graph.tensor import Tensor
from ..graph.values import weak
from .pycompat import LEGACY_WARNING
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, error, num, tensor
from .pyfused import fused, multi_margin, multilabel_margin
from .pymodules import EXTRA, Native
from .pynn6 import Module6

_EPSILON = float(np.float32(1e-12))  # Loss.cpp's constexpr float EPSILON
_LEGACY = (("size_average", None), ("reduce", None))


def _reduction(ev, g: dict) -> str:
    """reduction=, or PyTorch's legacy size_average/reduce (with its warning)."""
    size_average, reduce = g.get("size_average"), g.get("reduce")
    if size_average is None and reduce is None:
        r = g.get("reduction", "mean")
        if r not in ("mean", "sum", "none"):
            raise PyException.error("ValueError", f"{r} is not a valid value for reduction")
        return r
    size_average = True if size_average is None else bool(num(size_average))
    reduce = True if reduce is None else bool(num(reduce))
    r = "none" if not reduce else "mean" if size_average else "sum"
    ev.warnings.append(LEGACY_WARNING.format(r))
    return r


def _reduce(ev, node, loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return call(ev, node, "mean", loss)
    if reduction == "sum":
        return call(ev, node, "sum", loss)
    return loss


def gaussian_nll_loss(ev, node, args, kw):
    g = bind("gaussian_nll_loss", (("input", REQUIRED), ("target", REQUIRED), ("var", REQUIRED),
                                   ("full", False), ("eps", 1e-6), ("reduction", "mean")),
             args, kw)
    x = tensor(node, g["input"], "input", "gaussian_nll_loss")
    y = tensor(node, g["target"], "target", "gaussian_nll_loss")
    var = g["var"]
    if isinstance(var, Tensor) and var.weak:
        v = float(num(var))
        if v < 0:
            raise PyException.error("ValueError", "var has negative entry/entries")
        var = call(ev, node, "mul", weak(v), call(ev, node, "ones_like", x))
    elif bool((var.value < 0).any()):
        raise PyException.error("ValueError", "var has negative entry/entries")
    if var.shape != x.shape:
        if x.shape[:-1] == var.shape:
            var = call(ev, node, "unsqueeze", var, weak(-1))
        elif not (x.value.ndim == var.value.ndim and
                  sum(b for a, b in zip(x.shape, var.shape) if a != b) == 1):
            raise PyException.error("ValueError", "var is of incorrect size")
    reduction = g["reduction"]
    if reduction not in ("none", "mean", "sum"):
        raise PyException.error("ValueError", f"{reduction} is not valid")
    var = call(ev, node, "clone", var)
    var.value = np.maximum(var.value, var.value.dtype.type(float(num(g["eps"]))))  # (no_grad)
    diff = call(ev, node, "pow", call(ev, node, "sub", x, y), weak(2))
    loss = call(ev, node, "mul", weak(0.5), call(ev, node, "add", call(ev, node, "log", var),
                                                 call(ev, node, "div", diff, var)))
    if num(g["full"]):
        loss = call(ev, node, "add", loss, weak(0.5 * math.log(2 * math.pi)))
    return _reduce(ev, node, loss, reduction)


def cosine_embedding_loss(ev, node, args, kw):
    g = bind("cosine_embedding_loss", (("input1", REQUIRED), ("input2", REQUIRED),
                                       ("target", REQUIRED), ("margin", 0.0), *_LEGACY,
                                       ("reduction", "mean")), args, kw)
    x1 = tensor(node, g["input1"], "input1", "cosine_embedding_loss")
    x2 = tensor(node, g["input2"], "input2", "cosine_embedding_loss")
    y = tensor(node, g["target"], "target", "cosine_embedding_loss")
    d = y.value.ndim
    if d not in (0, 1):
        raise error("0D or 1D target tensor expected, multi-target not supported", node)
    if x1.value.ndim != d + 1:
        raise error(f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with "
                    f"sizes {list(x1.shape)} and {list(x2.shape)}.", node)
    dim = weak(d)
    prod = call(ev, node, "sum", call(ev, node, "mul", x1, x2), dim)
    mag1 = call(ev, node, "add", call(ev, node, "sum", call(ev, node, "mul", x1, x1), dim),
                weak(_EPSILON))
    mag2 = call(ev, node, "add", call(ev, node, "sum", call(ev, node, "mul", x2, x2), dim),
                weak(_EPSILON))
    cos = call(ev, node, "div", prod, call(ev, node, "sqrt", call(ev, node, "mul", mag1, mag2)))
    zeros = Tensor(np.zeros_like(cos.value))
    pos = call(ev, node, "sub", weak(1), cos)
    neg = call(ev, node, "clamp_min", call(ev, node, "sub", cos, weak(float(num(g["margin"])))),
               weak(0))
    out = call(ev, node, "add",
               call(ev, node, "where", call(ev, node, "eq", y, weak(1)), pos, zeros),
               call(ev, node, "where", call(ev, node, "eq", y, weak(-1)), neg, zeros))
    return _reduce(ev, node, out, _reduction(ev, g))


def triplet_margin_loss(ev, node, args, kw):
    g = bind("triplet_margin_loss", (("anchor", REQUIRED), ("positive", REQUIRED),
                                     ("negative", REQUIRED), ("margin", 1.0), ("p", 2.0),
                                     ("eps", 1e-6), ("swap", False), *_LEGACY,
                                     ("reduction", "mean")), args, kw)
    a, p, n = (tensor(node, g[k], k, "triplet_margin_loss")
               for k in ("anchor", "positive", "negative"))
    if not a.value.ndim == p.value.ndim == n.value.ndim:
        raise error(f"The anchor, positive, and negative tensors are expected to have the same "
                    f"number of dimensions, but got: anchor {a.value.ndim}D, positive "
                    f"{p.value.ndim}D, and negative {n.value.ndim}D inputs", node)
    dist = EXTRA["torch.nn.functional"]["pairwise_distance"].fn
    opts = {"p": (g["p"], node.pos), "eps": (g["eps"], node.pos)}
    d_pos = dist(ev, node, [a, p], dict(opts))
    d_neg = dist(ev, node, [a, n], dict(opts))
    if num(g["swap"]):
        d_neg = call(ev, node, "minimum", d_neg, dist(ev, node, [p, n], dict(opts)))
    out = call(ev, node, "clamp_min", call(ev, node, "sub", call(
        ev, node, "add", d_pos, weak(float(num(g["margin"])))), d_neg), weak(0))
    return _reduce(ev, node, out, _reduction(ev, g))


def _targets(node, x: Tensor, y: Tensor, fn: str) -> tuple:
    if y.value.dtype.kind not in "iu":
        raise error(f"expected scalar type Long but found {y.value.dtype.name}", node)
    if x.value.ndim not in (1, 2):
        raise error(f"Expected non-empty vector or matrix with optional 0-dim batch size, but "
                    f"got: {list(x.shape)}", node)
    return (x.shape[0] if x.value.ndim == 2 else 1), x.shape[-1]


def multi_margin_loss(ev, node, args, kw):
    g = bind("multi_margin_loss", (("input", REQUIRED), ("target", REQUIRED), ("p", 1),
                                   ("margin", 1.0), ("weight", None), *_LEGACY,
                                   ("reduction", "mean")), args, kw)
    x = tensor(node, g["input"], "input", "multi_margin_loss")
    y = tensor(node, g["target"], "target", "multi_margin_loss")
    p = int(num(g["p"]))
    if p not in (1, 2):
        raise PyException.error("ValueError", "only p == 1 and p == 2 supported")
    reduction = _reduction(ev, g)
    nframe, dim = _targets(node, x, y, "multi_margin_loss")
    t = y.value.reshape(-1).astype(np.int64)
    if t.size != nframe or (t.size and (t.min() < 0 or t.max() >= dim)):
        raise error("target out of range" if t.size == nframe else
                    f"inconsistent target size, expected {nframe} but got {list(y.shape)}", node)
    w = g["weight"]
    w = None if w is None else tensor(node, w, "weight", "multi_margin_loss").value
    value, vjp = multi_margin(x.value, t, p, float(num(g["margin"])), w, reduction,
                              y.value.ndim == 0)
    return fused(ev, node, "MultiMarginLossBackward0", value, [x], (vjp,))


def multilabel_margin_loss(ev, node, args, kw):
    g = bind("multilabel_margin_loss", (("input", REQUIRED), ("target", REQUIRED), *_LEGACY,
                                        ("reduction", "mean")), args, kw)
    x = tensor(node, g["input"], "input", "multilabel_margin_loss")
    y = tensor(node, g["target"], "target", "multilabel_margin_loss")
    reduction = _reduction(ev, g)
    nframe, dim = _targets(node, x, y, "multilabel_margin_loss")
    if y.shape != x.shape:
        raise error(f"inconsistent target size: {list(y.shape)} for input of size: "
                    f"{list(x.shape)}", node)
    if y.value.size and y.value.max() >= dim:
        raise error("target out of range", node)
    value, vjp = multilabel_margin(x.value, y.value.astype(np.int64), reduction,
                                   y.value.ndim < 2)
    return fused(ev, node, "MultilabelMarginLossBackward0", value, [x], (vjp,))


FUNCTIONS = {"gaussian_nll_loss": gaussian_nll_loss,
             "cosine_embedding_loss": cosine_embedding_loss,
             "triplet_margin_loss": triplet_margin_loss, "multi_margin_loss": multi_margin_loss,
             "multilabel_margin_loss": multilabel_margin_loss}
# kind: (its F.* function, PyTorch's constructor parameters, how many tensors forward takes)
_MEAN = (*_LEGACY, ("reduction", "mean"))
LOSSES = {
    "GaussianNLLLoss": ("gaussian_nll_loss", (("full", False), ("eps", 1e-6),
                                              ("reduction", "mean")), 3),
    "CosineEmbeddingLoss": ("cosine_embedding_loss", (("margin", 0.0), *_MEAN), 3),
    "TripletMarginLoss": ("triplet_margin_loss", (("margin", 1.0), ("p", 2.0), ("eps", 1e-6),
                                                  ("swap", False), *_MEAN), 3),
    "MultiMarginLoss": ("multi_margin_loss", (("p", 1), ("margin", 1.0), ("weight", None),
                                              *_MEAN), 2),
    "MultiLabelMarginLoss": ("multilabel_margin_loss", _MEAN, 2),
}


def _module(kind: str, fn: str, params: tuple, arity: int):
    def make(ev, node, args, kw):
        g = bind(f"{kind}.__init__", params, list(args), kw)
        if "size_average" in g:
            g["reduction"] = _reduction(ev, g)
            g.pop("size_average"), g.pop("reduce")
        if kind == "MultiMarginLoss" and int(num(g["p"])) not in (1, 2):
            raise PyException.error("ValueError", "only p == 1 and p == 2 supported")
        return Module6(kind, FUNCTIONS[fn], {k: v for k, v in g.items() if v is not None}, "",
                       arity)
    return Native(kind, make)


def register() -> None:
    space = EXTRA["torch.nn.functional"]
    for name, fn in FUNCTIONS.items():
        space[name] = Native(name, fn)
    EXTRA["torch"].setdefault("cosine_embedding_loss", space["cosine_embedding_loss"])
    EXTRA["torch"].setdefault("triplet_margin_loss", space["triplet_margin_loss"])
    nn = EXTRA["torch.nn"]
    for kind, (fn, params, arity) in LOSSES.items():
        nn[kind] = _module(kind, fn, params, arity)


register()

__all__ = ["FUNCTIONS", "LOSSES"]
