"""Forwards and rules of round 7's indexing rows (ddx/ops/rows_m.py): masked_select,
masked_scatter, index_fill, index_copy, put, scatter_add. Each is linear in its tensor
inputs, so a rule is the same function applied to the gradient (on_parts: both parts of a
dual number), and a JVP the forward applied to the tangents. ATen's CPU loops write (or add)
in the index's order; numpy's fancy assignment and np.add.at do too."""

from __future__ import annotations

import numpy as np

from .kernels_shape import on_parts


def _zero_or(t, shape):
    return np.zeros(shape) if t is None else np.broadcast_to(t, shape)


def _moved(out, dim):
    return np.moveaxis(out, dim, 0) if out.ndim else out.reshape(1)


# --- masked_select: the elements where mask is True, as a 1-D tensor ---------------------------
def masked_selected(a, *, mask):
    return np.asarray(a)[np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(a))]


def _unselect(g, shape, mask):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    out[np.broadcast_to(np.asarray(mask, dtype=bool), shape)] = g
    return out


def masked_select_back(g, o, a, *, mask):
    return on_parts(_unselect, g, np.shape(a), mask)


def masked_select_jvp(ts, o, a, *, mask):
    return masked_selected(_zero_or(ts[0], np.shape(a)), mask=mask)


# --- masked_scatter: source's leading elements written where mask is True ---------------------
def _count(a, mask):
    return int(np.count_nonzero(np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(a))))


def masked_scattered(a, src, *, mask):
    out = np.array(a, copy=True)
    m = np.broadcast_to(np.asarray(mask, dtype=bool), out.shape)
    out[m] = np.ravel(src)[:_count(a, mask)]
    return out


def _masked_zero(g, mask):
    out = np.array(g, copy=True)
    out[np.broadcast_to(np.asarray(mask, dtype=bool), out.shape)] = 0
    return out


def masked_scatter_back_self(g, o, a, src, *, mask):
    return on_parts(_masked_zero, g, mask)


def _to_source(g, shape, mask):
    out = np.zeros(int(np.prod(shape)), dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    picked = g[np.broadcast_to(np.asarray(mask, dtype=bool), g.shape)]
    out[:picked.size] = picked
    return out.reshape(shape)


def masked_scatter_back_src(g, o, a, src, *, mask):
    return on_parts(_to_source, g, np.shape(src), mask)


def masked_scatter_jvp(ts, o, a, src, *, mask):
    return masked_scattered(_zero_or(ts[0], np.shape(a)), _zero_or(ts[1], np.shape(src)),
                            mask=mask)


# --- index_fill / index_copy: slices along dim, at index, filled or copied from source --------
def index_filled(a, *, dim, index, value):
    out = np.array(a, copy=True)
    _moved(out, dim)[np.asarray(index, dtype=np.intp)] = value
    return out


def _index_zero(g, dim, index):
    out = np.array(g, copy=True)
    _moved(out, dim)[np.asarray(index, dtype=np.intp)] = 0
    return out


def index_fill_back(g, o, a, *, dim, index, value):
    return on_parts(_index_zero, g, dim, index)


def index_fill_jvp(ts, o, a, *, dim, index, value):
    return index_filled(_zero_or(ts[0], np.shape(a)), dim=dim, index=index, value=0.0)


def index_copied(a, src, *, dim, index):
    out = np.array(a, copy=True)
    moved = _moved(out, dim)
    s = np.asarray(src)
    moved[np.asarray(index, dtype=np.intp)] = _moved(s, dim) if s.ndim else s
    return out


def index_copy_back_self(g, o, a, src, *, dim, index):
    return on_parts(_index_zero, g, dim, index)


def _index_take(g, shape, dim, index):
    if not g.ndim:
        return np.reshape(g, shape)
    return np.take(g, np.asarray(index, dtype=np.intp), axis=dim).reshape(shape)


def index_copy_back_src(g, o, a, src, *, dim, index):
    return on_parts(_index_take, g, np.shape(src), dim, index)


def index_copy_jvp(ts, o, a, src, *, dim, index):
    return index_copied(_zero_or(ts[0], np.shape(a)), _zero_or(ts[1], np.shape(src)), dim=dim,
                        index=index)


# --- put: source written (or added) at flat positions -----------------------------------------
def _flat(index, size):
    idx = np.asarray(index, dtype=np.intp).reshape(-1)
    return np.where(idx < 0, idx + size, idx)


def put_into(a, src, *, index, accumulate=False):
    out = np.array(a, copy=True)
    flat = out.reshape(-1)
    idx = _flat(index, flat.size)
    if accumulate:
        np.add.at(flat, idx, np.ravel(src))
    else:
        flat[idx] = np.ravel(src)
    return flat.reshape(out.shape)


def _put_zero(g, index):
    out = np.array(g, copy=True)
    out.reshape(-1)[_flat(index, out.size)] = 0
    return out


def put_back_self(g, o, a, src, *, index, accumulate=False):
    return g if accumulate else on_parts(_put_zero, g, index)


def _put_take(g, shape, index):
    return np.ravel(g)[_flat(index, np.size(g))].reshape(shape)


def put_back_src(g, o, a, src, *, index, accumulate=False):
    return on_parts(_put_take, g, np.shape(src), index)


def put_jvp(ts, o, a, src, *, index, accumulate=False):
    return put_into(_zero_or(ts[0], np.shape(a)), _zero_or(ts[1], np.shape(src)), index=index,
                    accumulate=accumulate)


# --- scatter_add: src's leading part added at index along dim ---------------------------------
def _grid(index, dim):
    idx = np.asarray(index, dtype=np.intp)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return tuple(grid)


def scatter_added(a, src, *, dim, index):
    out = np.array(a, copy=True)
    idx = np.asarray(index)
    if idx.size:
        part = np.asarray(src)[tuple(slice(0, n) for n in idx.shape)]
        np.add.at(out, _grid(index, dim), part)
    return out


def _gather_into(g, shape, dim, index):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    if np.size(index):
        out[tuple(slice(0, n) for n in np.shape(index))] = g[_grid(index, dim)]
    return out


def scatter_add_back_src(g, o, a, src, *, dim, index):
    return on_parts(_gather_into, g, np.shape(src), dim, index)


def scatter_add_jvp(ts, o, a, src, *, dim, index):
    return scatter_added(_zero_or(ts[0], np.shape(a)), _zero_or(ts[1], np.shape(src)), dim=dim,
                         index=index)


# --- JAX's spelling of each, for --emit jax ----------------------------------------------------
def jax_index(dim: int, index) -> str:
    return ":, " * dim + f"jnp.array({list(np.asarray(index).reshape(-1).tolist())!r})"


def jax_grid(dim: int, index) -> str:
    idx = np.asarray(index)
    grid = [f"jnp.arange({n}).reshape({tuple(-1 if i == d else 1 for i in range(idx.ndim))})"
            for d, n in enumerate(idx.shape)]
    grid[dim] = f"jnp.array({idx.tolist()!r})"
    return ", ".join(grid)
