"""Functions PyTorch composes of other nodes, recorded node by node in PyTorch's order (the
grad_fn chains torch 2.13 records): diff (SliceBackward0s and SubBackward0, CatBackward0 for
prepend/append), hstack/vstack (ViewBackward0 or UnsqueezeBackward0, then CatBackward0), tile
(RepeatBackward0), unflatten (ViewBackward0), repeat_interleave (UnsqueezeBackward0,
ExpandBackward0, CloneBackward0, ViewBackward0; IndexSelectBackward0 for a tensor of repeats),
meshgrid (ViewBackward0, ExpandBackward0), kron (UnsafeViewBackward0, MulBackward0)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError
from ..lang.tree import Ast
from .args import Evaluating, bind, string
from .calls_loss import aliased
from .calls_shape import (
    dim_of,
    expand_to,
    fail,
    int_list,
    int_of,
    reshape_to,
    tensor_arg,
    tensor_list,
)
from .tensor import Tensor


def _bin(ev: Evaluating, node: Ast, sym: str, a: Any, b: Any) -> Tensor:
    return ev.binary(Ast("bin", sym, (), (), start=node.start, end=node.end, pos=node.pos), a, b)


def _narrow(ev: Evaluating, node: Ast, a: Tensor, dim: int, start: int, stop: int) -> Tensor:
    key = (slice(None),) * dim + (slice(start, stop),)
    return ev.op("slice", node, [a], {"key": key})


def _cat(ev: Evaluating, node: Ast, xs: list, dim: int) -> Tensor:
    return ev.functions["cat"](ev, node, [list(xs)], {"dim": (Tensor(np.asarray(dim),
                                                                      weak=True), node.pos)})


def call_diff(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "n", "dim", "prepend", "append"))
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "diff expects input to be at least one-dimensional")
    n = int_of(ev, node, given.get("n", 1))
    if n < 0:
        raise fail(node, f"order must be non-negative but got {n}")
    dim = dim_of(ev, node, given.get("dim", -1), a.value.ndim)
    parts = [tensor_arg(ev, node, given[k]) if k in given and given[k] is not None else None
             for k in ("prepend", "append")]
    if parts[0] is not None or parts[1] is not None:
        xs = [p for p in (parts[0], a, parts[1]) if p is not None]
        for p in xs:
            if p.value.ndim != a.value.ndim:
                raise fail(node, "diff expects prepend or append to be the same dimension as "
                                 "input")
        a = _cat(ev, node, xs, dim)
    for _ in range(n):
        size = a.shape[dim]
        if size == 0:
            break
        hi, lo = _narrow(ev, node, a, dim, 1, size), _narrow(ev, node, a, dim, 0, size - 1)
        a = _bin(ev, node, "!=" if a.value.dtype.kind == "b" else "-", hi, lo)
    return a


def call_hstack(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("tensors",))
    xs = [reshape_to(ev, node, x, (1,)) if x.value.ndim == 0 else x
          for x in tensor_list(ev, node, given["tensors"])]
    if not xs:
        raise fail(node, "hstack expects a non-empty TensorList")
    return _cat(ev, node, xs, 0 if xs[0].value.ndim == 1 else 1)


def call_vstack(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("tensors",))
    xs = []
    for x in tensor_list(ev, node, given["tensors"]):
        if x.value.ndim == 0:
            x = reshape_to(ev, node, x, (1, 1))
        elif x.value.ndim == 1:
            x = ev.op("unsqueeze", node, [x], {"dim": 0})
        xs.append(x)
    if not xs:
        raise fail(node, "vstack expects a non-empty TensorList")
    return _cat(ev, node, xs, 0)


def call_tile(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dims"), required=2)
    a = tensor_arg(ev, node, given["input"])
    sizes = int_list(ev, node, [given["dims"]])
    sizes = (1,) * (a.value.ndim - len(sizes)) + tuple(sizes)
    return ev.functions["repeat"](ev, node, [a, *sizes], {})


def call_unflatten(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "sizes"), required=3)
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "unflatten: Dimension specified as 0 but tensor has no dimensions",
                   DdxShapeError)
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    sizes = list(int_list(ev, node, [given["sizes"]]))
    if not sizes:
        raise fail(node, "unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise fail(node, "only one dimension can be inferred")
    size = a.shape[dim]
    if -1 in sizes:
        rest = int(np.prod([s for s in sizes if s != -1]))
        if rest == 0 or size % rest:
            raise fail(node, f"shape '{sizes}' is invalid for input of size {size}")
        sizes[sizes.index(-1)] = size // rest
    if int(np.prod(sizes)) != size:
        raise fail(node, f"unflatten: Provided sizes {list(int_list(ev, node, [given['sizes']]))}"
                         f" don't multiply up to the size of dim {dim} ({size}) in the input "
                         "tensor")
    return reshape_to(ev, node, a, a.shape[:dim] + tuple(sizes) + a.shape[dim + 1:])


def call_repeat_interleave(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "repeats", "dim", "output_size"),
                 required=1)
    a = tensor_arg(ev, node, given["input"])
    if "repeats" not in given:  # torch.repeat_interleave(repeats): each index, repeats[i] times
        if a.value.ndim > 1 or a.value.dtype.kind not in "iu":
            raise fail(node, "repeat_interleave(repeats): repeats must be 0-dim or 1-dim "
                             "Long or Int tensor")
        r = a.value.reshape(-1)
        if (r < 0).any():
            raise fail(node, "repeats can not be negative")
        return Tensor(np.repeat(np.arange(r.size, dtype=np.int64), r))
    reps = given["repeats"]
    if given.get("dim") is None:
        if a.value.ndim != 1:
            a = reshape_to(ev, node, a, (-1,) if a.value.size else (0,))
        dim = 0
    else:
        dim = dim_of(ev, node, given["dim"], a.value.ndim)
    if isinstance(reps, Tensor) and not reps.weak and reps.value.ndim:
        r = reps.value.reshape(-1)
        if r.dtype.kind == "f" and not ev.repl and np.all(np.mod(r, 1) == 0):
            r = r.astype(np.int64)
        if r.dtype.kind not in "iu":
            raise fail(node, "repeats has to be Long or Int tensor")
        n = a.shape[dim] if a.value.ndim else 1
        if r.size != n and r.size != 1:
            raise fail(node, "repeats must have the same size as input along dim, but got "
                             f"repeats.size(0) = {r.size} and input.size({dim}) = {n}")
        if (r < 0).any():
            raise fail(node, "repeats can not be negative")
        index = np.repeat(np.arange(n), np.broadcast_to(r, (n,)))
        return ev.op("index_select", node, [a], {"dim": dim, "index": tuple(index.tolist())})
    r = int_of(ev, node, reps)
    if r < 0:
        raise fail(node, "repeats can not be negative")
    if a.value.ndim == 0:
        a = reshape_to(ev, node, a, (1,))
    shape = a.shape
    u = ev.op("unsqueeze", node, [a], {"dim": dim + 1})
    e = expand_to(ev, node, u, shape[:dim + 1] + (r,) + shape[dim + 1:])
    c = ev.op("clone", node, [e], {"contiguous": True})
    return reshape_to(ev, node, c, shape[:dim] + (shape[dim] * r,) + shape[dim + 1:])


def call_meshgrid(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, [], aliased(node, kw), ("indexing",), required=0)
    xs = tensor_list(ev, node, args[0] if len(args) == 1 and isinstance(args[0], (list, tuple))
                     else list(args))
    if not xs:
        raise fail(node, "meshgrid expects a non-empty TensorList")
    indexing = string(node, "indexing", given.get("indexing", "ij"), ("ij", "xy"))
    for x in xs:
        if x.value.ndim > 1:
            raise fail(node, f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                             f"got: {x.value.ndim}D tensor")
        if x.value.dtype != xs[0].value.dtype:
            raise fail(node, "torch.meshgrid: Expected all tensors in the tensor list to have "
                             "the same dtype")
    swap = indexing == "xy" and len(xs) >= 2
    order = [xs[1], xs[0], *xs[2:]] if swap else xs
    sizes = tuple(max(x.value.size, 1) if x.value.ndim else 1 for x in order)
    out = []
    for i, x in enumerate(order):
        view = tuple(-1 if j == i else 1 for j in range(len(order)))
        v = reshape_to(ev, node, x, tuple(sizes[i] if s == -1 else s for s in view))
        out.append(expand_to(ev, node, v, sizes))
    if swap:
        out = [out[1], out[0], *out[2:]]
    return tuple(out)


def call_kron(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """ATen's kron: a and b viewed with interleaved size-1 dims, multiplied, viewed back."""
    given = bind(node, args, aliased(node, kw), ("input", "other"), required=2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("input", "other"))
    nd = max(a.value.ndim, b.value.ndim)
    sa = (1,) * (nd - a.value.ndim) + a.shape
    sb = (1,) * (nd - b.value.ndim) + b.shape
    va = ev.op("unsafe_view", node, [a], {"shape": tuple(x for n in sa for x in (n, 1))})
    vb = ev.op("unsafe_view", node, [b], {"shape": tuple(x for n in sb for x in (1, n))})
    m = _bin(ev, node, "*", va, vb)
    return ev.op("unsafe_view", node, [m], {"shape": tuple(x * y for x, y in zip(sa, sb))})


NAMED: dict = {"diff": call_diff, "hstack": call_hstack, "vstack": call_vstack,
               "tile": call_tile, "unflatten": call_unflatten,
               "repeat_interleave": call_repeat_interleave, "meshgrid": call_meshgrid,
               "kron": call_kron}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
NAMED_SPACES.update({"hstack": ("torch",), "vstack": ("torch",), "meshgrid": ("torch",)})
LISTS = {"hstack", "vstack", "meshgrid"}
