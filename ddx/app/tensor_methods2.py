"""More of the tensor methods tutorials call: tolist, numel, dim, equal, float, double, long,
int, bool, to, is_contiguous, stride, isclose, allclose, and torch.equal/isclose/allclose."""

from __future__ import annotations

import numpy as np

from ..errors import DdxTypeError, DdxValueError
from ..graph.create_args import require_cpu
from ..graph.tensor import Tensor
from ..graph.values import DType
from .methods import check_kw
from .values import Device, PyNumber, Str


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
    if t.requires_grad and np.dtype(dtype).kind == "f":
        if dtype == np.float64 and t.value.dtype == np.float32:
            return ev.op("to_float64", node, [t])  # ToCopyBackward0
        raise DdxTypeError(f"ddx converts a tensor that requires grad from float32 to float64 "
                           f"only, not from {t.value.dtype} to {np.dtype(dtype)}")
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
    require_cpu(kw["device"][0] if "device" in kw else None)
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor) and not a.weak:
            dtype = DType(a.value.dtype)
        elif isinstance(a, (str, Device)):
            require_cpu(a)
    return t if dtype is None else _cast(ev, node, t, dtype.np)


_LEGACY = ("Float", "Double", "Long", "Int", "Short", "Char", "Byte", "Bool", "Half")


def m_type(ev, node, t, args, kw):
    """x.type(): the legacy name ('torch.FloatTensor'); x.type(torch.float64) or
    x.type('torch.DoubleTensor') (dtype= too): the cast, as .to(dtype)."""
    from .pyvalues import torch_type_name

    given = args[0] if args else kw.get("dtype", (None,))[0]
    if given is None:
        return Str(f"torch.{torch_type_name(t.value.dtype)}Tensor")
    if isinstance(given, DType):
        return _cast(ev, node, t, np.dtype(given.np))
    legacy = getattr(given, "legacy_dtype", None)  # (x.type(torch.LongTensor))
    if legacy is not None:
        return _cast(ev, node, t, legacy)
    text = str(given)
    for name in _LEGACY:
        if text == f"torch.{name}Tensor":
            if name == "Half":
                raise DdxTypeError("'torch.HalfTensor' is not supported by ddx (it has no "
                                   "float16)")
            wanted = next(d for d in ("float32", "float64", "int64", "int32", "int16", "int8",
                                      "uint8", "bool") if torch_type_name(d) == name)
            return _cast(ev, node, t, np.dtype(wanted))
    raise DdxValueError(f"invalid type: '{text}'")


def m_long(ev, node, t, args, kw):
    return _cast(ev, node, t, np.dtype(np.int64))


def m_int(ev, node, t, args, kw):
    return _cast(ev, node, t, np.dtype(np.int32))


def m_bool(ev, node, t, args, kw):
    return _cast(ev, node, t, np.dtype(np.bool_))


def m_is_contiguous(ev, node, t, args, kw):
    check_kw(node, kw, ())
    return bool(t.value.flags.c_contiguous)


def m_stride(ev, node, t, args, kw):
    """x.stride() in elements, x.stride(d) for one dim (numpy's strides: a view's are the
    view's, an expanded dim's 0, as torch's)."""
    check_kw(node, kw, ("dim",))
    strides = tuple(s // t.value.itemsize for s in t.value.strides)
    dim = args[0] if args else kw["dim"][0] if "dim" in kw else None
    if dim is None:
        return strides
    d = int(dim.value.item()) if isinstance(dim, Tensor) else int(dim)
    if not -len(strides) <= d < len(strides) or not strides:
        raise DdxTypeError(f"Dimension out of range (expected to be in range of "
                           f"[{-len(strides)}, {len(strides) - 1}], but got {d})")
    return strides[d]


def _close(ev, node, a, b, kw) -> np.ndarray:
    """torch.isclose's test: |a - b| <= atol + rtol * |b|, infinities equal to themselves,
    nan equal to nan only with equal_nan=True."""
    def number(name, default):
        v = kw[name][0] if name in kw else default
        return v.value.item() if isinstance(v, Tensor) else v
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.weak or b.weak:
        raise DdxTypeError("isclose(): argument 'other' must be Tensor")
    if a.value.dtype != b.value.dtype:
        raise DdxTypeError(f"{a.value.dtype.name} did not match {b.value.dtype.name}")
    ev.check_broadcast(node, a, b)  # (PyTorch's words for shapes that do not broadcast)
    return np.isclose(a.value, b.value, rtol=number("rtol", 1e-05), atol=number("atol", 1e-08),
                      equal_nan=bool(number("equal_nan", False)))


def m_isclose(ev, node, t, args, kw):
    check_kw(node, kw, ("rtol", "atol", "equal_nan"))
    out = Tensor(np.asarray(_close(ev, node, t, args[0], kw)))
    out.label = ev.label(node)
    return out


def m_allclose(ev, node, t, args, kw):
    check_kw(node, kw, ("rtol", "atol", "equal_nan"))
    return bool(_close(ev, node, t, args[0], kw).all())


def _function(method):
    """torch.f(x, *args) for the method x.f(*args)."""
    def call(ev, node, args, kw):
        if not args or not isinstance(args[0], Tensor):
            raise DdxTypeError(f"{method.__name__[2:]}(): argument 'input' must be Tensor")
        return method(ev, node, args[0], list(args[1:]), kw)
    return call


def fn_equal(ev, node, args, kw):
    a, b = args
    if not isinstance(a, Tensor):
        raise DdxTypeError("equal(): argument 'input' must be Tensor")
    return m_equal(ev, node, a, [b], kw)


METHODS = {"tolist": m_tolist, "numel": m_numel, "nelement": m_numel, "dim": m_dim,
           "ndimension": m_dim,
           "equal": m_equal, "float": m_float, "double": m_double, "long": m_long, "int": m_int,
           "bool": m_bool, "to": m_to, "type": m_type, "cpu": lambda ev, n, t, a, k: t,
           "cuda": lambda ev, n, t, a, k: require_cpu("cuda"),
           "is_contiguous": m_is_contiguous, "stride": m_stride, "isclose": m_isclose,
           "allclose": m_allclose}

__all__ = ["METHODS", "fn_equal"]


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    for name, fn in METHODS.items():
        TENSOR_METHODS.setdefault(name, fn)
    EXTRA["torch"].setdefault("equal", Native("equal", fn_equal))
    for name, method in (("isclose", m_isclose), ("allclose", m_allclose), ("numel", m_numel)):
        EXTRA["torch"].setdefault(name, Native(name, _function(method)))


register()
