"""Kernels for ddx/ops/rows_more.py: the orderings (sort, topk, argsort, median, mode) and
the index-picking rules that scatter a gradient back to the elements an ordering picked,
and aminmax's rule (the rows without a gradient have theirs in kernels_count.py).

An ordering's rule recomputes its indices from the input's value (the primal part of a dual
number, ``primal``), so a replay on new bindings picks the new elements."""

from __future__ import annotations

import numpy as np

from . import stlsort
from .kernels_reduce import expand, kept_value
from .kernels_shape import on_parts


def primal(a) -> np.ndarray:
    """An input's plain value: the primal part of a dual number, or the array itself (a
    symbolic value, for a formula, is refused: an ordering's rule is no formula)."""
    v = np.asarray(getattr(a, "p", a))
    if v.dtype == object:
        raise TypeError("no formula for an ordering's rule")
    return v


def no_gradient_of(i: int):
    """The rule for input ``i`` of a result without a gradient (never run)."""
    return lambda g, out, *inputs, **kw: np.zeros(np.shape(inputs[i]))


def no_tangent(ts, out, *inputs, **kw):  # (a result without a gradient, of any inputs)
    return np.zeros(np.shape(out))


def _like(x, a):
    """A tangent seen at every element of ``a`` (forward mode passes it unbroadcast)."""
    return np.broadcast_to(x, np.shape(primal(a)))


# --- orders ------------------------------------------------------------------------------------
def order(a, dim: int = -1, descending: bool = False) -> np.ndarray:
    """PyTorch's stable sort order along ``dim``: ties keep their places; nan is the largest
    (last ascending, first descending); -0.0 and 0.0 are equal."""
    a = primal(a)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if a.dtype.kind == "b":
        a = a.astype(np.int8)
    elif a.dtype.kind == "u":
        a = a.astype(np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable").astype(np.int64)
    moved = np.moveaxis(a, dim, -1)
    if moved.dtype.kind == "f":
        idx = np.lexsort((-moved, ~np.isnan(moved)), axis=-1)
    else:
        idx = np.lexsort((-moved.astype(np.int64),), axis=-1)
    return np.moveaxis(idx, -1, dim).astype(np.int64)


def picked(a, idx, dim):
    """The elements at ``idx`` along ``dim`` (a 0-d input: itself)."""
    if np.ndim(a) == 0:
        return np.array(a, copy=True)
    return np.take_along_axis(np.asarray(a), idx, axis=dim)


def _scatter(g, shape, idx, dim):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    if not shape:
        return out + g
    np.put_along_axis(out, idx, g, axis=dim)
    return out


def scatter_back(g, a, idx, dim):
    """The gradient of picking ``idx`` along ``dim``: g put back at the picked places, 0
    elsewhere (PyTorch's value_selecting_reduction_backward and sort's/topk's backward)."""
    return on_parts(_scatter, g, np.shape(primal(a)), idx, dim)


STL_SORT_MAX = 100_000  # rows longer than this with ties: numpy's stable order (slow in Python)


def sort_order(a, dim=-1, descending=False, stable=False):
    """sort's indices: stable=True keeps ties in place; the default is ATen's std::sort (an
    introsort: stable up to 16 elements, its partitions' order past them), on (value, index)
    pairs compared by value, for a row with ties."""
    a = primal(a)
    if stable or a.ndim == 0:
        return order(a, dim, descending)
    flat, back = _rows(a, dim)
    out = np.empty(flat.shape, dtype=np.int64)
    for r, row in enumerate(flat):
        if row.size <= 16 or row.size > STL_SORT_MAX or _distinct(row):
            out[r] = order(row, 0, descending)
            continue
        pairs = list(zip(row.tolist(), range(row.size)))
        stlsort.sort(pairs, _nan_first if descending else _nan_last)
        out[r] = [j for _, j in pairs]
    return back(out)


def sort_values(a, *, dim=-1, descending=False, stable=False):
    return picked(a, sort_order(a, dim, descending, stable), dim)


def sort_vjp(g, out, a, *, dim=-1, descending=False, stable=False):
    return scatter_back(g, a, sort_order(a, dim, descending, stable), dim)


def sort_jvp(ts, out, a, *, dim=-1, descending=False, stable=False):
    return picked(_like(ts[0], a), sort_order(a, dim, descending, stable), dim)


def _rows(a, dim):
    """The 1-D rows along ``dim`` (as the last axis), and a function putting row results back."""
    moved = np.moveaxis(a, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])

    def back(out: np.ndarray) -> np.ndarray:
        return np.moveaxis(out.reshape(moved.shape[:-1] + (out.shape[-1],)), -1, dim)
    return flat, back


def _distinct(row: np.ndarray) -> bool:
    """No two elements equal (-0.0 and 0.0 are; nans are): every order of them is the same."""
    return np.unique(row).size == row.size


def _nan_first(x, y) -> bool:  # topk(largest): nan is the top, then the greater
    return (x[0] != x[0] and y[0] == y[0]) or x[0] > y[0]


def _nan_last(x, y) -> bool:
    return (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]


def _topk_row(row: np.ndarray, k: int, largest: bool, ordered: bool) -> list:
    """ATen's topk_impl_loop on one row: partial_sort when k * 64 <= n, else nth_element and
    a sort of the first k - 1, on (value, index) pairs compared by value."""
    queue = list(zip(row.tolist(), range(row.size)))
    less = _nan_first if largest else _nan_last
    if k * 64 <= row.size:
        stlsort.partial_sort(queue, k, less)
    else:
        stlsort.nth_element(queue, k - 1, less)
        if ordered:
            stlsort.sort(queue, less, 0, k - 1)
    return [j for _, j in queue[:k]]


def topk_order(a, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    """topk's indices, as ATen's CPU kernel leaves them (ties included); a row without ties
    (where every algorithm agrees) by numpy's sort."""
    a = primal(a)
    if a.ndim == 0 or k == 0:
        return order(a, dim, largest) if a.ndim == 0 else np.take(order(a, dim), [], axis=dim)
    flat, back = _rows(a, dim)
    out = np.empty((flat.shape[0], k), dtype=np.int64)
    for r, row in enumerate(flat):
        if sorted and _distinct(row):
            out[r] = order(row, 0, largest)[:k]
        else:
            out[r] = _topk_row(row, k, largest, sorted)
    return back(out)


def topk_values(a, *, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return picked(a, topk_order(a, k, dim, largest, sorted), dim)


def topk_vjp(g, out, a, *, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return scatter_back(g, a, topk_order(a, k, dim, largest, sorted), dim)


def topk_jvp(ts, out, a, *, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return picked(_like(ts[0], a), topk_order(a, k, dim, largest, sorted), dim)


# --- median and mode ---------------------------------------------------------------------------
def median_all(a):
    """The lower median of every element; nan if there is one. ATen puts it in place with
    std::nth_element on the values: equal values are the same bits, except -0.0 and 0.0,
    whose sign there is nth_element's (its steps, in stlsort, when both are present)."""
    flat = np.asarray(a).reshape(-1)
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, dtype=flat.dtype)
    mid = (flat.size - 1) // 2
    value = np.sort(flat, kind="stable")[mid]
    if flat.dtype.kind == "f" and value == 0 and (flat == 0).any():
        zeros = np.signbit(flat[flat == 0])
        if zeros.any() and not zeros.all():
            items = flat.tolist()
            stlsort.nth_element(items, mid, lambda x, y: x < y)
            value = flat.dtype.type(items[mid])
    return np.asarray(value)


def _share_mask(a, out):
    a, out = primal(a), primal(out)
    if out.dtype.kind == "f" and np.isnan(out):
        return np.isnan(a)
    return a == out


def median_all_vjp(g, out, a):
    """PyTorch's evenly_distribute_backward on the CPU: zeros, with g / count put where the
    input equals the median (the nans, when it is nan): +0.0 elsewhere, whatever g's sign."""
    mask = _share_mask(a, out)
    return np.where(mask, g / np.count_nonzero(mask), 0.0)


def median_all_jvp(ts, out, a):
    mask = _share_mask(a, out)
    return np.sum(_like(ts[0], a) * mask) / np.count_nonzero(mask)


def median_order(a, dim):
    """The index of each lower median along ``dim`` (kept as a size-1 dim); a row with a nan
    gives its first nan."""
    a = primal(a)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    n = a.shape[dim]
    idx = np.take(order(a, dim), [(n - 1) // 2], axis=dim)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        first = np.expand_dims(np.argmax(nan, axis=dim), dim)
        idx = np.where(np.expand_dims(nan.any(axis=dim), dim), first, idx)
    return idx.astype(np.int64)


def _by_value(x, y) -> bool:
    return x[0] < y[0]


def mode_order(a, dim):
    """torch.mode's index along ``dim``, as ATen's CPU kernel finds it: (value, index) pairs
    put in order by std::sort on the values, then the longest run of equal values (the first
    such run), at the index of its last pair."""
    a = primal(a)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    flat, back = _rows(a, dim)
    out = np.empty((flat.shape[0], 1), dtype=np.int64)
    for r, row in enumerate(flat):
        if _distinct(row):  # (every run is one long: the smallest value's)
            out[r, 0] = order(row, 0)[0]
            continue
        pairs = list(zip(row.tolist(), range(row.size)))
        stlsort.sort(pairs, _by_value)
        best, run, pick = 0, 0, 0
        for i, (value, j) in enumerate(pairs):
            run += 1
            if i == len(pairs) - 1 or value != pairs[i + 1][0]:
                if run > best:
                    best, pick = run, j
                run = 0
        out[r, 0] = pick
    return back(out)


def _finder(name):
    return {"median": median_order, "mode": mode_order}[name]


def _squeeze(x, dim, keepdim):
    return x if keepdim or np.ndim(x) == 0 else np.squeeze(x, dim)


def chosen_index(a, *, how, dim, keepdim=False):
    """median(dim)'s and mode's indices (int64)."""
    return _squeeze(_finder(how)(a, dim), dim, keepdim)


def chosen(a, *, how, dim, keepdim=False):
    return _squeeze(picked(a, _finder(how)(a, dim), dim), dim, keepdim)


def chosen_vjp(g, out, a, *, how, dim, keepdim=False):
    idx = _finder(how)(a, dim)
    if np.ndim(idx) and not keepdim:
        g = on_parts(np.expand_dims, g, dim)
    return scatter_back(g, a, idx, dim)


def chosen_jvp(ts, out, a, *, how, dim, keepdim=False):
    return _squeeze(picked(_like(ts[0], a), _finder(how)(a, dim), dim), dim, keepdim)


def share_vjp(g, out, a, dim=None, keepdim=False):
    """aminmax's rule, PyTorch's scale_grad_by_count: (g / count) * mask, the elements equal
    to the result sharing it (in that order of operations, for the same last bit)."""
    mask = primal(a) == kept_value(primal(out), np.shape(primal(a)), dim, keepdim)
    n = np.sum(mask, axis=dim, keepdims=True)
    return (expand(g, np.shape(mask), dim, keepdim) / n) * mask


def share_jvp(ts, out, a, dim=None, keepdim=False):
    mask = a == kept_value(out, np.shape(a), dim, keepdim)
    t = np.broadcast_to(ts[0], np.shape(a))
    return np.sum(t * (mask / np.sum(mask, axis=dim, keepdims=True)), axis=dim,
                  keepdims=keepdim)
