"""Functions of PyTorch's documentation (issue 15, round 7) that PyTorch composes of other
nodes, recorded node by node as torch 2.13 records them: fliplr/flipud (FlipBackward0), ravel
(ViewBackward0, after a CloneBackward0 where the input is not contiguous), broadcast_to
(ExpandBackward0), dstack and column_stack (UnsqueezeBackward0 or ViewBackward0, then
CatBackward0), tensor_split/hsplit/vsplit/dsplit (SliceBackward0s), msort (SortBackward0),
take_along_dim (ExpandBackward0 or ViewBackward0, then GatherBackward0), diagflat
(ViewBackward0, DiagEmbedBackward0), float_power (ToCopyBackward0, PowBackward0) and
trapezoid/cumulative_trapezoid as ATen's Integration.cpp writes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from ..ops.kernels_shape import is_contiguous
from .args import Evaluating, bind
from .calls_loss import aliased
from .calls_shape import (
    dim_of,
    expand_to,
    fail,
    int_of,
    layout,
    reshape_to,
    tensor_arg,
    tensor_list,
)
from .tensor import Tensor
from .values import weak


def _bin(ev: Evaluating, node: Ast, sym: str, a: Any, b: Any) -> Tensor:
    return ev.binary(Ast("bin", sym, (), (), start=node.start, end=node.end, pos=node.pos), a, b)


def _scalar(ev: Evaluating, node: Ast, name: str, t: Tensor, k: float) -> Tensor:
    """t * k (t / k) by a C++ double, as ATen's own code writes it: MulBackward1, DivBackward1."""
    grad_fn = {"mul": "MulBackward1", "div": "DivBackward1"}[name]
    return ev.op(name, node, [t, weak(float(k))], grad_fn=grad_fn)


def _slice(ev: Evaluating, node: Ast, a: Tensor, dim: int, start: int, stop: int) -> Tensor:
    return ev.op("slice", node, [a], {"key": (slice(None),) * dim + (slice(start, stop),)})


def _cat(ev: Evaluating, node: Ast, xs: list, dim: int) -> Tensor:
    return ev.functions["cat"](ev, node, [list(xs)], {"dim": (Tensor(np.asarray(dim),
                                                                      weak=True), node.pos)})


def _one(ev: Evaluating, node: Ast, args: list, kw: dict, names=("input",), required=1):
    given = bind(node, args, aliased(node, kw), names, required)
    return tensor_arg(ev, node, given[names[0]]), given


def call_fliplr(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, _ = _one(ev, node, args, kw)
    if a.value.ndim < 2:
        raise fail(node, "Input must be >= 2-d.")
    return ev.op("flip", node, [a], {"dims": (1,)})


def call_flipud(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, _ = _one(ev, node, args, kw)
    if a.value.ndim < 1:
        raise fail(node, "Input must be >= 1-d.")
    return ev.op("flip", node, [a], {"dims": (0,)})


def contiguous(ev: Evaluating, node: Ast, a: Tensor) -> Tensor:
    return a if is_contiguous(a.value, layout(a)) else ev.op("clone", node, [a],
                                                              {"contiguous": True})


def call_ravel(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, _ = _one(ev, node, args, kw)
    return reshape_to(ev, node, contiguous(ev, node, a), (a.value.size,))


def call_broadcast_to(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, given = _one(ev, node, args, kw, ("input", "size"), 2)
    size = given["size"]
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    return ev.functions["expand"](ev, node, [a, tuple(size)], {})


def call_dstack(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("tensors",))
    xs = tensor_list(ev, node, given["tensors"])
    if not xs:
        raise fail(node, "dstack expects a non-empty TensorList")
    out = []
    for x in xs:  # (atleast_3d: a view for 0-d, unsqueezes for 1-d and 2-d)
        if x.value.ndim == 0:
            x = reshape_to(ev, node, x, (1, 1, 1))
        elif x.value.ndim == 1:
            x = ev.op("unsqueeze", node, [ev.op("unsqueeze", node, [x], {"dim": 0})], {"dim": -1})
        elif x.value.ndim == 2:
            x = ev.op("unsqueeze", node, [x], {"dim": -1})
        out.append(x)
    return _cat(ev, node, out, 2)


def call_column_stack(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("tensors",))
    xs = tensor_list(ev, node, given["tensors"])
    if not xs:
        raise fail(node, "column_stack expects a non-empty TensorList")
    out = [reshape_to(ev, node, x, (x.value.size, 1)) if x.value.ndim <= 1 else x for x in xs]
    return _cat(ev, node, out, 1)


def _sections(ev: Evaluating, node: Ast, a: Tensor, how: Any, dim: int) -> tuple:
    """tensor_split's pieces: n sections (the first size % n one longer) or split indices."""
    size = a.shape[dim]
    if isinstance(how, Tensor) and not how.weak and how.value.ndim == 1:
        how = tuple(int(v) for v in how.value.tolist())
    if isinstance(how, (tuple, list)):
        cuts = [int_of(ev, node, v) for v in how]
        bounds, start = [], 0
        for c in [*cuts, size]:
            c = max(0, min(size, c + size if c < 0 else c))
            bounds.append((start, max(start, c)))
            start = max(start, c)
    else:
        n = int_of(ev, node, how)
        if n <= 0:
            raise fail(node, f"number of sections must be larger than 0, got {n}")
        each, extra = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            length = each + (1 if i < extra else 0)
            bounds.append((start, start + length))
            start += length
    return tuple(_slice(ev, node, a, dim, lo, hi) for lo, hi in bounds)


def call_tensor_split(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, args, aliased(node, kw),
                 ("input", "indices_or_sections", "dim"), 2)
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "tensor_split expected at least a 1-dimensional tensor, but got a "
                         "tensor with 0 dims")
    dim = dim_of(ev, node, given.get("dim", 0), a.value.ndim)
    return _sections(ev, node, a, given["indices_or_sections"], dim)


def _hvd(which: str, least: int, dim_of_input):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
        given = bind(node, args, aliased(node, kw), ("input", "indices_or_sections"), 2)
        a = tensor_arg(ev, node, given["input"])
        nd = a.value.ndim
        if nd < least:
            raise fail(node, f"torch.{which} requires a tensor with at least {least} "
                             f"dimension{'s' if least > 1 else ''}, but got a tensor with "
                             f"{nd} dimensions!")
        dim = dim_of_input(nd)
        how = given["indices_or_sections"]
        if not isinstance(how, (tuple, list)) and not (isinstance(how, Tensor) and
                                                       not how.weak and how.value.ndim == 1):
            n = int_of(ev, node, how)
            if n == 0 or a.shape[dim] % n:
                raise fail(node, f"torch.{which} attempted to split along dimension {dim}, "
                                 f"but the size of the dimension {a.shape[dim]} is not "
                                 f"divisible by the split_size {n}!")
        return _sections(ev, node, a, how, dim)
    return call


def call_msort(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, _ = _one(ev, node, args, kw)
    return ev.functions["sort"](ev, node, [a], {"dim": (weak(0), node.pos)})[0]


def call_take_along_dim(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "indices", "dim"), 2)
    a = tensor_arg(ev, node, given["input"])
    idx = given["indices"]
    if not isinstance(idx, Tensor) or idx.weak or idx.value.dtype.kind not in "iu":
        raise fail(node, "torch.take_along_dim(): dtype of indices should be Long but got "
                         f"{getattr(getattr(idx, 'value', None), 'dtype', type(idx).__name__)}",
                   DdxTypeError)
    dim = given.get("dim")
    if dim is None:
        flat = reshape_to(ev, node, contiguous(ev, node, a), (a.value.size,))
        return ev.op("gather", node, [flat], {"dim": 0, "index": idx.value.reshape(-1).tolist()})
    d = dim_of(ev, node, dim, a.value.ndim)
    if idx.value.ndim != a.value.ndim:
        raise fail(node, "torch.take_along_dim(): input and indices should have the same "
                         f"number of dimensions, but got {a.value.ndim} dimensions for input, "
                         f"and {idx.value.ndim} dimensions for indices")
    shape = list(np.broadcast_shapes(tuple(n for i, n in enumerate(a.shape) if i != d),
                                     tuple(n for i, n in enumerate(idx.shape) if i != d)))
    a_shape, i_shape = list(shape), list(shape)
    a_shape.insert(d, a.shape[d])
    i_shape.insert(d, idx.shape[d])
    a = expand_to(ev, node, a, tuple(a_shape))  # (ATen expands even to the same sizes)
    index = np.broadcast_to(idx.value, i_shape)
    return ev.op("gather", node, [a], {"dim": d, "index": index.tolist()})


def call_diagflat(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, given = _one(ev, node, args, kw, ("input", "offset"))
    offset = int_of(ev, node, given.get("offset", 0))
    flat = reshape_to(ev, node, contiguous(ev, node, a), (a.value.size,))
    return ev.op("diag_embed", node, [flat], {"diagonal": offset})


def call_diag_embed(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, given = _one(ev, node, args, kw, ("input", "offset", "dim1", "dim2"))
    nd = a.value.ndim + 1
    d1 = dim_of(ev, node, given.get("dim1", -2), nd)
    d2 = dim_of(ev, node, given.get("dim2", -1), nd)
    if d1 == d2:
        raise fail(node, f"diagonal dimensions cannot be identical {d1}, {d2}")
    if nd != 2 or (d1, d2) != (0, 1):
        raise fail(node, "torch.diag_embed of a batch of vectors is not supported by ddx (of "
                         "one vector, it is)")
    return ev.op("diag_embed", node, [a], {"diagonal": int_of(ev, node, given.get("offset", 0))})


def call_float_power(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "exponent"), 2)
    x, e = given["input"], given["exponent"]
    if not isinstance(x, Tensor) or x.weak:
        if isinstance(e, Tensor) and not e.weak:
            x = weak(float(x.value if isinstance(x, Tensor) else x))
        else:
            raise fail(node, "float_power(): argument 'input' must be Tensor", DdxTypeError)
    x, e = (_double(ev, node, v) for v in (x, e))
    return _bin(ev, node, "^", x, e)


def _double(ev: Evaluating, node: Ast, v: Any) -> Any:
    if not isinstance(v, Tensor):
        return weak(float(v))
    if v.weak:
        return weak(float(v.value))
    if v.value.dtype == np.float64:
        return v
    if v.requires_grad:
        return ev.op("to_float64", node, [v])
    return Tensor(v.value.astype(np.float64))


def _x_view(ev: Evaluating, node: Ast, x: Tensor, y: Tensor, dim: int, name: str) -> Tensor:
    if x.value.dtype.kind == "b" or y.value.dtype.kind == "b":
        raise fail(node, f"{name}: received a bool input for `x` or `y`, but bool is not "
                         "supported")
    if x.value.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise fail(node, f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.value.ndim
        sizes[dim] = x.shape[0]
        return reshape_to(ev, node, x, tuple(sizes))
    if x.value.ndim < y.value.ndim:
        return reshape_to(ev, node, x, (1,) * (y.value.ndim - x.value.ndim) + x.shape)
    return x


def _trapz_args(ev: Evaluating, node: Ast, args: list, kw: dict):
    given = bind(node, args, aliased(node, kw), ("y", "x", "dim", "dx"), 1)
    y = tensor_arg(ev, node, given["y"])
    if y.value.ndim == 0:
        raise DdxRuntimeError("Dimension specified as -1 but tensor has no dimensions",
                              start=node.pos, end=node.end)
    dim = dim_of(ev, node, given.get("dim", -1), y.value.ndim)
    x = given.get("x")
    if x is not None and given.get("dx") is not None:
        raise fail(node, "trapezoid() received an invalid combination of arguments",
                   DdxTypeError)
    dx = given.get("dx")
    dx = 1.0 if dx is None else float(dx.value if isinstance(dx, Tensor) else dx)
    return y, dim, x, dx


def _dx(ev: Evaluating, node: Ast, x: Any, y: Tensor, dim: int, name: str) -> Tensor:
    xv = _x_view(ev, node, tensor_arg(ev, node, x), y, dim, name)
    n = xv.shape[dim]
    return _bin(ev, node, "-", _slice(ev, node, xv, dim, 1, n), _slice(ev, node, xv, dim, 0,
                                                                        n - 1))


def call_trapezoid(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    y, dim, x, dx = _trapz_args(ev, node, args, kw)
    n = y.shape[dim]
    if n == 0:
        return Tensor(np.zeros(y.shape[:dim] + y.shape[dim + 1:], dtype=y.value.dtype))
    if x is None:
        total = ev.functions["sum"](ev, node, [y, weak(dim)], {})
        sel = [ev.op("select", node, [y], {"key": (slice(None),) * dim + (i,)}) for i in (0, n - 1)]
        ends = _scalar(ev, node, "mul", _bin(ev, node, "+", *sel), 0.5)
        return _scalar(ev, node, "mul", _bin(ev, node, "-", total, ends), dx)
    d = _dx(ev, node, x, y, dim, "trapezoid")
    both = _bin(ev, node, "+", _slice(ev, node, y, dim, 0, n - 1), _slice(ev, node, y, dim, 1, n))
    total = ev.functions["sum"](ev, node, [_bin(ev, node, "*", both, d), weak(dim)], {})
    return _scalar(ev, node, "div", total, 2.0)


def call_cumulative_trapezoid(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    y, dim, x, dx = _trapz_args(ev, node, args, kw)
    n = y.shape[dim]
    both = _bin(ev, node, "+", _slice(ev, node, y, dim, 0, max(n - 1, 0)),
                _slice(ev, node, y, dim, 1, n))
    if x is None:
        scaled = ev.op("mul", node, [both, weak(dx / 2.0)], grad_fn="MulBackward1")
        return ev.functions["cumsum"](ev, node, [scaled], {"dim": (weak(dim), node.pos)})
    d = _dx(ev, node, x, y, dim, "cumulative_trapezoid")
    summed = ev.functions["cumsum"](ev, node, [_bin(ev, node, "*", both, d)],
                                    {"dim": (weak(dim), node.pos)})
    return _scalar(ev, node, "div", summed, 2.0)


NAMED: dict = {
    "fliplr": call_fliplr, "flipud": call_flipud, "ravel": call_ravel,
    "broadcast_to": call_broadcast_to, "dstack": call_dstack, "column_stack": call_column_stack,
    "tensor_split": call_tensor_split, "hsplit": _hvd("hsplit", 1, lambda nd: 1 if nd > 1 else 0),
    "vsplit": _hvd("vsplit", 2, lambda nd: 0), "dsplit": _hvd("dsplit", 3, lambda nd: 2),
    "msort": call_msort, "take_along_dim": call_take_along_dim, "diagflat": call_diagflat,
    "diag_embed": call_diag_embed, "float_power": call_float_power,
    "trapezoid": call_trapezoid, "trapz": call_trapezoid,
    "cumulative_trapezoid": call_cumulative_trapezoid,
}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
NAMED_SPACES.update({n: ("torch",) for n in ("dstack", "column_stack", "trapezoid", "trapz",
                                             "cumulative_trapezoid")})
LISTS = {"dstack", "column_stack"}
