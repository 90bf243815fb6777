"""Plain-text number formatting shared by the renderers: short, exact where it matters, summarised."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def number(v) -> str:
    """A scalar: the shortest text that reads back as the same float (42, 0.5, nan)."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    f = float(v)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    if f.is_integer() and abs(f) < 1e16:
        return str(int(f))
    return repr(f)


def short(v) -> str:
    return "%.6g" % v if isinstance(v, (float, np.floating)) else str(v)


def value(arr, *, threshold: int = 12, width: int = 60, exact: bool = True) -> str:
    """A value for a table cell: scalars exactly (or to 6 digits), arrays summarised with '...'."""
    if arr is None:
        return "None"
    a = np.asarray(arr)
    if a.ndim == 0:
        v = a.item()
        return number(v) if exact or not isinstance(v, float) or v.is_integer() else short(v)
    return np.array2string(a, threshold=threshold, edgeitems=3, separator=", ",
                           max_line_width=width, formatter={"float_kind": short})


def shape(arr) -> str:
    return "(" + ", ".join(str(n) for n in np.shape(arr)) + ("," if np.ndim(arr) == 1 else "") + ")"


def nonfinite(arr) -> bool:
    a = np.asarray(arr)
    return a.dtype.kind == "f" and not bool(np.isfinite(a).all())


def jsonable(value: np.ndarray | None) -> Any:
    """Nested lists of Python numbers; nan/inf become the strings "nan", "inf", "-inf"."""
    if value is None:
        return None
    if type(value) is np.ndarray and value.ndim == 0:  # the common case, kept off numpy's paths
        v = value.item()
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        return v
    arr = np.asarray(value)
    if arr.ndim == 0:
        v = arr.item()
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        return v
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        obj = arr.astype(object)
        obj[np.isnan(arr)] = "nan"
        obj[np.isposinf(arr)] = "inf"
        obj[np.isneginf(arr)] = "-inf"
        return obj.tolist()
    return arr.tolist()
