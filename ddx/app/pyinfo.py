"""torch.finfo and torch.iinfo (a dtype's limits, as PyTorch gives and prints them: numbers
as Python floats and ints, ``resolution`` 10**-precision, the repr's numbers in ``%g``), and
torch.is_tensor."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import DType
from .pymodules import EXTRA, Native
from .values import Str


class _Info:
    """What finfo(dtype) / iinfo(dtype) gives: its fields as attributes."""

    def __init__(self, kind: str, fields: dict) -> None:
        self.kind, self.fields = kind, fields

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:g}" for k, v in self.fields.items() if k in self.shown)
        return f"{self.kind}({shown}, dtype={self.fields['dtype']})"

    @property
    def shown(self) -> tuple:
        return ("resolution", "min", "max", "eps", "smallest_normal", "tiny") \
            if self.kind == "finfo" else ("min", "max")

    def py_attr(self, ev, node, name: str) -> Any:
        if name in self.fields:
            return self.fields[name]
        raise DdxTypeError(f"'torch.{self.kind}' object has no attribute '{name}'")


def _dtype_arg(ev, args: list, kw: dict, kind: str) -> np.dtype:
    given = args[0] if args else kw.get("type", (None,))[0]
    if given is None and kind == "finfo":
        return np.dtype(ev.dtype)
    if isinstance(given, DType):
        return given.np
    raise DdxTypeError(f"{kind}(): argument 'type' must be torch.dtype")


def _finfo(ev, node, args: list, kw: dict) -> _Info:
    dtype = _dtype_arg(ev, args, kw, "finfo")
    if dtype.kind != "f":
        raise DdxTypeError("torch.finfo() requires a floating point input type. Use "
                           "torch.iinfo to handle 'torch.finfo'")
    f = np.finfo(dtype)
    return _Info("finfo", {
        "bits": int(f.bits), "resolution": 10.0 ** -int(f.precision), "min": float(f.min),
        "max": float(f.max), "eps": float(f.eps), "smallest_normal": float(f.smallest_normal),
        "tiny": float(f.tiny), "dtype": Str(dtype.name)})


def _iinfo(ev, node, args: list, kw: dict) -> _Info:
    dtype = _dtype_arg(ev, args, kw, "iinfo")
    if dtype.kind not in "iub":
        raise DdxTypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                           "handle 'torch.iinfo'")
    i = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
    return _Info("iinfo", {"bits": int(i.bits), "min": int(i.min), "max": int(i.max),
                           "dtype": Str(dtype.name)})


def _is_tensor(ev, node, args: list, kw: dict) -> bool:
    (value,) = args
    return isinstance(value, Tensor) and not value.weak


def register() -> None:
    EXTRA["torch"].update(finfo=Native("finfo", _finfo), iinfo=Native("iinfo", _iinfo),
                          is_tensor=Native("is_tensor", _is_tensor))


register()

__all__ = ["register"]
