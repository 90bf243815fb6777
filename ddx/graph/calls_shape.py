"""Callers for the op table's shape rows (see ddx/graph/args.py for what a caller is).

Tables read by ddx/graph/functions.py: KINDS (a new Op.call kind -> factory(row name) ->
caller), CALLERS (row name -> its own caller), NAMED (a function that is not one row ->
caller) and NAMED_SPACES (such a function's namespaces: "torch", "Tensor", "F", "linalg").

reshape, flatten and contiguous record what PyTorch records: a view where the layout allows
one (ViewBackward0, or ReshapeAliasBackward0 for a non-contiguous input), else a contiguous
clone and an _unsafe_view; the layout is numpy's, which follows PyTorch's strides."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from ..limits import check_elements
from ..ops import OPS
from ..ops.kernels_shape import can_view, infer_shape, is_contiguous, iter_strides, strides_of
from ..ops.rows_shape import cat_op, stack_dim_op
from .args import Evaluating, as_tensor, bind, one_dim
from .tensor import Tensor
from .values import py_type, weak

# functions whose [a, b] argument is a list of tensors, not one stacked tensor
LISTS = {"cat", "concat", "concatenate", "stack"}


def fail(node: Ast, text: str, kind=DdxRuntimeError):
    return kind(text, start=node.pos, end=node.end)


def tensor_arg(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    """A tensor argument; a plain number is a 0-d tensor of the default dtype."""
    a = as_tensor(ev, node, value)
    if a.weak:
        a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "f"
                              else a.value.dtype))
        a.const = True
    return a


def int_of(ev: Evaluating, node: Ast, value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, Tensor) and value.value.dtype.kind == "b":
        raise fail(node, "expected an integer, got a bool", DdxTypeError)
    return ev.int_arg(value, node)


def dim_of(ev: Evaluating, node: Ast, value: Any, ndim: int) -> int:
    return one_dim(ev, node, weak(value) if type(value) is int else value, ndim)


def int_list(ev: Evaluating, node: Ast, args: list | tuple) -> tuple[int, ...]:
    """Sizes or dims given as several ints, or as one tuple, list, torch.Size or 1-D tensor."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    elif len(args) == 1 and isinstance(args[0], Tensor) and not args[0].weak \
            and args[0].value.ndim == 1:
        args = [int(v) for v in args[0].value.tolist()]
    return tuple(int_of(ev, node, v) for v in args)


def dims_of(ev: Evaluating, node: Ast, value: Any, ndim: int) -> tuple[int, ...]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    out = []
    for item in items:
        d = dim_of(ev, node, item, ndim)
        if d in out:
            raise fail(node, f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out)


# --- reshaping ----------------------------------------------------------------------------------

def layout(t: Tensor) -> tuple[int, ...]:
    """The strides PyTorch's tensor would have: numpy's, but for an elementwise op of inputs
    laid out differently (x.T + y), where PyTorch keeps the first input's layout."""
    row = OPS.get(t.op)
    if row is not None and row.elementwise and len(t.inputs) > 1:
        ins = [s.value for s in t.inputs if not s.weak and s.value.ndim]
        if len({(x.shape, strides_of(x)) for x in ins}) > 1:
            return iter_strides([(x.shape, strides_of(x)) for x in ins], t.value.shape)
    return strides_of(t.value)


def reshape_to(ev: Evaluating, node: Ast, a: Tensor, shape: tuple[int, ...]) -> Tensor:
    """PyTorch's reshape: a view where the strides allow, else a contiguous clone and a view."""
    strides = layout(a)
    if can_view(a.value, shape, strides):
        row = "view" if is_contiguous(a.value, strides) else "reshape_alias"
        return ev.op(row, node, [a], {"shape": shape})
    c = ev.op("clone", node, [a], {"contiguous": True})
    return ev.op("unsafe_view", node, [c], {"shape": shape})


def _shape(ev: Evaluating, node: Ast, a: Tensor, sizes: list) -> tuple[int, ...]:
    if not sizes:
        raise fail(node, f"{node.value}() missing required argument 'shape'", DdxTypeError)
    shape = infer_shape(int_list(ev, node, sizes), a.value.size)
    if isinstance(shape, str):
        raise fail(node, shape)
    return shape


def call_reshape(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    sizes = list(args[1:]) + ([kw["shape"][0]] if "shape" in kw else [])
    given = bind(node, args[:1], {k: v for k, v in kw.items() if k != "shape"}, ("input",))
    a = tensor_arg(ev, node, given["input"])
    return reshape_to(ev, node, a, _shape(ev, node, a, sizes))


def call_view(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    sizes = list(args[1:]) + ([kw["size"][0]] if "size" in kw else [])
    a = tensor_arg(ev, node, args[0])
    shape = _shape(ev, node, a, sizes)
    if not can_view(a.value, shape, layout(a)):
        raise fail(node, "view size is not compatible with input tensor's size and stride (at "
                         "least one dimension spans across two contiguous subspaces). Use "
                         ".reshape(...) instead.")
    return ev.op("view", node, [a], {"shape": shape})


def call_flatten(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "start_dim", "end_dim"))
    a = tensor_arg(ev, node, given["input"])
    nd = a.value.ndim
    if nd == 0:
        return reshape_to(ev, node, a, (1,))
    start = dim_of(ev, node, given.get("start_dim", 0), nd)
    end = dim_of(ev, node, given.get("end_dim", -1), nd)
    if start > end:
        raise fail(node, "flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return a
    shape = a.shape
    size = int(np.prod(shape[start:end + 1]))
    return reshape_to(ev, node, a, shape[:start] + (size,) + shape[end + 1:])


def call_contiguous(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input", "memory_format"))["input"])
    return a if is_contiguous(a.value, layout(a)) else ev.op("clone", node, [a],
                                                              {"contiguous": True})


def call_clone(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input", "memory_format"))["input"])
    return ev.op("clone", node, [a])


def call_detach(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input",))["input"])
    return ev.record(Tensor(a.value), node)


def call_squeeze(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim"))
    a = tensor_arg(ev, node, given["input"])
    dim = given.get("dim")
    if dim is None:
        return ev.op("squeeze", node, [a])
    if isinstance(dim, (tuple, list)):
        return ev.op("squeeze", node, [a], {"dims": dims_of(ev, node, dim, a.value.ndim)})
    return ev.op("squeeze", node, [a], {"dim": dim_of(ev, node, dim, a.value.ndim)})


def call_unsqueeze(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim"), required=2)
    a = tensor_arg(ev, node, given["input"])
    return ev.op("unsqueeze", node, [a], {"dim": dim_of(ev, node, given["dim"], a.value.ndim + 1)})


def _torch_type(a: Tensor) -> str:
    return {"float64": "DoubleTensor", "float32": "FloatTensor", "int64": "LongTensor",
            "bool": "BoolTensor"}.get(str(a.value.dtype), "Tensor")


def expand_to(ev: Evaluating, node: Ast, a: Tensor, sizes: tuple[int, ...]) -> Tensor:
    shape = a.shape
    if len(sizes) < len(shape):
        raise fail(node, f"expand(torch.{_torch_type(a)}{{{list(shape)}}}, size={list(sizes)}): "
                         f"the number of sizes provided ({len(sizes)}) must be greater or equal "
                         f"to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = []
    for i, n in enumerate(sizes):
        if i < lead:
            if n < 0:
                raise fail(node, f"The expanded size of the tensor ({n}) isn't allowed in a "
                                 f"leading, non-existing dimension {i}")
            out.append(n)
            continue
        have = shape[i - lead]
        if n == -1:
            n = have
        elif have != n and have != 1:
            raise fail(node, f"The expanded size of the tensor ({n}) must match the existing "
                             f"size ({have}) at non-singleton dimension {i}.  Target sizes: "
                             f"{list(sizes)}.  Tensor sizes: {list(shape)}")
        out.append(n)
    check_elements(int(np.prod(out)), f"{node.value}() to {list(out)}")
    return ev.op("expand", node, [a], {"shape": tuple(out)})


def call_expand(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, args[0])
    sizes = list(args[1:]) + ([kw["size"][0]] if "size" in kw else [])
    return expand_to(ev, node, a, int_list(ev, node, sizes))


def call_expand_as(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "other"), required=2)
    a = tensor_arg(ev, node, given["input"])
    return expand_to(ev, node, a, tensor_arg(ev, node, given["other"]).shape)


def call_repeat(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, args[0])
    sizes = int_list(ev, node, list(args[1:]) + ([kw["repeats"][0]] if "repeats" in kw else []))
    if len(sizes) < a.value.ndim:
        raise fail(node, "Number of dimensions of repeat dims can not be smaller than number of "
                         "dimensions of tensor")
    check_elements(int(np.prod(sizes)) * max(a.value.size, 1), f"{node.value}() by {list(sizes)}")
    return ev.op("repeat", node, [a], {"sizes": sizes})


# --- lists of tensors ------------------------------------------------------------------------------

def tensor_list(ev: Evaluating, node: Ast, value: Any) -> list[Tensor]:
    name = node.value.rsplit(".", 1)[-1]
    if not isinstance(value, (list, tuple)):
        what = "Tensor" if isinstance(value, Tensor) and not value.weak else py_type(value)
        raise fail(node, f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                         f"not {what}", DdxTypeError)
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Tensor) or item.weak:
            raise fail(node, f"expected Tensor as element {i} in argument 0, but got "
                             f"{py_type(item)}", DdxTypeError)
        out.append(item)
    return out


def call_cat(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("tensors", "dim"))
    xs = tensor_list(ev, node, given["tensors"])
    if not xs:
        raise fail(node, "torch.cat(): expected a non-empty list of Tensors", DdxValueError)
    for i, x in enumerate(xs):
        if x.value.ndim == 0:
            raise fail(node, f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    real = [x for x in xs if x.shape != (0,)] or xs[:1]
    first = real[0]
    dim = dim_of(ev, node, given.get("dim", 0), first.value.ndim)
    for i, x in enumerate(xs):
        if x.shape == (0,) and first.value.ndim != 1:
            continue  # (PyTorch's legacy: an empty 1-D tensor is skipped)
        if x.value.ndim != first.value.ndim:
            raise fail(node, f"Tensors must have same number of dimensions: got "
                             f"{first.value.ndim} and {x.value.ndim}")
        for d, (n, m) in enumerate(zip(first.shape, x.shape)):
            if d != dim and n != m:
                raise fail(node, f"Sizes of tensors must match except in dimension {dim}. "
                                 f"Expected size {n} but got size {m} for tensor number {i} in "
                                 "the list.")
    return ev.op(cat_op(len(xs)).name, node, xs, {"dim": dim})


def call_stack(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("tensors", "dim"))
    xs = tensor_list(ev, node, given["tensors"])
    if not xs:
        raise fail(node, "stack expects a non-empty TensorList")
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise fail(node, f"stack expects each tensor to be equal size, but got "
                             f"{list(xs[0].shape)} at entry 0 and {list(x.shape)} at entry {i}")
    dim = dim_of(ev, node, given.get("dim", 0), xs[0].value.ndim + 1)
    return ev.op(stack_dim_op(len(xs)).name, node, xs, {"dim": dim})


# --- several outputs: split, chunk -------------------------------------------------------------

def split_parts(ev: Evaluating, node: Ast, a: Tensor, how, dim: int) -> tuple:
    size = a.shape[dim]
    if isinstance(how, tuple):
        if sum(how) != size or any(n < 0 for n in how):
            raise fail(node, f"split_with_sizes expects split_sizes to sum exactly to {size} "
                             f"(input tensor's size at dimension {dim}), but got split_sizes="
                             f"{list(how)}")
        sizes, key = how, "sizes"
    else:
        if how < 0:
            raise fail(node, f"split expects split_size be non-negative, but got "
                             f"split_size={how}")
        if how == 0 and size:
            raise fail(node, "split_size can only be 0 if dimension size is 0, but got dimension "
                             f"size of {size}")
        count = max(-(-size // how), 1) if how else 1
        sizes, key = tuple(min(how, size - i * how) for i in range(count)), "size"
    parts, start = [], 0
    for i, n in enumerate(sizes):
        parts.append(ev.op("split_part", node, [a], {"dim": dim, "start": start,
                                                     "stop": start + n, "index": i, key: how}))
        start += n
    return tuple(parts)


def call_split(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, args, kw, ("tensor", "split_size_or_sections", "dim"), required=2)
    a = tensor_arg(ev, node, given["tensor"])
    if a.value.ndim == 0:
        raise fail(node, "split expects at least a 1-dimensional tensor")
    dim = dim_of(ev, node, given.get("dim", 0), a.value.ndim)
    how = given["split_size_or_sections"]
    how = int_list(ev, node, [how]) if isinstance(how, (tuple, list)) or (
        isinstance(how, Tensor) and how.value.ndim == 1) else int_of(ev, node, how)
    return split_parts(ev, node, a, how, dim)


def call_chunk(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, args, kw, ("input", "chunks", "dim"), required=2)
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "chunk expects at least a 1-dimensional tensor")
    chunks = int_of(ev, node, given["chunks"])
    if chunks <= 0:
        raise fail(node, f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = dim_of(ev, node, given.get("dim", 0), a.value.ndim)
    size = a.shape[dim]
    return split_parts(ev, node, a, -(-size // chunks) if size else 0, dim)


CALLERS: dict = {"view": call_view, "clone": call_clone, "squeeze": call_squeeze,
                 "unsqueeze": call_unsqueeze, "expand": call_expand, "repeat": call_repeat}
NAMED: dict = {"reshape": call_reshape, "flatten": call_flatten, "contiguous": call_contiguous,
               "detach": call_detach, "expand_as": call_expand_as, "cat": call_cat,
               "concat": call_cat, "concatenate": call_cat, "stack": call_stack,
               "split": call_split, "chunk": call_chunk}
NAMED_SPACES: dict = {"reshape": ("torch", "Tensor"), "flatten": ("torch", "Tensor"),
                      "detach": ("torch", "Tensor"), "split": ("torch", "Tensor"),
                      "chunk": ("torch", "Tensor"),
                      "contiguous": ("Tensor",), "expand_as": ("Tensor",), "cat": ("torch",),
                      "concat": ("torch",), "concatenate": ("torch",), "stack": ("torch",)}
KINDS: dict = {}
