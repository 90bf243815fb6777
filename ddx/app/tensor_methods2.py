"""More of the tensor methods tutorials call: tolist, numel, dim, equal, float, double, to,
and torch.equal."""

from __future__ import annotations

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import DType
from .methods import check_kw
from .values import PyNumber


def m_tolist(ev, node, t, args, kw):
    check_kw(node, kw, ())
    return t.value.tolist()


def m_numel(ev, node, t, args, kw):
    check_kw(node, kw, ())
    return int(t.value.size)


def m_dim(ev, node, t, args, kw):
    check_kw(node, kw, ())
    return int(t.value.ndim)


def m_equal(ev, node, t, args, kw):
    check_kw(node, kw, ())
    (other,) = args
    if isinstance(other, PyNumber) or not isinstance(other, Tensor):
        raise DdxTypeError("equal(): argument 'other' must be Tensor")
    a, b = t.value, other.value
    return bool(a.shape == b.shape and np.array_equal(a, b))


def _cast(ev, node, t: Tensor, dtype: np.dtype) -> Tensor:
    if t.value.dtype == dtype:
        return t
    return ev.functions["to"](ev, node, [t, DType(dtype)], {}) if "to" in ev.functions else \
        _convert(ev, node, t, dtype)


def _convert(ev, node, t: Tensor, dtype: np.dtype) -> Tensor:
    if t.requires_grad:
        raise DdxTypeError("ddx converts a tensor that requires grad only through .to(dtype) "
                           "when the op surface provides it")
    out = Tensor(t.value.astype(dtype))
    out.label = ev.label(node)
    return out


def m_float(ev, node, t, args, kw):
    return _cast(ev, node, t, np.dtype(np.float32))


def m_double(ev, node, t, args, kw):
    return _cast(ev, node, t, np.dtype(np.float64))


def m_to(ev, node, t, args, kw):
    """x.to('cpu'), x.to(torch.device('cpu')), x.to(torch.float64), x.to(dtype=...)."""
    dtype = kw["dtype"][0] if "dtype" in kw else None
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor) and not a.weak:
            dtype = DType(a.value.dtype)
    return t if dtype is None else _cast(ev, node, t, dtype.np)


def fn_equal(ev, node, args, kw):
    a, b = args
    if not isinstance(a, Tensor):
        raise DdxTypeError("equal(): argument 'input' must be Tensor")
    return m_equal(ev, node, a, [b], kw)


METHODS = {"tolist": m_tolist, "numel": m_numel, "dim": m_dim, "equal": m_equal,
           "float": m_float, "double": m_double, "to": m_to, "cpu": lambda ev, n, t, a, k: t}

__all__ = ["METHODS", "fn_equal"]


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    for name, fn in METHODS.items():
        TENSOR_METHODS.setdefault(name, fn)
    EXTRA["torch"].setdefault("equal", Native("equal", fn_equal))


register()
