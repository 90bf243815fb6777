"""Kernels for the rows without a gradient in ddx/ops/rows_more.py: count_nonzero, nonzero,
searchsorted, bucketize, bincount, histc, unique (its inverse and counts), and the rules the
table's tests hold them to (never run: PyTorch gives these results no grad_fn)."""

from __future__ import annotations

import numpy as np

from .kernels_more import primal


# --- tests and counts (no gradient) -------------------------------------------------------------
def count_nonzero(a, dim=None):
    return np.asarray(np.count_nonzero(a, axis=dim), dtype=np.int64)


def nonzero(a):
    if np.ndim(a) == 0:  # (a 0-d tensor: one row of no indices if it is not zero)
        return np.zeros((1 if np.asarray(a) else 0, 0), dtype=np.int64)
    return np.argwhere(np.asarray(a)).astype(np.int64).reshape(-1, max(np.ndim(a), 0))


def searchsorted(seq, values, right=False):
    """torch.searchsorted(sorted_sequence, values, right=): along the last dim of each row."""
    side = "right" if right else "left"
    seq, values = np.asarray(seq), np.asarray(values)
    if seq.ndim <= 1:
        return np.searchsorted(seq.reshape(-1), values, side=side).astype(np.int64)
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    out = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, vals)])
    return out.reshape(values.shape).astype(np.int64)


def bucketize(a, boundaries, right=False):
    return searchsorted(boundaries, a, right=right)


def _whole(a) -> np.ndarray:
    """Whole numbers (a one-liner's literals are floats) as int64."""
    a = np.asarray(a)
    return (np.rint(a) if a.dtype.kind == "f" else a).astype(np.int64).reshape(-1)


def bincount(a, minlength=0):
    return np.bincount(_whole(a),
                       minlength=minlength).astype(np.int64)


def bincount_weighted(a, w, minlength=0):
    w = np.asarray(w)
    dtype = w.dtype if w.dtype.kind == "f" else np.float64
    return np.bincount(_whole(a), weights=w.reshape(-1),
                       minlength=minlength).astype(dtype)


def histc(a, bins=100, min=0.0, max=0.0):  # noqa: A002 - PyTorch's names
    """torch.histc: ``bins`` equal bins over [min, max] (the data's range when both are 0);
    elements outside are not counted; the last bin holds max. An element's bin is
    ``int((x - min) * bins / (max - min))`` (histc's LINEAR_INTERPOLATION, without the
    local search of the edges that torch.histogram does)."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and flat.size:
        lo, hi = float(np.min(flat)), float(np.max(flat))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    t = a.dtype.type
    first, last = t(lo), t(hi)  # (the ends of linspace(min, max, bins + 1): exact)
    if not np.isfinite(last - first):  # (a range past the dtype's largest: ATen counts none)
        return np.zeros(bins, dtype=a.dtype)
    keep = flat[(flat >= first) & (flat <= last)]
    with np.errstate(all="ignore"):
        guess = (keep - first) * t(bins) / (last - first)
    pos = np.clip(np.where(np.isfinite(guess), guess, 0), 0, bins).astype(np.int64)
    pos[pos == bins] = bins - 1
    return np.bincount(pos, minlength=bins)[:bins].astype(a.dtype)


# --- unique ---------------------------------------------------------------------------------------
def _runs(a, dim):
    """The stable sort of ``a`` (flattened, or of its slices along ``dim``), and where each
    run of equal elements starts (nan is never equal to anything, as in ATen)."""
    a = np.asarray(a)
    if dim is None:
        flat = a.reshape(-1)
        idx = np.argsort(flat, kind="stable")
        s = flat[idx]
        new = np.ones(s.size, dtype=bool)
        new[1:] = s[1:] != s[:-1]
        return idx, new
    moved = np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1)
    idx = np.lexsort(moved.T[::-1]) if moved.shape[1] else np.arange(moved.shape[0])
    s = moved[idx]
    new = np.ones(s.shape[0], dtype=bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    return idx, new


def unique(a, dim=None):
    idx, new = _runs(a, dim)
    if dim is None:
        return np.asarray(a).reshape(-1)[idx[new]]
    return np.take(np.asarray(a), idx[new], axis=dim)


def unique_inverse(a, dim=None):
    idx, new = _runs(a, dim)
    inverse = np.empty(idx.size, dtype=np.int64)
    inverse[idx] = np.cumsum(new) - 1
    return inverse.reshape(np.shape(a)) if dim is None else inverse


def unique_counts(a, dim=None):
    _, new = _runs(a, dim)
    return np.diff(np.append(np.flatnonzero(new), new.size)).astype(np.int64)


def unique_vjp(g, out, a, dim=None):
    """(Never run: PyTorch's unique has no derivative.) The values' gradient as the gather it
    is, g put at the first element of each run."""
    idx, new = _runs(primal(a), dim)
    grad = np.zeros(np.size(primal(a)))
    if dim is None:
        grad[idx[new]] = np.asarray(g).reshape(-1)
    return grad.reshape(np.shape(primal(a)))


def bincount_weights_vjp(g, out, a, w, minlength=0):
    """(Never run: PyTorch's bincount has no derivative.) d out[i] / d w[j] = [a[j] == i]."""
    return np.asarray(g)[np.clip(_whole(a), 0, np.size(g) - 1)]


def unique_jvp(ts, out, a, dim=None):
    idx, new = _runs(primal(a), dim)
    if dim is not None:
        return np.zeros(np.shape(out))
    return np.broadcast_to(ts[0], np.shape(a)).reshape(-1)[idx[new]]


def bincount_jvp(ts, out, a, w, minlength=0):
    if len(ts) < 2 or ts[1] is None:
        return np.zeros(np.shape(out))
    return bincount_weighted(a, np.broadcast_to(ts[1], np.shape(w)), minlength)
