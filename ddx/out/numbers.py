"""The one number format of the human views (as PyTorch's print options): N significant digits.

A float is written with ``%.{N}g`` (N = ``--precision``, default 6), so ``28.0`` is ``28``,
``0.2889390724562`` is ``0.288939`` and ``1e-05`` stays ``1e-05``; ``-0`` is ``0``; ``nan``,
``inf``, ``-inf`` as written; integers and booleans as they are. Scalars and array elements
use the same format; an array longer than ``THRESHOLD`` elements is summarised with ``...``.
``--json`` always carries every digit."""

from __future__ import annotations

import numpy as np

DEFAULT_PRECISION = 6
MAX_PRECISION = 17  # enough for any float64 to read back exactly
THRESHOLD = 12  # arrays with more elements are summarised: three first, ..., three last
EDGE_ITEMS = 3


def scalar(v, precision: int = DEFAULT_PRECISION) -> str:
    """One number in the views' format."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    if f == 0:
        return "0"  # -0 too: the sign of a zero is noise to a reader
    return "%.*g" % (precision, f)


def lines(arr, precision: int = DEFAULT_PRECISION, width: int = 60, *,
          threshold: int = THRESHOLD, edge: int = EDGE_ITEMS) -> list[str]:
    """A value as lines of at most ``width`` cells where it can be (an array wraps between
    elements, never inside a number); ``None`` is ``None``."""
    if arr is None:
        return ["None"]
    a = np.asarray(arr)
    if a.ndim == 0:
        return [scalar(a.item(), precision)]
    if a.size == 0:
        return ["[]"]
    fmt = lambda x: scalar(x, precision)  # noqa: E731
    text = np.array2string(a, threshold=threshold, edgeitems=edge, separator=", ",
                           max_line_width=max(width, 8),
                           formatter={"float_kind": fmt, "int_kind": fmt, "bool": fmt})
    return text.split("\n")


def fitted(arr, precision: int, width: int) -> list[str]:
    """``lines`` that fit ``width``; if none do, a shorter summary (one item each side), and
    at last the shape alone: a number is never cut."""
    got = lines(arr, precision, width)
    if np.ndim(arr) == 0 or max(map(len, got)) <= width:
        return got
    for narrower in range(width - 1, max(width - 6, 7), -1):  # (numpy's ']' may overhang)
        got = lines(arr, precision, narrower)
        if max(map(len, got)) <= width:
            return got
    for threshold, edge in ((6, 1), (2, 1)):
        got = lines(arr, precision, width, threshold=threshold, edge=edge)
        if max(map(len, got)) <= width:
            return got
    return ["…" + str(tuple(np.shape(arr)))]


def narrowest(arr, precision: int = DEFAULT_PRECISION) -> int:
    """The fewest cells that hold a value with one element per line (brackets and comma
    around the widest element shown)."""
    a = np.asarray(arr) if arr is not None else None
    if a is None or a.ndim == 0:
        return len(lines(arr, precision)[0])
    if a.size == 0:
        return 2
    flat = a.reshape(-1)
    if flat.size > THRESHOLD:
        flat = np.concatenate([flat[:EDGE_ITEMS], flat[-EDGE_ITEMS:]])
    return max(len(scalar(v, precision)) for v in flat.tolist()) + 2 * a.ndim


def text(arr, precision: int = DEFAULT_PRECISION, width: int = 60) -> str:
    """A value on as many lines as it takes at ``width``."""
    return "\n".join(lines(arr, precision, width))


def check_precision(n: int) -> int:
    if not 1 <= n <= MAX_PRECISION:
        from ..errors import DdxUsageError

        raise DdxUsageError(f"--precision must be between 1 and {MAX_PRECISION}, not {n}")
    return n
