"""PyTorch's printed forms: ``tensor(7., grad_fn=<AddBackward0>)``, ``torch.Size([2])``, node reprs.

Follows torch/_tensor_str.py: PrintOptions holds what torch.set_printoptions sets (precision 4,
threshold 1000, edgeitems 3, linewidth 80 and sci_mode chosen per tensor by default); the
default dtype is the caller's (the REPL's float32, as PyTorch's, unless set otherwise)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

DEFAULT_DTYPE = np.dtype(np.float64)


@dataclass(frozen=True)
class PrintOptions:
    """torch's PRINT_OPTS; sci_mode None lets each tensor's values choose."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None

    def as_dict(self) -> dict:
        """What torch.get_printoptions() returns."""
        return asdict(self)


DEFAULT_OPTIONS = PrintOptions()
PROFILES = {"default": DEFAULT_OPTIONS, "short": PrintOptions(precision=2, edgeitems=2),
            "full": PrintOptions(threshold=math.inf)}


def set_printoptions(current: PrintOptions, precision=None, threshold=None, edgeitems=None,
                     linewidth=None, profile=None, sci_mode=None) -> PrintOptions:
    """The options after ``torch.set_printoptions(...)``, by its rules: a known profile resets the
    four numbers first (an unknown one is ignored, as PyTorch ignores it), the numbers given
    override, and sci_mode is always replaced (so leaving it out sets it back to automatic)."""
    base = PROFILES.get(profile, current) if profile is not None else current
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "linewidth": linewidth}
    return replace(base, **{k: v for k, v in given.items() if v is not None}, sci_mode=sci_mode)


class _Formatter:
    def __init__(self, values: np.ndarray, opts: PrintOptions) -> None:
        self.precision = opts.precision
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
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if opts.sci_mode is None \
            else bool(opts.sci_mode)
        for v in vals:
            if self.sci_mode:
                text = f"{v:.{self.precision}e}"
                self.max_width = max(self.max_width, len(text))
            elif self.int_mode:
                self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
            else:
                self.max_width = max(self.max_width, len(f"{v:.{self.precision}f}"))

    def format(self, v) -> str:
        if self.floating:
            v = float(v)
            if self.sci_mode:
                text = f"{v:{self.max_width}.{self.precision}e}"
            elif self.int_mode:
                text = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    text += "."
            else:
                text = f"{v:.{self.precision}f}"
        else:
            text = str(v)
        return (self.max_width - len(text)) * " " + text


def _summarized(a: np.ndarray, edge: int) -> np.ndarray:
    """The elements PyTorch looks at to pick a format for a summarised tensor
    (get_summarized_data), gathered with an explicit stack rather than recursion."""
    if a.ndim == 0:
        return a
    out: list[np.ndarray] = []
    stack = [a]
    while stack:
        x = stack.pop()
        n = x.shape[0]
        picks = [x[:edge], x[n - edge:]] if n > 2 * edge else [x]
        if x.ndim == 1:
            out.extend(picks)
        else:
            stack.extend(reversed([row for p in picks for row in p]))
    return np.concatenate(out) if out else a.reshape(-1)[:0]


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter,
          opts: PrintOptions) -> str:
    """The nested-bracket text, built with an explicit stack of (sub-array, indent) frames."""
    if a.ndim == 0:
        return fmt.format(a.item())
    # Each frame renders one sub-array; results are joined bottom-up.
    def rows(x):
        n = x.shape[0]
        edge = opts.edgeitems
        if summarize and n > 2 * edge:
            return list(range(edge)) + [None] + list(range(n - edge, n))
        return list(range(n))

    def vector(x, ind):
        per_line = max(1, math.floor((opts.linewidth - ind) / (fmt.max_width + 2)))
        data = [fmt.format(x[i]) if i is not None else " ..." for i in rows(x)]
        if summarize and not opts.edgeitems:
            data = ["..."]
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
                is_leaf: bool = True, default=DEFAULT_DTYPE,
                options: PrintOptions = DEFAULT_OPTIONS, tangent: str | None = None) -> str:
    """``tensor(...)`` exactly as PyTorch prints it: the dtype shown when it is not the
    default dtype (``default``), and each suffix on a line of its own where it would pass
    the line width (_add_suffixes in torch/_tensor_str.py)."""
    a = np.asarray(value)
    prefix = "tensor("
    suffixes = []
    summarize = a.size > options.threshold
    shown = a.dtype == np.dtype(default) or a.dtype in (np.int64, np.bool_)
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(int(n) for n in a.shape)}")
        shown = a.dtype == np.dtype(default)  # no elements to tell int64 by: always named
    else:
        if not options.edgeitems:
            suffixes.append(f"size={tuple(int(n) for n in a.shape)}")
        fmt = _Formatter(_summarized(a, options.edgeitems) if summarize else a, options)
        body = _body(a, len(prefix), summarize, fmt, options)
    if not shown:
        suffixes.append(f"dtype={dtype_repr(a.dtype)}")
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad and is_leaf:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # (forward AD's dual tensor: its tangent as f"{tangent}")
        suffixes.append(f"tangent={tangent}")
    text = prefix + body
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    indent = len(prefix)
    for suffix in suffixes:
        if last + len(suffix) + 2 > options.linewidth:
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
