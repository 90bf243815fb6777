"""Callers for nll_loss and cross_entropy (see ddx/graph/args.py for what a caller is): class
indices checked as PyTorch checks them, class probabilities, weights, ignore_index, label
smoothing, and the ops PyTorch records for them (cross_entropy is log_softmax then nll_loss,
nll_loss2d over extra dims). Its tables are merged into ddx/graph/calls_reduce.py's."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError, DdxValueError
from ..lang.tree import Ast
from .args import Evaluating, bind, number
from .calls_loss import not_differentiable, reduction_arg, tensor_arg
from .tensor import Tensor
from .values import weak


# --- nll_loss, cross_entropy ------------------------------------------------------------------------
def _indices(ev: Evaluating, node: Ast, x: Tensor, t: Tensor, ignore_index: int) -> Tensor:
    """The class-index target as an int64 tensor, checked as PyTorch checks it. (A float target
    of whole numbers is taken as indices too: a one-liner's bindings are floats.)"""
    v = t.value
    if v.dtype.kind == "f":
        if not np.all(np.isfinite(v)) or not np.all(v == np.round(v)):
            raise DdxRuntimeError(f"expected target dtype to be Long or Byte, but got "
                                  f"{'Float' if v.dtype == np.float32 else 'Double'}",
                                  start=node.pos, end=node.end)
        t = Tensor(v.astype(np.int64))
        t.const = True
    elif v.dtype.kind not in "iub":
        raise DdxRuntimeError(f"expected target dtype to be Long or Byte, but got {v.dtype}",
                              start=node.pos, end=node.end)
    want = x.shape[:1] + x.shape[2:] if x.value.ndim >= 2 else ()
    if x.value.ndim >= 2 and t.shape[:1] != x.shape[:1]:
        raise DdxValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                            f"batch_size ({t.shape[0] if t.shape else 1}).",
                            start=node.pos, end=node.end)
    if t.shape != want:
        raise DdxRuntimeError("0D or 1D target tensor expected, multi-target not supported"
                              if x.value.ndim <= 2 else
                              f"size mismatch (got input: {list(x.shape)}, target: "
                              f"{list(t.shape)})", start=node.pos, end=node.end)
    classes = x.shape[1] if x.value.ndim >= 2 else x.shape[0]
    bad = (t.value != ignore_index) & ((t.value < 0) | (t.value >= classes))
    if np.any(bad):
        raise DdxRuntimeError(f"Target {int(t.value[bad].flat[0])} is out of bounds.",
                              start=node.pos, end=node.end)
    return t


def _nll_args(ev, node, given) -> tuple:
    x = tensor_arg(node, given["input"], "input")
    if x.value.ndim < 1:
        raise DdxRuntimeError("input tensor should be 1D or 2D", start=node.pos, end=node.end)
    ignore = int(ev.int_arg(given["ignore_index"], node)) if given.get("ignore_index") \
        is not None else -100
    w = given.get("weight")
    if w is not None:
        w = tensor_arg(node, w, "weight")
        not_differentiable(node, w, "nll_loss_forward", "weight")
        classes = x.shape[1] if x.value.ndim >= 2 else x.shape[0]
        if w.shape != (classes,):
            raise DdxRuntimeError(f"weight tensor should be defined either for all {classes} "
                                  f"classes or no classes but got weight tensor of shape: "
                                  f"{list(w.shape)}", start=node.pos, end=node.end)
    return x, ignore, w


def _nll(ev, node, x: Tensor, t: Tensor, w, ignore: int, reduction: str) -> Tensor:
    """nll_loss; over extra dims (N, C, d1, ...) PyTorch's nll_loss2d, on views to
    (N, C, d, 1) but for 4-D input, and a view back of the 'none' result."""
    kw = {"reduction": reduction} if reduction != "mean" else {}
    if ignore != -100:
        kw["ignore_index"] = ignore
    grad_fn = None
    rest = x.shape[2:]
    if len(rest) >= 1:
        grad_fn = "NllLoss2DBackward0"
        if len(rest) != 2:
            flat = int(np.prod(rest))
            x = ev.op("view", node, [x], {"shape": (x.shape[0], x.shape[1], flat, 1)})
            t = Tensor(np.reshape(t.value, (t.shape[0], flat, 1)))
            t.const = True
    row = "nll_loss" if w is None else "nll_loss_weight"
    out = ev.op(row, node, [x, t] if w is None else [x, t, w], kw, grad_fn=grad_fn)
    if reduction == "none" and len(rest) not in (0, 2):
        out = ev.op("view", node, [out], {"shape": (x.shape[0],) + tuple(rest)})
    return out


_NLL = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction")


def _nll_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, _NLL, required=2)
    x, ignore, w = _nll_args(ev, node, given)
    reduction = reduction_arg(node, given)
    t = _indices(ev, node, x, tensor_arg(node, given["target"], "target"), ignore)
    return _nll(ev, node, x, t, w, ignore, reduction)


def _scaled(ev, node, t: Tensor, k: float, op_name: str = "mul") -> Tensor:
    """t * k (or t + k) by a plain number, as PyTorch's C++ does it: MulBackward1/AddBackward1."""
    return ev.op(op_name, node, [t, weak(k)], grad_fn="MulBackward1" if op_name == "mul"
                 else "AddBackward1")


def _cross_entropy(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, _NLL + ("label_smoothing",), required=2)
    x, ignore, w = _nll_args(ev, node, given)
    reduction = reduction_arg(node, given)
    eps = number(node, "label_smoothing", given["label_smoothing"]) \
        if given.get("label_smoothing") is not None else 0.0
    if not 0.0 <= eps <= 1.0:
        raise DdxRuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {eps:g}",
                              start=node.pos, end=node.end)
    target = tensor_arg(node, given["target"], "target")
    cd = 1 if x.value.ndim >= 2 else 0
    classes = x.shape[cd]
    probabilities = target.value.dtype.kind == "f" and target.shape == x.shape
    if not probabilities:
        target = _indices(ev, node, x, target, ignore)
    logp = ev.op("log_softmax", node, [x], {"dim": cd})
    if probabilities:
        return _soft_targets(ev, node, logp, target, w, eps, classes, cd, reduction)
    loss = _nll(ev, node, logp, target, w, ignore, reduction)
    if eps == 0:
        return loss
    ignored = target.value == ignore
    picked = logp
    if w is not None:  # -(log_softmax * weight viewed along the class dim).sum(class dim)
        wt = Tensor(np.reshape(w.value, (classes,) + (1,) * (logp.value.ndim - cd - 1)))
        wt.const = True
        picked = ev.op("mul", node, [logp, wt])
    smooth = ev.op("neg", node, [ev.op("sum", node, [picked], {"dim": (cd,)},
                                       grad_fn="SumBackward1")])
    smooth = ev.op("masked_fill", node, [smooth], {"mask": _nested(ignored), "value": 0.0})
    if reduction == "mean":
        if w is None:
            kept = float(ignored.size - np.count_nonzero(ignored))
        else:  # (the weights of the targets not ignored, as nll_loss normalises)
            kept = float(np.sum(w.value[target.value[~ignored]]))
        smooth = ev.op("div", node, [ev.op("sum", node, [smooth]), weak(kept)])
    elif reduction == "sum":
        smooth = ev.op("sum", node, [smooth])
    return ev.op("add", node, [_scaled(ev, node, loss, 1 - eps),
                               _scaled(ev, node, smooth, eps / classes)])


def _nested(mask: np.ndarray):
    """A bool array as nested tuples (a row's keyword arguments are hashable), innermost first."""
    if not mask.ndim:
        return bool(mask)
    items: list = [bool(v) for v in mask.reshape(-1)]
    for n in reversed(mask.shape[1:]):
        items = [tuple(items[i:i + n]) for i in range(0, len(items), n)]
    return tuple(items)


def _soft_targets(ev, node, logp, target, w, eps, classes, cd, reduction) -> Tensor:
    """Class probabilities: -(log_softmax(x) * target).sum(...), as PyTorch records it."""
    if eps > 0:
        target = _scaled(ev, node, _scaled(ev, node, target, 1 - eps), eps / classes, "add")
    prod = ev.op("mul", node, [logp, target])
    if w is not None:
        shape = (classes,) + (1,) * (logp.value.ndim - cd - 1)
        wt = Tensor(np.reshape(w.value, shape))
        wt.const = True
        prod = ev.op("mul", node, [prod, wt])
    if reduction == "none":
        return ev.op("neg", node, [ev.op("sum", node, [prod], {"dim": (cd,)},
                                         grad_fn="SumBackward1")])
    total = ev.op("neg", node, [ev.op("sum", node, [prod])])
    if reduction == "sum":
        return total
    count = logp.value.size / classes if classes else 0.0  # (no elements: 0/0, PyTorch's nan)
    return ev.op("div", node, [total, weak(float(count))], grad_fn="DivBackward1")


CALLERS: dict = {"nll_loss": _nll_loss}
NAMED: dict = {"cross_entropy": _cross_entropy}
NAMED_SPACES: dict = {"cross_entropy": ("F",)}
