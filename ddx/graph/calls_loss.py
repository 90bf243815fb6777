"""Callers for softmax/log_softmax and the losses of torch.nn.functional (see
ddx/graph/args.py for what a caller is): ``reduction``, PyTorch's shape checks and messages,
and the losses PyTorch builds from other ops, recorded as those ops (l1_loss is sub, abs,
mean; kl_div, cosine_similarity likewise; cross_entropy and nll_loss are in calls_nll.py).
Its tables are merged into ddx/graph/calls_reduce.py's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxNameError, DdxRuntimeError, DdxShapeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, bind, called_in_torch, number, one_dim, truth_arg
from .record import WARNINGS
from .tensor import Tensor
from .values import type_name, weak

REDUCTIONS = ("mean", "sum", "none")
_LEGACY = ("size_average", "reduce")  # PyTorch's deprecated flags: accepted when None


def _size(shape: tuple) -> str:
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


def tensor_arg(node: Ast, value: Any, what: str) -> Tensor:
    if not isinstance(value, Tensor) or value.weak:
        raise DdxTypeError(f"{node.value}(): argument '{what}' must be Tensor, not "
                           f"{type_name(value)}", start=node.pos, end=node.end)
    return value


def reduction_arg(node: Ast, given: dict, choices: tuple = REDUCTIONS) -> str:
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


def warn_at(ev: Evaluating, node: Ast, text: str) -> None:
    WARNINGS.append((ev.source[node.start:node.end] if ev.source else node.value, text))


def _broadcast(ev: Evaluating, node: Ast, a: Tensor, b: Tensor, warn: bool = True) -> None:
    ev.check_broadcast(Ast("bin", node.value, (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    if warn and a.shape != b.shape:
        warn_at(ev, node, f"Using a target size ({_size(b.shape)}) that is different to the input "
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


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}  # aten's aliases, as numpy spells them


def aliased(node: Ast, kw: dict) -> dict:
    """``axis=``/``keepdims=`` as ``dim=``/``keepdim=`` (PyTorch takes both spellings)."""
    if not any(k in _NUMPY_NAMES for k in kw):
        return kw
    out: dict = {}
    for key, item in kw.items():
        name = _NUMPY_NAMES.get(key, key)
        if name in out:
            raise DdxTypeError(f"{node.value}() got multiple values for argument '{name}'",
                               start=item[1], end=item[1] + len(key))
        out[name] = item
    return out


def same_dtype(node: Ast, a: Tensor, value: Any) -> Tensor:
    """``dtype=``: PyTorch casts the input first; ddx does so for an input that does not
    require grad (the cast of one that does is a node PyTorch folds into the op's own)."""
    if value is None:
        return a
    want = getattr(value, "np", None)
    if want is None:
        raise DdxTypeError(f"{node.value}(): argument 'dtype' must be torch.dtype, not "
                           f"{type_name(value)}", start=node.pos, end=node.end)
    if want != a.value.dtype and not a.requires_grad:
        return Tensor(a.value.astype(want))
    if want != a.value.dtype:
        raise DdxNameError(f"{node.value}(dtype=torch.{want.name}) of a {a.value.dtype.name} "
                           "tensor (a cast inside the op) is not supported by ddx; cast the "
                           "input first", start=node.pos, end=node.end)
    return a


def not_differentiable(node: Ast, t: Tensor | None, fn: str, arg: str) -> None:
    if t is not None and t.requires_grad:
        raise DdxRuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                              f"'{arg}'. This input cannot have requires_grad True.",
                              start=node.pos, end=node.end)


# --- softmax, log_softmax -------------------------------------------------------------------------
def _softmax(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input", "dim", "_stacklevel", "dtype"))
        a = as_tensor(ev, node, given["input"])
        if a.weak or a.value.dtype.kind != "f":
            a = Tensor(np.asarray(a.value, dtype=ev.dtype))
        a = same_dtype(node, a, given.get("dtype"))
        dim = given.get("dim")
        if dim is None:  # PyTorch's _get_softmax_dim, with its warning
            d = 0 if a.value.ndim in (0, 1, 3) else 1
            warn_at(ev, node, f"Implicit dimension choice for {name} has been deprecated. Change "
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
        a = tensor_arg(node, given["input"], "input")
        b = tensor_arg(node, given["target"], "target")
        reduction = reduction_arg(node, given)
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
    return _l1(ev, node, tensor_arg(node, given["input"], "input"),
               tensor_arg(node, given["target"], "target"), reduction_arg(node, given))


def _bce(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "target", "weight") + _LEGACY + ("reduction",),
                 required=2)
    a = tensor_arg(node, given["input"], "input")
    b = tensor_arg(node, given["target"], "target")
    reduction = reduction_arg(node, given)
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
    w = tensor_arg(node, w, "weight")
    not_differentiable(node, w, "binary_cross_entropy", "weight")
    _broadcast(ev, node, a, w, warn=False)
    return ev.op("binary_cross_entropy_weight", node, [a, b, w], extra)


def _bce_logits(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    # torch.binary_cross_entropy_with_logits is aten's: reduction an int, default 0 ('none')
    if called_in_torch(node):
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
    a = tensor_arg(node, given["input"], "input")
    b = tensor_arg(node, given["target"], "target")
    reduction = reduction_arg(node, given)
    if a.shape != b.shape:
        raise DdxValueError(f"Target size ({_size(b.shape)}) must be the same as input size "
                            f"({_size(a.shape)})", start=node.pos, end=node.end)
    inputs = [a, b]
    name = "binary_cross_entropy_with_logits"
    for key in ("weight", "pos_weight"):
        if given.get(key) is not None:
            t = tensor_arg(node, given[key], key)
            not_differentiable(node, t, name, key)
            _broadcast(ev, node, a, t, warn=False)
            inputs.append(t)
            name += "_" + key
    return ev.op(name, node, inputs, {"reduction": reduction} if reduction != "mean" else {})


# --- kl_div, cosine_similarity -------------------------------------------------------------------
def _kl_div(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "target") + _LEGACY + ("reduction", "log_target"),
                 required=2)
    x = tensor_arg(node, given["input"], "input")
    t = tensor_arg(node, given["target"], "target")
    reduction = reduction_arg(node, given, REDUCTIONS + ("batchmean",))
    log_target = truth_arg(node, "log_target", given.get("log_target", False))
    _broadcast(ev, node, t, x, warn=False)  # (PyTorch's order: target * input)
    if log_target:
        loss = ev.op("mul", node, [ev.op("exp", node, [t]), ev.op("sub", node, [t, x])])
    else:
        loss = ev.op("sub", node, [ev.op("xlogy", node, [t, t]), ev.op("mul", node, [t, x])])
    if reduction == "mean":
        warn_at(ev, node, "reduction: 'mean' divides the total loss by both the batch size and the "
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
    a = tensor_arg(node, given["x1"], "x1")
    b = tensor_arg(node, given["x2"], "x2")
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
}
NAMED: dict = {"l1_loss": _l1_loss, "kl_div": _kl_div, "cosine_similarity": _cosine_similarity}
NAMED_SPACES: dict = {"l1_loss": ("F",), "kl_div": ("F",), "cosine_similarity": ("torch", "F")}
