"""Kernels of the shape rows (ddx/ops/rows_shape.py): forwards, VJP rules and emit functions,
and PyTorch's layout rules (strides, contiguity, when reshape is a view) that decide which
rows a reshape or a matmul records, as PyTorch decides which nodes it records.

A VJP rule may be handed a dual number (the Hessian, ddx/engine/hessian.py) or a symbolic value
(the explain view). Linear maps numpy gives dual numbers no derivative for (flip, roll, a
scatter) go through ``on_parts``: a linear map applied to a dual number is the map applied to
its value and to its tangent."""

from __future__ import annotations

import numpy as np

from .kernels_sum import reorder, torch_sum


def on_parts(fn, x, *args, **kw):
    """``fn(x, ...)`` for a linear ``fn``: on an array, or on both parts of a dual number."""
    if isinstance(x, (np.ndarray, np.generic, float, int)):
        return fn(np.asarray(x), *args, **kw)
    if hasattr(x, "p") and hasattr(x, "t"):  # a dual number: (value, tangent)
        return type(x)(fn(np.asarray(x.p), *args, **kw), fn(np.asarray(x.t), *args, **kw))
    return refuse(x)


def refuse(x):
    """A value that is neither an array nor a dual number (a symbolic one, for a formula):
    its own numpy protocol refuses np.take, which no formula writes, in its own words."""
    np.take(x, 0)
    raise TypeError(f"no formula for this map of {type(x).__name__}")


# --- PyTorch's layout: strides in elements, contiguity, views -------------------------------

def strides_of(a) -> tuple[int, ...]:
    a = np.asarray(a)
    size = a.itemsize or 1
    return tuple(s // size for s in a.strides)


def is_contiguous(a, strides: tuple | None = None) -> bool:
    """PyTorch's is_contiguous(): dims of size 1 do not count, nor does an empty tensor."""
    a = np.asarray(a)
    return dense_in_order(a.shape, strides or strides_of(a))


def dense_in_order(shape: tuple, strides: tuple) -> bool:
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def can_view(a, newshape: tuple[int, ...], strides: tuple | None = None) -> bool:
    """Whether PyTorch's view(newshape) works on ``a`` (its computeStride succeeds)."""
    a = np.asarray(a)
    old, stride = a.shape, strides or strides_of(a)
    if not old or a.size == 0:
        return True
    view_d = len(newshape) - 1
    base = stride[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and stride[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                base = stride[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


def iter_strides(operands: list, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides PyTorch's TensorIterator gives an elementwise op's result, from its
    operands' (shape, strides): contiguous if they all are, else their dims ordered as the
    first operand with a preference orders them (reorder_dimensions). numpy's ufuncs keep an
    input's layout too, but where the inputs' layouts differ they fall back to C order."""
    nd = len(shape)
    if all(dense_in_order(tuple(s), tuple(st)) for s, st in operands):
        return _dense(shape, list(range(nd - 1, -1, -1)))
    ops = []
    for s, st in operands:
        off = nd - len(s)
        ops.append([0] * off + [0 if s[i] == 1 and shape[off + i] != 1 else st[i]
                                for i in range(len(s))])

    def should_swap(d0: int, d1: int) -> int:
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return _dense(shape, reorder(nd, should_swap))


def _dense(shape, perm) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for d in perm:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...] | str:
    """PyTorch's infer_size: the shape with its -1 filled in, or the error text."""
    known, infer = 1, None
    for i, n in enumerate(shape):
        if n == -1:
            if infer is not None:
                return "only one dimension can be inferred"
            infer = i
        elif n >= 0:
            known *= n
        else:
            return f"invalid shape dimension {n}"
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return tuple(shape)
        if known == 0:
            return (f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous")
        return tuple(numel // known if i == infer else n for i, n in enumerate(shape))
    return f"shape '{list(shape)}' is invalid for input of size {numel}"


# --- forwards and rules -----------------------------------------------------------------------

def expanded(a, *, shape):
    """A view with stride 0 along the new dims, as PyTorch's expand; writable where its input
    is (np.broadcast_to's views are read-only, and x.expand(2, 3).zero_() is allowed)."""
    a = np.asarray(a)
    v = np.broadcast_to(a, shape)
    return np.lib.stride_tricks.as_strided(a, shape=v.shape, strides=v.strides)


def reshaped(a, *, shape):
    return np.reshape(a, shape)


def back_to_shape(g, o, a, **kw):
    return np.reshape(g, np.shape(a))


def clone(a, *, contiguous=False):
    return np.ascontiguousarray(a).copy() if contiguous else np.array(a, copy=True, order="K")


def swapped(a, *, dim0=0, dim1=1):
    return np.swapaxes(a, dim0, dim1) if np.ndim(a) >= 2 else a


def swap_back(g, o, a, *, dim0=0, dim1=1):
    n = np.ndim(g)
    if n < 2:
        return g
    perm = list(range(n))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return np.transpose(g, perm)


def permuted(a, *, dims):
    return np.transpose(a, dims) if dims else a


def permute_back(g, o, a, *, dims):
    return np.transpose(g, tuple(int(i) for i in np.argsort(dims))) if dims else g


def squeezed(a, *, dim=None, dims=None, inplace=None):
    axes = dims if dims is not None else (dim,) if dim is not None else inplace
    if axes is None:
        return np.squeeze(a)
    axes = tuple(d for d in (axes if isinstance(axes, tuple) else (axes,))
                 if np.ndim(a) and np.shape(a)[d] == 1)
    return np.squeeze(a, axis=axes) if axes else a


def repeated(a, *, sizes):
    a = np.reshape(a, (1,) * (len(sizes) - np.ndim(a)) + np.shape(a))
    return np.tile(a, sizes)


def repeat_back(g, o, a, *, sizes):
    """PyTorch's repeat_backward: new leading dims summed one by one, then the repeats at once."""
    extra = len(sizes) - np.ndim(a)
    for _ in range(extra):
        g = torch_sum(g, (0,))
    split, dims = [], []
    for r, n in zip(sizes[extra:], np.shape(a)):
        dims += [len(split)] if r != 1 else []
        split += [r, n] if r != 1 else [n]
    if dims:
        g = torch_sum(np.reshape(g, tuple(split)), tuple(dims))
    return np.reshape(g, np.shape(a))


def narrowed(a, *, dim, start, stop, **kw):
    return a[(slice(None),) * dim + (slice(start, stop),)]


def narrow_back(g, o, a, *, dim, start, stop, keep=True, **kw):
    grad = np.zeros_like(g, shape=np.shape(a))
    grad[(slice(None),) * dim + (slice(start, stop) if keep else start,)] = g
    return grad


def concatenated(*xs, dim=0):
    return np.concatenate(xs, axis=dim)


def cat_part(i: int):
    """The VJP of cat's input i: its slice of the gradient (legacy empty inputs get none)."""
    def vjp(g, o, *xs, dim=0):
        if np.shape(xs[i]) == (0,) and np.ndim(o) != 1:
            return np.zeros(0)
        start = sum(np.shape(x)[dim] for x in xs[:i] if not (np.shape(x) == (0,)
                                                             and np.ndim(o) != 1))
        return g[(slice(None),) * dim + (slice(start, start + np.shape(xs[i])[dim]),)]
    return vjp


def cat_jvp(ts, o, *xs, dim=0):
    parts = [np.zeros(np.shape(x)) if t is None else np.broadcast_to(t, np.shape(x))
             for t, x in zip(ts, xs)]
    return concatenated(*[p for p, x in zip(parts, xs) if not (np.shape(x) == (0,)
                                                               and np.ndim(o) != 1)], dim=dim)


def stacked(*xs, dim=0):
    return np.stack(xs, axis=dim)


def stack_part(i: int):
    def vjp(g, o, *xs, dim=0):
        return g[(slice(None),) * dim + (i,)]
    return vjp


def stack_jvp(ts, o, *xs, dim=0):
    return np.stack([np.zeros(np.shape(x)) if t is None else np.broadcast_to(t, np.shape(x))
                     for t, x in zip(ts, xs)], axis=dim)


def flipped(a, *, dims):
    return np.flip(a, axis=dims)


def flip_back(g, o, a, *, dims):
    return on_parts(np.flip, g, axis=dims)


def rolled(a, *, shifts, dims):
    if not dims:
        return np.reshape(np.roll(np.reshape(a, -1), shifts[0]), np.shape(a))
    return np.ascontiguousarray(np.roll(a, shifts, axis=dims))  # (PyTorch's is contiguous)


def roll_back(g, o, a, *, shifts, dims):
    return on_parts(rolled, g, shifts=tuple(-s for s in shifts), dims=dims)


def gathered(a, *, dim, index):
    return np.take_along_axis(a, np.asarray(index, dtype=np.intp), axis=dim)


def _scatter_add_along(g, shape, dim, index):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    idx = np.asarray(index, dtype=np.intp)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    np.add.at(out, tuple(grid), g)
    return out


def gather_back(g, o, a, *, dim, index):
    return on_parts(_scatter_add_along, g, np.shape(a), dim, index)


def index_selected(a, *, dim, index):
    return np.take(a, np.asarray(index, dtype=np.intp), axis=dim)


def _index_add(g, shape, dim, index):
    out = np.zeros(shape, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, np.asarray(index, dtype=np.intp), np.moveaxis(g, dim, 0))
    return out


def index_select_back(g, o, a, *, dim, index):
    return on_parts(_index_add, g, np.shape(a), dim, index)


def tri_mask(shape, k: int, lower: bool):
    rows, cols = shape[-2], shape[-1]
    m = np.tri(rows, cols, k, dtype=bool)
    return m if lower else ~np.tri(rows, cols, k - 1, dtype=bool)


def tril(a, *, diagonal=0):
    return np.where(tri_mask(np.shape(a), diagonal, True), a, 0.0).astype(np.asarray(a).dtype)


def triu(a, *, diagonal=0):
    return np.where(tri_mask(np.shape(a), diagonal, False), a, 0.0).astype(np.asarray(a).dtype)


def tril_back(g, o, a, *, diagonal=0):
    return np.where(tri_mask(np.shape(a), diagonal, True), g, 0.0)


def triu_back(g, o, a, *, diagonal=0):
    return np.where(tri_mask(np.shape(a), diagonal, False), g, 0.0)


def masked_filled(a, *, mask, value=0.0):
    out = np.where(mask, value, a)
    return out.astype(np.asarray(a).dtype) if np.asarray(a).dtype.kind == "f" else out


def masked_fill_back(g, o, a, *, mask, value=0.0):
    return np.where(mask, 0.0, g)


def masked_filled_by(a, value, *, mask):
    return masked_filled(a, mask=mask, value=value)


# --- emitted code -------------------------------------------------------------------------------

def emit_squeeze(args, t, lib):
    kw = t.kw
    axes = kw.get("dims", kw.get("dim", kw.get("inplace")))
    if lib == "torch":
        if "inplace" in kw:
            return f"{args[0]}.squeeze_({axes})"
        return f"{args[0]}.squeeze()" if axes is None else f"{args[0]}.squeeze({axes!r})"
    if axes is None:
        return f"jnp.squeeze({args[0]})"
    axes = axes if isinstance(axes, tuple) else (axes,)
    real = tuple(d for d in axes if t.inputs[0].value.shape[d] == 1)
    return f"jnp.squeeze({args[0]}, {real!r})" if real else args[0]


def emit_cat(torch_name: str, jax_name: str):
    def emit(args, t, lib):
        dim = t.kw.get("dim", 0)
        if lib == "torch":
            return f"torch.{torch_name}([{', '.join(args)}], dim={dim})"
        keep = [a for a, s in zip(args, t.inputs) if not (s.value.shape == (0,)
                                                         and t.value.ndim != 1)]
        return f"jnp.{jax_name}([{', '.join(keep)}], axis={dim})"
    return emit


def emit_narrow(args, t, lib):
    kw = t.kw
    if lib == "torch":
        how = kw.get("sizes", kw.get("size"))
        return f"torch.split({args[0]}, {list(how) if isinstance(how, tuple) else how}, " \
               f"{kw['dim']})[{kw['index']}]"
    return f"jax.lax.slice_in_dim({args[0]}, {kw['start']}, {kw['stop']}, axis={kw['dim']})"


def emit_repeat(args, t, lib):
    sizes = t.kw["sizes"]
    shape = (1,) * (len(sizes) - t.inputs[0].value.ndim) + t.inputs[0].value.shape
    return f"jnp.tile(jnp.reshape({args[0]}, {shape!r}), {sizes!r})"


def emit_clone(args, t, lib):
    if lib == "jax":
        return f"jnp.array({args[0]})"
    return f"{args[0]}.clone(memory_format=torch.contiguous_format)" if t.kw.get("contiguous") \
        else f"{args[0]}.clone()"
