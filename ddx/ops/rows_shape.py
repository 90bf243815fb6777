"""The op table's shape rows (one op(...) call per op; see ddx/ops/table.py for a row's fields).

Each row is one node PyTorch records: reshape is a view (ViewBackward0) where PyTorch can view
and a contiguous clone then _unsafe_view (CloneBackward0, UnsafeViewBackward0) where it cannot,
so the callers (ddx/graph/calls_shape.py) record those rows in PyTorch's order."""

from __future__ import annotations

import numpy as np

from .kernels import linear
from .kernels_shape import (
    back_to_shape,
    cat_jvp,
    cat_part,
    clone,
    concatenated,
    emit_cat,
    emit_clone,
    emit_narrow,
    emit_repeat,
    emit_squeeze,
    expanded,
    flip_back,
    flipped,
    gather_back,
    gathered,
    index_select_back,
    index_selected,
    masked_fill_back,
    masked_filled,
    masked_filled_by,
    narrow_back,
    narrowed,
    permute_back,
    permuted,
    repeat_back,
    repeated,
    reshaped,
    roll_back,
    rolled,
    squeezed,
    stack_jvp,
    stack_part,
    stacked,
    tril,
    tril_back,
    triu,
    triu_back,
)
from .table import OPS, Op, op

_SHAPE = dict(saves=False, elementwise=False, reads="", call="shape")
_T = "torch"
_TENSOR = ("Tensor",)

op("view", "ViewBackward0", reshaped, back_to_shape, jvp=linear(reshaped), **_SHAPE,
   spaces=_TENSOR, emit={"torch": "{0}.view({shape!r})", "jax": "jnp.reshape({0}, {shape!r})"},
   example=("view(x, 3, 2)", {"x": (2, 3)}))
op("unsafe_view", "UnsafeViewBackward0", reshaped, back_to_shape, jvp=linear(reshaped),
   saves=False, elementwise=False, reads="", shown="reshape",
   emit={"torch": "torch.ops.aten._unsafe_view({0}, {shape!r})",
         "jax": "jnp.reshape({0}, {shape!r})"},
   example=("reshape(transpose(x, 0, 1), 6)", {"x": (2, 3)}))
op("reshape_alias", "ReshapeAliasBackward0", reshaped, back_to_shape, jvp=linear(reshaped),
   saves=False, elementwise=False, reads="", shown="reshape",
   emit={"torch": "{0}.reshape({shape!r})", "jax": "jnp.reshape({0}, {shape!r})"},
   example=("reshape(transpose(x, 0, 1), 3, 1, 2)", {"x": (2, 3)}))
op("clone", "CloneBackward0", clone, lambda g, o, a, **k: g, jvp=linear(clone), **_SHAPE,
   emit={"torch": emit_clone, "jax": emit_clone},
   example=("clone(x)", {"x": (2, 3)}))
op("unsqueeze", "UnsqueezeBackward0", lambda a, *, dim: np.expand_dims(a, dim),
   lambda g, o, a, *, dim: np.reshape(g, np.shape(a)),
   jvp=linear(lambda t, *, dim: np.expand_dims(t, dim)), **_SHAPE,
   emit={"torch": "{0}.unsqueeze({dim})", "jax": "jnp.expand_dims({0}, {dim})"},
   example=("unsqueeze(x, 1)", {"x": (2, 3)}))
# squeeze(): SqueezeBackward0; squeeze(dim): 1; squeeze((dims)): 2; in place (squeeze_, as
# matmul does it after 1-D @ 2-D): 4
op("squeeze", "SqueezeBackward0", squeezed, back_to_shape, jvp=linear(squeezed), **_SHAPE,
   variants={"inplace": "SqueezeBackward4", "dims": "SqueezeBackward2", "dim": "SqueezeBackward1"},
   emit={"torch": emit_squeeze, "jax": emit_squeeze},
   example=("squeeze(x, 1)", {"x": (2, 1, 3)}))
op("expand", "ExpandBackward0", expanded,
   lambda g, o, a, **k: g, jvp=linear(lambda t, *, shape: np.broadcast_to(t, shape)), **_SHAPE,
   spaces=_TENSOR, emit={"torch": "{0}.expand({shape!r})",
                         "jax": "jnp.broadcast_to({0}, {shape!r})"},
   example=("expand(x, 2, 3)", {"x": (3,)}))
op("repeat", "RepeatBackward0", repeated, repeat_back, jvp=linear(repeated), **_SHAPE,
   spaces=_TENSOR, emit={"torch": "{0}.repeat({sizes!r})", "jax": emit_repeat},
   example=("repeat(x, 2, 1, 2)", {"x": (2, 3)}))
op("permute", "PermuteBackward0", permuted, permute_back, jvp=linear(permuted), **_SHAPE,
   emit={"torch": "{0}.permute({dims!r})", "jax": "jnp.transpose({0}, {dims!r})"},
   example=("permute(x, 2, 0, 1)", {"x": (2, 3, 2)}))
op("flip", "FlipBackward0", flipped, flip_back, jvp=linear(flipped), **_SHAPE,
   emit={"torch": "torch.flip({0}, {dims!r})", "jax": "jnp.flip({0}, {dims!r})"},
   example=("flip(x, 0)", {"x": (2, 3)}))
op("roll", "RollBackward0", rolled, roll_back, jvp=linear(rolled), **_SHAPE,
   emit={"torch": "torch.roll({0}, {shifts!r}, {dims!r})",
         "jax": lambda args, t, lib: (f"jnp.roll({args[0]}, {t.kw['shifts']!r}, {t.kw['dims']!r})"
                                      if t.kw["dims"] else
                                      f"jnp.roll({args[0]}, {t.kw['shifts'][0]})")},
   example=("roll(x, 1, 1)", {"x": (2, 3)}))
op("gather", "GatherBackward0", gathered, gather_back, jvp=linear(gathered), **_SHAPE,
   emit={"torch": "torch.gather({0}, {dim}, torch.tensor({index!r}))",
         "jax": "jnp.take_along_axis({0}, jnp.array({index!r}), {dim})"},
   example=("gather(x, 1, [[0, 0], [2, 1]])", {"x": (2, 3)}))
op("index_select", "IndexSelectBackward0", index_selected, index_select_back,
   jvp=linear(index_selected), **_SHAPE,
   emit={"torch": "torch.index_select({0}, {dim}, torch.tensor({index!r}))",
         "jax": "jnp.take({0}, jnp.array({index!r}), {dim})"},
   example=("index_select(x, 1, [2, 0, 2])", {"x": (2, 3)}))
op("masked_fill", "MaskedFillBackward0", masked_filled, masked_fill_back,
   jvp=lambda ts, o, a, *, mask, value=0.0: np.where(mask, 0.0, ts[0]), **_SHAPE,
   emit={"torch": "torch.masked_fill({0}, torch.tensor({mask!r}), {value!r})",
         "jax": "jnp.where(jnp.array({mask!r}), {value!r}, {0})"},
   example=("masked_fill(x, x > 0.5, 0.25)", {"x": (2, 3)}))
op("masked_fill_tensor", "MaskedFillBackward1", masked_filled_by,
   lambda g, o, a, v, *, mask: np.where(mask, 0.0, g),
   lambda g, o, a, v, *, mask: np.sum(np.where(mask, g, 0.0)),
   jvp=lambda ts, o, a, v, *, mask: np.where(mask, 0.0 if ts[1] is None else ts[1],
                                             0.0 if ts[0] is None else ts[0]),
   saves=False, elementwise=False, reads="", shown="masked_fill",
   emit={"torch": "torch.masked_fill({0}, torch.tensor({mask!r}), {1})",
         "jax": "jnp.where(jnp.array({mask!r}), {1}, {0})"},
   example=("masked_fill(x, x > 0.5, sum(y))", {"x": (2, 3), "y": (2,)}))
op("unbind_part", "UnbindBackward0", lambda a, *, dim, index: a[(slice(None),) * dim + (index,)],
   lambda g, o, a, *, dim, index: narrow_back(g, o, a, dim=dim, start=index, stop=index + 1,
                                              keep=False),
   jvp=linear(lambda t, *, dim, index: t[(slice(None),) * dim + (index,)]), saves=False,
   elementwise=False, reads="", shown="unbind",
   emit={"torch": "torch.unbind({0}, {dim})[{index}]", "jax": "jnp.take({0}, {index}, {dim})"},
   example=("unbind(x, 1)[2]", {"x": (2, 3)}))
op("tril", "TrilBackward0", tril, tril_back, jvp=linear(tril), **_SHAPE,
   emit={"torch": "torch.tril({0}, {diagonal})", "jax": "jnp.tril({0}, {diagonal})"},
   example=("tril(x, -1)", {"x": (3, 3)}))
op("triu", "TriuBackward0", triu, triu_back, jvp=linear(triu), **_SHAPE,
   emit={"torch": "torch.triu({0}, {diagonal})", "jax": "jnp.triu({0}, {diagonal})"},
   example=("triu(x, 1)", {"x": (2, 3)}))
# one output of split/chunk: PyTorch's node for all of them is one SplitBackward0 (split_size)
# or SplitWithSizesBackward0 (a list of sizes); here each output is its own node of that name
op("split_part", "SplitBackward0", narrowed, narrow_back, jvp=linear(narrowed),
   saves=False, elementwise=False, reads="", shown="split", variants={"sizes":
                                                                      "SplitWithSizesBackward0"},
   emit={"torch": emit_narrow, "jax": emit_narrow},
   example=("split(x, 2, 1)[1]", {"x": (2, 3)}))


def cat_op(n: int) -> Op:
    """torch.cat of n tensors: one row per count (its VJP for input i is its slice)."""
    name = f"cat{n}"
    if name not in OPS:
        op(name, "CatBackward0", concatenated, *(cat_part(i) for i in range(n)), jvp=cat_jvp,
           saves=False, elementwise=False, reads="", shown="cat",
           emit={"torch": emit_cat("cat", "concatenate"), "jax": emit_cat("cat", "concatenate")},
           example=("cat([" + ", ".join("xy"[i % 2] for i in range(n)) + "], 1)",
                    {"x": (2, 3), "y": (2, 3)}))
    return OPS[name]


def stack_dim_op(n: int) -> Op:
    """torch.stack of n tensors of one shape along ``dim``: one row per count."""
    name = f"stack_dim{n}"
    if name not in OPS:
        op(name, "StackBackward0", stacked, *(stack_part(i) for i in range(n)), jvp=stack_jvp,
           saves=False, elementwise=False, reads="", shown="stack",
           emit={"torch": emit_cat("stack", "stack"), "jax": emit_cat("stack", "stack")},
           example=("stack([" + ", ".join("xy"[i % 2] for i in range(n)) + "], 1)",
                    {"x": (2, 3), "y": (2, 3)}))
    return OPS[name]


for _n in (1, 2, 3):  # (made on demand for other counts; these are in the table's tests)
    cat_op(_n)
    stack_dim_op(_n)
