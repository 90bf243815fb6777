"""PyTorch's printed forms: ``tensor(7., grad_fn=<AddBackward0>)``, ``torch.Size([2])``, node reprs.

Follows torch/_tensor_str.py (precision 4, threshold 1000, edgeitems 3, linewidth 80); the
default dtype is the caller's (the REPL's float32, as PyTorch's, unless set otherwise)."""

from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
DEFAULT_DTYPE = np.dtype(np.float64)


class _Formatter:
    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        vals = [float(v) for v in finite.tolist()]
        absolute = np.abs(finite.astype(np.float64))
        lo, hi = float(absolute.min()), float(absolute.max())
        self.int_mode = all(v == math.ceil(v) for v in vals)
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        for v in vals:
            if self.sci_mode:
                text = f"{v:.{PRECISION}e}"
                self.max_width = max(self.max_width, len(text))
            elif self.int_mode:
                self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
            else:
                self.max_width = max(self.max_width, len(f"{v:.{PRECISION}f}"))

    def format(self, v) -> str:
        if self.floating:
            v = float(v)
            if self.sci_mode:
                text = f"{v:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    text += "."
            else:
                text = f"{v:.{PRECISION}f}"
        else:
            text = str(v)
        return (self.max_width - len(text)) * " " + text


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements PyTorch looks at to pick a format for a summarised tensor."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        parts = [a[:EDGEITEMS], a[-EDGEITEMS:]]
    else:
        parts = [a]
    if a.ndim == 1:
        return np.concatenate(parts)
    return np.concatenate([_summarized(row).reshape(-1) for p in parts for row in p])


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    """The nested-bracket text, built with an explicit stack of (sub-array, indent) frames."""
    if a.ndim == 0:
        return fmt.format(a.item())
    # Each frame renders one sub-array; results are joined bottom-up.
    def rows(x):
        n = x.shape[0]
        if summarize and n > 2 * EDGEITEMS:
            return list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
        return list(range(n))

    def vector(x, ind):
        per_line = max(1, math.floor((LINEWIDTH - ind) / (fmt.max_width + 2)))
        data = [fmt.format(x[i]) if i is not None else " ..." for i in rows(x)]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + ("," + "\n" + " " * (ind + 1)).join(lines) + "]"

    # post-order over sub-arrays: ndim is at most 64, but keep the walk iterative all the same
    stack = [(a, indent, None)]
    order: list[tuple] = []
    while stack:
        x, ind, key = stack.pop()
        order.append((x, ind, key))
        if x.ndim > 1:
            for i in rows(x):
                if i is not None:
                    stack.append((x[i], ind + 1, (id(x), i)))
    texts: dict = {}
    for x, ind, key in reversed(order):
        if x.ndim == 1:
            text = vector(x, ind)
        else:
            parts = [texts[(id(x), i)] if i is not None else "..." for i in rows(x)]
            text = "[" + ("," + "\n" * (x.ndim - 1) + " " * (ind + 1)).join(parts) + "]"
        texts[key] = text
    return texts[None]


def tensor_repr(value: np.ndarray, *, requires_grad: bool = False, grad_fn: str | None = None,
                is_leaf: bool = True, default=DEFAULT_DTYPE) -> str:
    """``tensor(...)`` exactly as PyTorch prints it: the dtype shown when it is not the
    default dtype (``default``), and each suffix on a line of its own where it would pass
    the line width (_add_suffixes in torch/_tensor_str.py)."""
    a = np.asarray(value)
    prefix = "tensor("
    suffixes = []
    summarize = a.size > THRESHOLD
    if a.size == 0:
        body = "[]"
        if a.ndim > 1:
            suffixes.append(f"size=({', '.join(str(n) for n in a.shape)},)" if a.ndim == 1
                            else f"size=({', '.join(str(n) for n in a.shape)})")
    else:
        fmt = _Formatter(_summarized(a) if summarize else a)
        body = _body(a, len(prefix), summarize, fmt)
    if a.dtype != np.dtype(default) and a.dtype != np.int64 and a.dtype != np.bool_:
        suffixes.append(f"dtype={dtype_repr(a.dtype)}")
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad and is_leaf:
        suffixes.append("requires_grad=True")
    text = prefix + body
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    indent = len(prefix)
    for suffix in suffixes:
        if last + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def dtype_repr(dtype) -> str:
    return f"torch.{np.dtype(dtype).name}"


def size_repr(shape) -> str:
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


class Addresses:
    """Stable fake addresses for node reprs, so sessions and tests are deterministic."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}
        self._keep: list = []

    def of(self, obj) -> str:
        key = id(obj)
        if key not in self._ids:
            self._ids[key] = f"0x7f00{0x1000 + 0x30 * len(self._ids):08x}"
            self._keep.append(obj)  # ids stay unique while we hold the object
        return self._ids[key]
