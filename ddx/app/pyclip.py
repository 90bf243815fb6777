"""torch.nn.utils.clip_grad_norm_ and clip_grad_value_, with PyTorch's arithmetic: the total
norm is the norm of the gradients' norms (each a vector_norm, as CPU's _foreach_norm falls
back to), the factor ``max_norm / (total + 1e-6)`` is Tensor.__rtruediv__'s
``reciprocal() * max_norm`` in the gradients' dtype, clamped to 1, and every gradient is
multiplied by it in place; the total norm is returned."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pymodules import EXTRA, MODULES, Native, PyModule


def _params(value: Any) -> list:
    if isinstance(value, Tensor):
        return [value]
    if hasattr(value, "py_iter"):
        value = list(value.py_iter())
    if isinstance(value, (list, tuple)):
        return [p for p in value if isinstance(p, Tensor)]
    raise DdxTypeError("clip_grad_norm_() takes a tensor or an iterable of tensors")


def _number(value: Any) -> float:
    if isinstance(value, Tensor) and value.value.size == 1:
        return float(value.value.item())
    if isinstance(value, (int, float)):
        return float(value)
    raise DdxTypeError(f"expected a number, got {type(value).__name__}")


def _norm(ev, node, arr: np.ndarray, p: float) -> np.ndarray:
    saved = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        got = ev.functions["vector_norm"](ev, node, [Tensor(arr)], {"ord": (weak(p), node.pos)})
    finally:
        record.GRAD_MODE.enabled = saved
    return np.asarray(got.value)


def _write(ev, p: Tensor, grad: np.ndarray) -> None:
    if ev.journal is not None:
        ev.journal.keep(p, "grad")
    p.grad = grad


def clip_grad_norm_(ev, node, args: list, kw: dict) -> Tensor:
    names = ("parameters", "max_norm", "norm_type", "error_if_nonfinite", "foreach")
    given = dict(zip(names, args))
    for key, (value, _) in kw.items():
        if key not in names:
            raise DdxTypeError(f"clip_grad_norm_() got an unexpected keyword argument '{key}'")
        given[key] = value
    if "parameters" not in given or "max_norm" not in given:
        raise DdxTypeError("clip_grad_norm_() missing required arguments: 'parameters' and "
                           "'max_norm'")
    params = [p for p in _params(given["parameters"]) if p.grad is not None]
    max_norm = _number(given["max_norm"])
    norm_type = _number(given.get("norm_type", 2.0))
    if not params:
        return Tensor(np.asarray(0.0, dtype=ev.dtype))
    dtype = params[0].grad.dtype
    norms = np.stack([_norm(ev, node, np.asarray(p.grad), norm_type) for p in params])
    total = _norm(ev, node, norms.astype(dtype, copy=False), norm_type).astype(dtype)
    if given.get("error_if_nonfinite") is True and not np.isfinite(total):
        raise DdxRuntimeError(f"The total norm of order {norm_type} for gradients from "
                              "`parameters` is non-finite, so it cannot be clipped. To disable "
                              "this error and scale the gradients by the non-finite norm "
                              "anyway, set `error_if_nonfinite=False`")
    with np.errstate(all="ignore"):
        shifted = (total + dtype.type(1e-6)).astype(dtype)
        coef = (np.reciprocal(shifted) * dtype.type(max_norm)).astype(dtype)
        coef = np.minimum(coef, dtype.type(1.0))
        for p in params:
            _write(ev, p, (np.asarray(p.grad) * coef).astype(p.grad.dtype))
    return Tensor(np.asarray(total))


def clip_grad_value_(ev, node, args: list, kw: dict) -> None:
    given = dict(zip(("parameters", "clip_value", "foreach"), args))
    given.update({k: v for k, (v, _) in kw.items()})
    if "parameters" not in given or "clip_value" not in given:
        raise DdxTypeError("clip_grad_value_() missing required arguments: 'parameters' and "
                           "'clip_value'")
    c = _number(given["clip_value"])
    for p in _params(given["parameters"]):
        if p.grad is not None:
            g = np.asarray(p.grad)
            _write(ev, p, np.clip(g, g.dtype.type(-c), g.dtype.type(c)).astype(g.dtype))
    return None


def register() -> None:
    utils = PyModule("torch.nn.utils", {"clip_grad_norm_": Native("clip_grad_norm_",
                                                                  clip_grad_norm_),
                                        "clip_grad_value_": Native("clip_grad_value_",
                                                                   clip_grad_value_)})
    EXTRA["torch.nn"]["utils"] = utils
    MODULES["torch.nn.utils"] = utils


register()

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
