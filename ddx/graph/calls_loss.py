"""Callers for softmax/log_softmax and the losses of torch.nn.functional (see
ddx/graph/args.py for what a caller is): ``reduction``, PyTorch's shape checks and messages,
and the losses PyTorch builds from other ops, recorded as those ops (cross_entropy is
log_softmax then nll_loss; l1_loss is sub, abs, mean; kl_div, cosine_similarity likewise).
Its tables are merged into ddx/graph/calls_reduce.py's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxNameError, DdxRuntimeError, DdxShapeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, bind, number, one_dim, truth_arg
from .record import WARNINGS
from .tensor import Tensor
from .values import type_name, weak

REDUCTIONS = ("mean", "sum", "none")
_LEGACY = ("size_average", "reduce")  # PyTorch's deprecated flags: accepted when None


def _size(shape: tuple) -> str:
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


def _tensor(node: Ast, value: Any, what: str) -> Tensor:
    if not isinstance(value, Tensor) or value.weak:
        raise DdxTypeError(f"{node.value}(): argument '{what}' must be Tensor, not "
                           f"{type_name(value)}", start=node.pos, end=node.end)
    return value


def _reduction(node: Ast, given: dict, choices: tuple = REDUCTIONS) -> str:
    for key in _LEGACY:
        if given.get(key) is not None:
            raise DdxValueError(f"{node.value}(): {key} is deprecated; use reduction=",
                                start=node.pos, end=node.end)
    r = given.get("reduction", "mean")
    if not isinstance(r, str):
        raise DdxTypeError(f"{node.value}(): argument 'reduction' must be str, not "
                           f"{type_name(r)}", start=node.pos, end=node.end)
    if r not in choices:
        raise DdxValueError(f"{r} is not a valid value for reduction", start=node.pos,
                            end=node.end)
    return r


def _warn(ev: Evaluating, node: Ast, text: str) -> None:
    WARNINGS.append((ev.source[node.start:node.end] if ev.source else node.value, text))


def _broadcast(ev: Evaluating, node: Ast, a: Tensor, b: Tensor, warn: bool = True) -> None:
    ev.check_broadcast(Ast("bin", node.value, (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    if warn and a.shape != b.shape:
        _warn(ev, node, f"Using a target size ({_size(b.shape)}) that is different to the input "
                        f"size ({_size(a.shape)}). This will likely lead to incorrect results due "
                        "to broadcasting. Please ensure they have the same size.")


def _expanded(ev: Evaluating, node: Ast, tensors: list, every: bool = False) -> list:
    """torch.broadcast_tensors (every=False: only the ones whose shape changes get an
    ExpandBackward0) / expand_outplace (every=True: all of them, once any shape differs)."""
    shape = tuple(np.broadcast_shapes(*[t.shape for t in tensors]))
    if all(t.shape == shape for t in tensors):
        return tensors
    return [t if t.shape == shape and not every else
            ev.op("expand", node, [t], {"shape": shape}) for t in tensors]


def same_dtype(node: Ast, a: Tensor, value: Any) -> None:
    """``dtype=``: PyTorch casts inside the op; ddx takes the input's own dtype only."""
    if value is None:
        return
    want = getattr(value, "np", None)
    if want is None:
        raise DdxTypeError(f"{node.value}(): argument 'dtype' must be torch.dtype, not "
                           f"{type_name(value)}", start=node.pos, end=node.end)
    if want != a.value.dtype:
        raise DdxNameError(f"{node.value}(dtype=torch.{want.name}) of a {a.value.dtype.name} "
                           "tensor (a cast inside the op) is not supported by ddx; cast the "
                           "input first", start=node.pos, end=node.end)


def _not_differentiable(node: Ast, t: Tensor | None, fn: str, arg: str) -> None:
    if t is not None and t.requires_grad:
        raise DdxRuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                              f"'{arg}'. This input cannot have requires_grad True.",
                              start=node.pos, end=node.end)


# --- softmax, log_softmax -------------------------------------------------------------------------
def _softmax(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, ("input", "dim", "_stacklevel", "dtype"))
        a = as_tensor(ev, node, given["input"])
        if a.weak or a.value.dtype.kind != "f":
            a = Tensor(np.asarray(a.value, dtype=ev.dtype))
        same_dtype(node, a, given.get("dtype"))
        dim = given.get("dim")
        if dim is None:  # PyTorch's _get_softmax_dim, with its warning
            d = 0 if a.value.ndim in (0, 1, 3) else 1
            _warn(ev, node, f"Implicit dimension choice for {name} has been deprecated. Change "
                            "the call to include dim=X as an argument.")
        else:
            d = one_dim(ev, node, dim, a.value.ndim)
        return ev.op(name, node, [a], {"dim": d})
    return call


# --- pointwise losses ------------------------------------------------------------------------------
def _pointwise(name: str, param: str | None = None, default: float = 1.0):
    names = ("input", "target") + ((param,) if param else ()) + _LEGACY + ("reduction",)
    if name == "smooth_l1_loss":
        names = ("input", "target") + _LEGACY + ("reduction", "beta")

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, names, required=2)
        a = _tensor(node, given["input"], "input")
        b = _tensor(node, given["target"], "target")
        reduction = _reduction(node, given)
        extra = {"reduction": reduction} if reduction != "mean" else {}
        if param:
            v = number(node, param, given[param]) if given.get(param) is not None else default
            if name == "huber_loss" and v <= 0:
                raise DdxRuntimeError("huber_loss does not support non-positive values for delta.",
                                      start=node.pos, end=node.end)
            if name == "smooth_l1_loss" and v < 0:
                raise DdxRuntimeError("smooth_l1_loss does not support negative values for beta.",
                                      start=node.pos, end=node.end)
            if name == "smooth_l1_loss" and v == 0:
                return _l1(ev, node, a, b, reduction)
            if v != default:
                extra[param] = v
        _broadcast(ev, node, a, b)
        return ev.op(name, node, _expanded(ev, node, [a, b]), extra)
    return call


def _l1(ev: Evaluating, node: Ast, a: Tensor, b: Tensor, reduction: str) -> Tensor:
    _broadcast(ev, node, a, b)
    r = ev.op("abs", node, [ev.op("sub", node, _expanded(ev, node, [a, b]))])
    return r if reduction == "none" else ev.op(reduction, node, [r])


def _l1_loss(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "target") + _LEGACY + ("reduction",), required=2)
    return _l1(ev, node, _tensor(node, given["input"], "input"),
               _tensor(node, given["target"], "target"), _reduction(node, given))


def _bce(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "target", "weight") + _LEGACY + ("reduction",),
                 required=2)
    a = _tensor(node, given["input"], "input")
    b = _tensor(node, given["target"], "target")
    reduction = _reduction(node, given)
    if a.shape != b.shape:
        raise DdxValueError(f"Using a target size ({_size(b.shape)}) that is different to the "
                            f"input size ({_size(a.shape)}) is deprecated. Please ensure they "
                            "have the same size.", start=node.pos, end=node.end)
    if np.any((a.value < 0) | (a.value > 1)):
        raise DdxRuntimeError("all elements of input should be between 0 and 1",
                              start=node.pos, end=node.end)
    extra = {"reduction": reduction} if reduction != "mean" else {}
    w = given.get("weight")
    if w is None:
        return ev.op("binary_cross_entropy", node, [a, b], extra)
    w = _tensor(node, w, "weight")
    _not_differentiable(node, w, "binary_cross_entropy", "weight")
    _broadcast(ev, node, a, w, warn=False)
    return ev.op("binary_cross_entropy_weight", node, [a, b, w], extra)


def _called_in_torch(node: Ast) -> bool:
    """torch.binary_cross_entropy_with_logits is aten's: reduction an int, default 0 ('none')."""
    return node.kind == "method" and bool(node.kids) and node.kids[0].kind == "name" and \
        node.kids[0].value == "torch"


def _bce_logits(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    if _called_in_torch(node):
        given = bind(node, args, kw, ("input", "target", "weight", "pos_weight", "reduction"),
                     required=2)
        r = given.get("reduction")
        r = 0 if r is None else ev.int_arg(r, node)
        if r not in (0, 1, 2):
            raise DdxValueError(f"{r} is not a valid value for reduction", start=node.pos,
                                end=node.end)
        given["reduction"] = REDUCTIONS[(2, 0, 1)[r]]  # (aten's enum: none, mean, sum)
    else:
        given = bind(node, args, kw, ("input", "target", "weight") + _LEGACY +
                     ("reduction", "pos_weight"), required=2)
    a = _tensor(node, given["input"], "input")
    b = _tensor(node, given["target"], "target")
    reduction = _reduction(node, given)
    if a.shape != b.shape:
        raise DdxValueError(f"Target size ({_size(b.shape)}) must be the same as input size "
                            f"({_size(a.shape)})", start=node.pos, end=node.end)
    inputs = [a, b]
    name = "binary_cross_entropy_with_logits"
    for key in ("weight", "pos_weight"):
        if given.get(key) is not None:
            t = _tensor(node, given[key], key)
            _not_differentiable(node, t, name, key)
            _broadcast(ev, node, a, t, warn=False)
            inputs.append(t)
            name += "_" + key
    return ev.op(name, node, inputs, {"reduction": reduction} if reduction != "mean" else {})


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
    x = _tensor(node, given["input"], "input")
    if x.value.ndim < 1:
        raise DdxRuntimeError("input tensor should be 1D or 2D", start=node.pos, end=node.end)
    ignore = int(ev.int_arg(given["ignore_index"], node)) if given.get("ignore_index") \
        is not None else -100
    w = given.get("weight")
    if w is not None:
        w = _tensor(node, w, "weight")
        _not_differentiable(node, w, "nll_loss_forward", "weight")
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
    reduction = _reduction(node, given)
    t = _indices(ev, node, x, _tensor(node, given["target"], "target"), ignore)
    return _nll(ev, node, x, t, w, ignore, reduction)


def _scaled(ev, node, t: Tensor, k: float, op_name: str = "mul") -> Tensor:
    """t * k (or t + k) by a plain number, as PyTorch's C++ does it: MulBackward1/AddBackward1."""
    return ev.op(op_name, node, [t, weak(k)], grad_fn="MulBackward1" if op_name == "mul"
                 else "AddBackward1")


def _cross_entropy(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, _NLL + ("label_smoothing",), required=2)
    x, ignore, w = _nll_args(ev, node, given)
    reduction = _reduction(node, given)
    eps = number(node, "label_smoothing", given["label_smoothing"]) \
        if given.get("label_smoothing") is not None else 0.0
    if not 0.0 <= eps <= 1.0:
        raise DdxRuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {eps:g}",
                              start=node.pos, end=node.end)
    target = _tensor(node, given["target"], "target")
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
    if w is not None:
        raise DdxRuntimeError("cross_entropy with both weight and label_smoothing is not "
                              "supported by ddx", start=node.pos, end=node.end)
    ignored = target.value == ignore
    smooth = ev.op("neg", node, [ev.op("sum", node, [logp], {"dim": (cd,)},
                                       grad_fn="SumBackward1")])
    smooth = ev.op("masked_fill", node, [smooth], {"mask": _nested(ignored), "value": 0.0})
    if reduction == "mean":
        kept = weak(float(ignored.size - np.count_nonzero(ignored)))
        smooth = ev.op("div", node, [ev.op("sum", node, [smooth]), kept])
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
    return ev.op("div", node, [total, weak(float(logp.value.size / classes))],
                 grad_fn="DivBackward1")


# --- kl_div, cosine_similarity -------------------------------------------------------------------
def _kl_div(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "target") + _LEGACY + ("reduction", "log_target"),
                 required=2)
    x = _tensor(node, given["input"], "input")
    t = _tensor(node, given["target"], "target")
    reduction = _reduction(node, given, REDUCTIONS + ("batchmean",))
    log_target = truth_arg(node, "log_target", given.get("log_target", False))
    _broadcast(ev, node, t, x, warn=False)  # (PyTorch's order: target * input)
    if log_target:
        loss = ev.op("mul", node, [ev.op("exp", node, [t]), ev.op("sub", node, [t, x])])
    else:
        loss = ev.op("sub", node, [ev.op("xlogy", node, [t, t]), ev.op("mul", node, [t, x])])
    if reduction == "mean":
        _warn(ev, node, "reduction: 'mean' divides the total loss by both the batch size and the "
                        "support size.'batchmean' divides only by the batch size, and aligns with "
                        "the KL div math definition.'mean' will be changed to behave the same as "
                        "'batchmean' in the next major release.")
        return ev.op("mean", node, [loss])
    if reduction == "sum":
        return ev.op("sum", node, [loss])
    if reduction == "batchmean":
        total = ev.op("sum", node, [loss])
        return total if not x.value.ndim else ev.op("div", node, [total, weak(x.shape[0])])
    return loss


def _cosine_similarity(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("x1", "x2", "dim", "eps"), required=2)
    a = _tensor(node, given["x1"], "x1")
    b = _tensor(node, given["x2"], "x2")
    _broadcast(ev, node, a, b, warn=False)
    shape = np.broadcast_shapes(a.shape, b.shape)
    eps = number(node, "eps", given["eps"]) if given.get("eps") is not None else 1e-8
    d = one_dim(ev, node, given["dim"], len(shape)) if given.get("dim") is not None \
        else one_dim(ev, node, weak(1), len(shape))
    if not shape:
        raise DdxShapeError("cosine_similarity needs tensors with at least one dim",
                            start=node.pos, end=node.end)
    parts = []
    for t in _expanded(ev, node, [a, b], every=True):
        n = ev.op("norm", node, [t], {"dim": (d,), "keepdim": True}, grad_fn="LinalgVectorNormBackward0")
        parts.append(ev.op("div", node, [t, ev.op("clamped", node, [n], {"eps": eps})]))
    return ev.op("sum", node, [ev.op("mul", node, parts)], {"dim": (d,)}, grad_fn="SumBackward1")


CALLERS: dict = {
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "mse_loss": _pointwise("mse_loss"),
    "smooth_l1_loss": _pointwise("smooth_l1_loss", "beta"),
    "huber_loss": _pointwise("huber_loss", "delta"),
    "binary_cross_entropy": _bce,
    "binary_cross_entropy_with_logits": _bce_logits,
    "nll_loss": _nll_loss,
}
NAMED: dict = {"cross_entropy": _cross_entropy, "l1_loss": _l1_loss, "kl_div": _kl_div,
               "cosine_similarity": _cosine_similarity}
NAMED_SPACES: dict = {"cross_entropy": ("F",), "l1_loss": ("F",), "kl_div": ("F",),
                      "cosine_similarity": ("torch", "F")}
