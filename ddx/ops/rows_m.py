"""Round 7's rows (issue 15: the functions of PyTorch's _torch_docs.py examples), one op(...)
call per op (see ddx/ops/table.py for a row's fields): addcmul and addcdiv (ATen's
``self + value * t1 * t2`` and ``self + value * t1 / t2``, in that order), copysign (its
gradient ``grad * result / self``, 0 where self is 0, as derivatives.yaml has it; other gets
zeros), fmax/fmin (the nan-ignoring maximum: the gradient goes to the input chosen), and the
indexing rows of indexing_m.py: masked_select, masked_scatter, index_fill, index_copy, put,
scatter_add; addmv (torch.mv plus the bias) and addr (ATen's
fused rows). Their callers are in ddx/graph/calls_m3.py."""

from __future__ import annotations

import math

import numpy as np

from . import kernels_gemm as gemm
from .indexing_m import (
    index_copied,
    index_copy_back_self,
    index_copy_back_src,
    index_copy_jvp,
    index_fill_back,
    index_fill_jvp,
    index_filled,
    jax_grid,
    jax_index,
    masked_scatter_back_self,
    masked_scatter_back_src,
    masked_scatter_jvp,
    masked_scattered,
    masked_select_back,
    masked_select_jvp,
    masked_selected,
    put_back_self,
    put_back_src,
    put_into,
    put_jvp,
    scatter_add_back_src,
    scatter_add_jvp,
    scatter_added,
)
from .rng_math import fma32, fma64
from .table import op

_T = ("torch", "Tensor")


def _floats(*xs) -> np.dtype | None:
    """The one float dtype of plain arrays (None for dual numbers, symbols, mixed dtypes)."""
    kinds = {x.dtype for x in xs if isinstance(x, (np.ndarray, np.generic))}
    if len(kinds) == 1 and all(isinstance(x, (np.ndarray, np.generic)) for x in xs):
        dtype = kinds.pop()
        return dtype if dtype in (np.float32, np.float64) else None
    return None


def _fma(dtype, a, b, c):
    """a * b + c rounded once; an exact zero takes the sign a plain a * b + c gives it (which
    is then exact too: fma64's emulation returned +0 for -0 * 1 + -0)."""
    out = np.asarray((fma32 if dtype == np.float32 else fma64)(a, b, c), dtype=dtype)
    zero = out == 0
    if zero.any():
        out = np.where(zero, (np.asarray(a, dtype) * np.asarray(b, dtype) + np.asarray(c, dtype)),
                       out).astype(dtype)
    return out


def _addcmul(a, t1, t2, *, value=1.0):
    """ATen's vector loop: fmadd(value * t1, t2, self), one rounding for the multiply-add."""
    dtype = _floats(a, t1, t2)
    if dtype is None:
        return a + value * t1 * t2
    a, t1, t2 = np.broadcast_arrays(a, t1, t2)
    return _fma(dtype, t1 * dtype.type(value), t2, a)


def _addcdiv(a, t1, t2, *, value=1.0):
    dtype = _floats(a, t1, t2)
    if dtype is None:
        return a + value * t1 / t2
    return a + dtype.type(value) * t1 / t2


op("addcmul", "AddcmulBackward0", _addcmul, lambda g, o, a, b, c, *, value=1.0: g,
   lambda g, o, a, b, c, *, value=1.0: g * value * c,
   lambda g, o, a, b, c, *, value=1.0: g * value * b,
   reads="i", shown="addcmul", symbol="addcmul", spaces=_T,
   emit={"torch": "torch.addcmul({0}, {1}, {2}, value={value!r})",
         "jax": "({0} + {value!r} * {1} * {2})"},
   example=("addcmul(x, y, x, value=0.5)", {}))
op("addcdiv", "AddcdivBackward0", _addcdiv, lambda g, o, a, b, c, *, value=1.0: g,
   lambda g, o, a, b, c, *, value=1.0: g * value / c,
   lambda g, o, a, b, c, *, value=1.0: -g * value * b / (c * c),
   reads="i", shown="addcdiv", symbol="addcdiv", spaces=_T,
   emit={"torch": "torch.addcdiv({0}, {1}, {2}, value={value!r})",
         "jax": "({0} + {value!r} * {1} / {2})"},
   example=("addcdiv(x, y, exp(x), value=0.5)", {}))


def _copysign_vjp(g, o, a, *args, **kw):
    """derivatives.yaml's copysign_tensor_self_backward: grad * (result / self), 0 where self
    is 0 (so the Hessian there is nan, as PyTorch's backward of the 0/0 makes it)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return g * np.where(a == 0, 0.0, o / a)


def _copysign_by_number(g, a, other):
    """The same for a plain number: result / self is sign(other) * |self| / self."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return g * (np.where(a == 0, 0.0, np.abs(a) / a) * math.copysign(1.0, other))


op("copysign", "CopysignBackward0", np.copysign, _copysign_vjp,
   lambda g, o, a, b: g * 0.0 + 0.0,  # (zeros_like(other): +0, also where g < 0)
   call="binary", spaces=_T,
   emit={"torch": "torch.copysign({0}, {1})", "jax": "jnp.copysign({0}, {1})"},
   kink=(lambda a, b: np.asarray(a) == 0, "at 0 PyTorch's gradient is 0"),
   example=("copysign(x, y)", {}))
op("copysign_scalar", "CopysignBackward1", lambda a, *, other: np.copysign(a, other),
   lambda g, o, a, *, other: _copysign_by_number(g, a, other), reads="i", shown="copysign",
   symbol="copysign", elementwise=False,
   emit={"torch": "torch.copysign({0}, {other!r})", "jax": "jnp.copysign({0}, {other!r})"},
   example=("copysign(x, -1.0)", {}))


def _fmax_vjp(first: bool, largest: bool):
    def vjp(g, o, a, b):
        mine, other = (a, b) if first else (b, a)
        if first:  # self keeps where self >= other (<= for fmin) or other is nan
            keep = ((mine >= other) if largest else (mine <= other)) | np.isnan(other)
        else:
            keep = ~(((other >= mine) if largest else (other <= mine)) | np.isnan(mine))
        return np.where(keep, g, 0.0)
    return vjp


for _name, _fn, _largest in (("fmax", np.fmax, True), ("fmin", np.fmin, False)):
    op(_name, f"F{_name[1:]}Backward0", _fn, _fmax_vjp(True, _largest),
       _fmax_vjp(False, _largest), call="binary", spaces=_T,
       emit={"torch": f"torch.{_name}({{0}}, {{1}})", "jax": f"jnp.{_name}({{0}}, {{1}})"},
       example=(f"{_name}(x, y)", {}))

_IDX = dict(saves=False, elementwise=False, reads="", spaces=())

op("masked_select", "MaskedSelectBackward0", masked_selected, masked_select_back,
   jvp=masked_select_jvp, **_IDX,
   emit={"torch": "torch.masked_select({0}, torch.tensor({mask!r}))",
         "jax": "{0}[jnp.array({mask!r})]"},
   example=("masked_select(x, x > 0.2)", {"x": (2, 3)}))
op("masked_scatter", "MaskedScatterBackward0", masked_scattered, masked_scatter_back_self,
   masked_scatter_back_src, jvp=masked_scatter_jvp, **_IDX,
   emit={"torch": "torch.masked_scatter({0}, torch.tensor({mask!r}), {1})",
         "jax": lambda args, t, lib: (
             f"{args[0]}.at[jnp.array({t.kw['mask']!r})].set(jnp.ravel({args[1]})"
             f"[:{int(np.count_nonzero(np.broadcast_to(t.kw['mask'], t.value.shape)))}])")},
   example=("masked_scatter(x, x > 0.2, y)", {"x": (2, 3), "y": (2, 3)}))
op("index_fill", "IndexFillBackward0", index_filled, index_fill_back, jvp=index_fill_jvp,
   **_IDX,
   emit={"torch": "torch.index_fill({0}, {dim}, torch.tensor({index!r}), {value!r})",
         "jax": lambda args, t, lib: (f"{args[0]}.at[{jax_index(t.kw['dim'], t.kw['index'])}]"
                                      f".set({t.kw['value']!r})")},
   example=("index_fill(x, 1, [0, 2], -1.0)", {"x": (2, 3)}))
op("index_copy", "IndexCopyBackward0", index_copied, index_copy_back_self, index_copy_back_src,
   jvp=index_copy_jvp, **_IDX,
   emit={"torch": "torch.index_copy({0}, {dim}, torch.tensor({index!r}), {1})",
         "jax": lambda args, t, lib: (f"{args[0]}.at[{jax_index(t.kw['dim'], t.kw['index'])}]"
                                      f".set({args[1]})")},
   example=("index_copy(x, 0, [2, 0], y)", {"x": (3, 2), "y": (2, 2)}))
op("put", "PutBackward0", put_into, put_back_self, put_back_src, jvp=put_jvp, **_IDX,
   emit={"torch": "torch.put({0}, torch.tensor({index!r}), {1}, {accumulate!r})",
         "jax": lambda args, t, lib: (
             f"jnp.ravel({args[0]}).at[jnp.array({t.kw['index']!r})]"
             f".{'add' if t.kw.get('accumulate') else 'set'}(jnp.ravel({args[1]}))"
             f".reshape({tuple(t.value.shape)!r})")},
   example=("put(x, [1, 4], y)", {"x": (2, 3), "y": (2,)}))
op("scatter_add", "ScatterAddBackward0", scatter_added, lambda g, o, a, s, *, dim, index: g,
   scatter_add_back_src, jvp=scatter_add_jvp, **_IDX,
   emit={"torch": "torch.scatter_add({0}, {dim}, torch.tensor({index!r}), {1})",
         "jax": lambda args, t, lib: (
             f"{args[0]}.at[{jax_grid(t.kw['dim'], t.kw['index'])}].add({args[1]}"
             f"[{', '.join(f':{n}' for n in np.shape(t.kw['index']))}])")},
   example=("scatter_add(x, 0, [[0, 1, 0], [1, 1, 0]], y)", {"x": (2, 3), "y": (2, 3)}))


# --- addmv, addr: the matrix family's bias forms --------------------------------------------
def _addmv(s, m, v):
    """s + mat @ vec: addmv_out_cpu copies the bias and gemv adds into it, which gives the
    bits of torch.mv plus the bias (measured on 1,158 sums of 7 shapes, float32 and float64)."""
    return s + gemm.mv(m, v)


def _addmv_jvp(ts, o, s, m, v):
    parts = [ts[0] if ts[0] is not None else None,
             np.matmul(ts[1], v) if ts[1] is not None else None,
             np.matmul(m, ts[2]) if ts[2] is not None else None]
    out = 0.0
    for p in parts:
        if p is not None:
            out = out + p
    return np.broadcast_to(out, np.shape(o)) if not isinstance(out, float) else np.zeros(
        np.shape(o))


def _addr(s, v1, v2):
    """ATen's addr_kernel (beta = alpha = 1): along each row, blocks of two vectors
    (16 float32, 8 float64 elements) are one fused multiply-add, self + v1[i] * v2[j]; the
    rest of the row is the plain product then the add. A row of one column is one row."""
    v1, v2 = np.asarray(v1), np.asarray(v2)
    dtype = _floats(np.asarray(s), v1, v2)
    shape = (v1.shape[0], v2.shape[0])
    a, b = np.broadcast_to(v1[:, None], shape), np.broadcast_to(v2[None, :], shape)
    base = np.broadcast_to(s, shape)
    out = np.asarray(base + a * b)
    if dtype is None or out.dtype != dtype or out.size == 0:
        return out
    width = 2 * (32 // dtype.itemsize)
    if shape[1] == 1:  # (one column: TensorIterator runs along the rows)
        base, a, b, out = (x.reshape(1, -1) for x in (base, a, b, np.array(out)))
    k = (out.shape[1] // width) * width
    if k:
        out = np.array(out)
        out[:, :k] = _fma(dtype, a[:, :k], b[:, :k], base[:, :k])
    return out.reshape(shape)


def _addr_jvp(ts, o, s, v1, v2):
    out = np.zeros(np.shape(o))
    if ts[0] is not None:
        out = out + ts[0]
    if ts[1] is not None:
        out = out + np.outer(ts[1], v2)
    if ts[2] is not None:
        out = out + np.outer(v1, ts[2])
    return out


op("addmv", "AddmvBackward0", _addmv, lambda g, o, s, m, v: g,
   lambda g, o, s, m, v: np.outer(g, v), lambda g, o, s, m, v: gemm.mv(np.transpose(m), g),
   jvp=_addmv_jvp, elementwise=False, spaces=(),
   emit={"torch": "torch.addmv({0}, {1}, {2})", "jax": "({0} + {1} @ {2})"},
   example=("addmv(sum(x, 1), x, y)", {"x": (2, 3), "y": (3,)}))
op("addr", "AddrBackward0", _addr, lambda g, o, s, a, b: g,
   lambda g, o, s, a, b: gemm.mv(g, b), lambda g, o, s, a, b: gemm.mv(np.transpose(g), a),
   jvp=_addr_jvp, elementwise=False, spaces=(),
   emit={"torch": "torch.addr({0}, {1}, {2})", "jax": "({0} + jnp.outer({1}, {2}))"},
   example=("addr(x, sum(x, 1), y)", {"x": (2, 3), "y": (3,)}))


# --- ldexp: self * 2 ** other ------------------------------------------------------------------
def _ldexp(a, *, other):
    """ATen's ldexp: mul(self, pow(2.0, other)), the power in self's float dtype."""
    dtype = np.asarray(a).dtype if np.asarray(a).dtype.kind == "f" else np.float64
    return a * np.power(dtype.type(2.0), np.asarray(other, dtype=dtype))


def _ldexp_back(g, o, a, *, other):
    """derivatives.yaml's grad * pow(2, other): with an integer other that power is an
    integer one, so 2 ** -1 is 0 there, as in PyTorch."""
    e = np.asarray(other)
    if e.dtype.kind in "iub":
        scale = np.where(e < 0, 0, np.power(2, np.maximum(e, 0))).astype(np.float64)
    else:
        scale = np.power(2.0, e)
    return g * scale


op("ldexp", "LdexpBackward0", _ldexp, _ldexp_back,
   jvp=lambda ts, o, a, *, other: _ldexp_back(ts[0], o, a, other=other), elementwise=False,
   reads="", saves=False, spaces=(),
   emit={"torch": "torch.ldexp({0}, torch.tensor({other!r}))",
         "jax": "({0} * 2.0 ** jnp.array({other!r}))"},
   example=("ldexp(x, [1.0, -1.0, 2.0])", {"x": (3,)}))
