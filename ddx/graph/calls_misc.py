"""Callers for ddx/ops/rows_misc.py (nansum, rot90, take, cross, scatter, dist, floor_divide)
and the functions PyTorch composes of other nodes, recorded node by node as PyTorch records
them: nanmean (NansumBackward0 then DivBackward0), diff (slices and SubBackward0), hstack and
vstack (views, unsqueezes, CatBackward0), tile (RepeatBackward0), unflatten (ViewBackward0),
repeat_interleave (unsqueeze, expand, clone, view; IndexSelectBackward0 for a tensor of
repeats), meshgrid (views and expands), kron (UnsafeViewBackward0 and MulBackward0), positive
(the tensor itself)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, as_tensor, bind, number, truth_arg
from .calls_loss import aliased
from .calls_reduce import dim_arg, reduced_input
from .calls_shape import dim_of, dims_of, fail, int_list, int_of, tensor_arg
from .tensor import Tensor
from .values import type_name


def _bin(ev: Evaluating, node: Ast, sym: str, a: Any, b: Any) -> Tensor:
    return ev.binary(Ast("bin", sym, (), (), start=node.start, end=node.end, pos=node.pos), a, b)


def _indices(ev: Evaluating, node: Ast, value: Any, what: str) -> np.ndarray:
    """An index tensor (in one-liners, whose literals are floats, whole numbers) or a list."""
    if isinstance(value, Tensor) and not value.weak:
        v = value.value
        if v.dtype.kind in "iu" or (not ev.repl and v.dtype.kind == "f"
                                     and bool(np.all(np.mod(v, 1) == 0))):
            return v.astype(np.int64)
        raise fail(node, f"{what}(): Expected dtype int64 for index", DdxTypeError)
    if isinstance(value, (list, tuple)):
        return np.asarray(_nested_ints(ev, node, value), dtype=np.int64)
    raise fail(node, f"{what}(): argument 'index' must be Tensor, not {type_name(value)}",
               DdxTypeError)


def _nested_ints(ev: Evaluating, node: Ast, value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_nested_ints(ev, node, v) for v in value]
    return int_of(ev, node, value)


def _nested(a: np.ndarray):
    return a.tolist() if a.ndim == 0 else tuple(_nested(x) for x in a)


# --- reductions ---------------------------------------------------------------------------------
def call_nansum(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim", "dtype"))
    a = reduced_input(ev, node, given["input"])
    dim = dim_arg(ev, node, a, given.get("dim"))
    keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
    nkw: dict = {} if dim is None else {"dim": dim}
    if keepdim:
        nkw["keepdim"] = True
    return ev.op("nansum", node, [a], nkw)


def call_nanmean(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """nansum(input, dim, keepdim) / (not isnan(input)).sum(dim, keepdim), as ATen does."""
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim", "dtype"))
    a = reduced_input(ev, node, given["input"])
    if a.value.dtype.kind != "f":
        raise fail(node, "nanmean(): expected input to have floating point or complex dtype but "
                         f"got {_torch_type(a)}")
    dim = dim_arg(ev, node, a, given.get("dim"))
    keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
    nkw: dict = {} if dim is None else {"dim": dim}
    if keepdim:
        nkw["keepdim"] = True
    s = ev.op("nansum", node, [a], nkw)
    counted = np.sum(~np.isnan(a.value), axis=dim, keepdims=keepdim).astype(np.int64)
    n = Tensor(np.asarray(counted))
    n.const = True
    return _bin(ev, node, "/", s, n)


def _torch_type(a: Tensor) -> str:
    return {"i": "Long", "b": "Bool", "u": "Byte"}.get(a.value.dtype.kind, str(a.value.dtype))


# --- elementwise and pairwise -------------------------------------------------------------------
def call_positive(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input",))
    a = tensor_arg(ev, node, given["input"])
    if a.value.dtype.kind == "b":
        raise fail(node, "The `+` operator, on a bool tensor is not supported.")
    return a


def call_floor_divide(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "other"), required=2)
    a, b = (as_tensor(ev, node, given[k]) for k in ("input", "other"))
    if a.weak and b.weak:
        a = tensor_arg(ev, node, a)
    if b.value.dtype.kind in "iub" and a.value.dtype.kind in "iub" and \
            not np.all(np.asarray(b.value) != 0):
        raise fail(node, "ZeroDivisionError")
    ev.check_broadcast(Ast("bin", "floor_divide", (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    return ev.op("floor_divide", node, [a, b])


def call_dist(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "other", "p"), required=2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("input", "other"))
    ev.check_broadcast(Ast("bin", "dist", (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    p = number(node, "p", given["p"]) if given.get("p") is not None else 2.0
    return ev.op("dist", node, [a, b], {"p": p} if p != 2 else {})


CROSS_WARNING = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                 "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value "
                 "of dim will change to agree with that of linalg.cross in a future release.")
CROSS_WARNED: list = []  # (TORCH_WARN_ONCE: once in a process)


def call_cross(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "other", "dim"), required=2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("input", "other"))
    if a.value.ndim != b.value.ndim:
        raise fail(node, "linalg.cross: inputs must have the same number of dimensions.")
    ev.check_broadcast(Ast("bin", "cross", (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if given.get("dim") is None:
        if node.kind == "method" and "linalg" in str(node.kids[0].value if node.kids else ""):
            dim = len(shape) - 1
        else:  # (torch.cross without dim: the first dim of size 3, PyTorch's warning once)
            if not CROSS_WARNED:
                CROSS_WARNED.append(True)
                ev.warnings.append(CROSS_WARNING)
            sizes = [d for d, n in enumerate(shape) if n == 3]
            if not sizes:
                raise fail(node, "no dimension of size 3 in input")
            dim = sizes[0]
    else:
        dim = dim_of(ev, node, given["dim"], len(shape))
    if shape[dim] != 3:
        raise fail(node, f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                         f"{a.shape[dim]} and {b.shape[dim]}")
    return ev.op("cross", node, [a, b], {"dim": dim})


# --- picking and placing ----------------------------------------------------------------------
def call_take(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "index"), required=2)
    a = tensor_arg(ev, node, given["input"])
    idx = _indices(ev, node, given["index"], "take")
    n = a.value.size
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise fail(node, f"out of range: tried to access index {int(bad.flat[0])} on a tensor "
                         f"of {n} elements.", DdxShapeError)
    return ev.op("take", node, [a], {"index": _nested(np.where(idx < 0, idx + n, idx))})


def call_rot90(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "k", "dims"))
    a = tensor_arg(ev, node, given["input"])
    k = int_of(ev, node, given.get("k", 1))
    raw = given.get("dims", [0, 1])
    items = int_list(ev, node, [raw])
    if len(items) != 2:
        raise fail(node, f"expected total rotation dims == 2, but got dims = {len(items)}")
    if a.value.ndim < 2:
        raise fail(node, f"expected total dims >= 2, but got total dims = {a.value.ndim}")
    dims = dims_of(ev, node, tuple(items), a.value.ndim) if items[0] % a.value.ndim != \
        items[1] % a.value.ndim else None
    if dims is None:
        raise fail(node, f"expected rotation dims to be different, but got dim0 = {items[0]} "
                         f"and dim1 = {items[1]}")
    return ev.op("rot90", node, [a], {"k": k % 4, "dims": dims})


def call_scatter(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "index", "src", "value",
                                                  "reduce"), required=3)
    if given.get("reduce") is not None:
        raise fail(node, "scatter(reduce=) is not supported by ddx", DdxTypeError)
    a = tensor_arg(ev, node, given["input"])
    nd = a.value.ndim
    dim = dim_of(ev, node, given["dim"], nd)
    idx = _indices(ev, node, given["index"], "scatter")
    src = given.get("src", given.get("value"))
    if src is None:
        raise fail(node, "scatter() missing required argument 'src'", DdxTypeError)
    if idx.ndim != max(nd, 1) and idx.size:
        raise fail(node, "Index tensor must have the same number of dimensions as self tensor")
    size = a.shape[dim] if nd else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise fail(node, f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with "
                         f"size {size}", DdxShapeError)
    skw = {"dim": dim, "index": _nested(idx)}
    if isinstance(src, Tensor) and not src.weak:
        if src.value.ndim != idx.ndim or any(i > s for i, s in zip(idx.shape, src.shape)):
            raise fail(node, f"Expected index {list(idx.shape)} to be no larger than src "
                             f"{list(src.shape)} in every dimension")
        if src.value.dtype != a.value.dtype:
            raise fail(node, "scatter(): Expected self.dtype to be equal to src.dtype")
        return ev.op("scatter", node, [a, src], skw)
    return ev.op("scatter_value", node, [a], dict(skw, value=number(node, "value", src)))


def call_cdist(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """cdist(x1, x2, p=2.0): one CdistBackward0 node (PyTorch takes a matrix-product path,
    other nodes, for p=2 past 25 rows; ddx records CdistBackward0 there too)."""
    given = bind(node, args, aliased(node, kw), ("x1", "x2", "p", "compute_mode"), required=2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("x1", "x2"))
    if a.value.ndim < 2 or b.value.ndim < 2:
        raise fail(node, f"cdist only supports at least 2D tensors, X1 got: {a.value.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise fail(node, f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                         f"X2: {b.shape[-1]}")
    p = number(node, "p", given["p"]) if given.get("p") is not None else 2.0
    if p < 0:
        raise fail(node, f"cdist only supports non-negative p values, got {p:g}")
    if a.value.ndim != 2 or b.value.ndim != 2:
        if a.shape[:-2] != b.shape[:-2]:
            raise fail(node, "cdist: the batch dimensions of x1 and x2 must match in ddx")
    return ev.op("cdist", node, [a, b], {"p": p} if p != 2 else {})


def call_baddbmm(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "batch1", "batch2", "beta", "alpha"),
                 required=3)
    a, b1, b2 = (tensor_arg(ev, node, given[k]) for k in ("input", "batch1", "batch2"))
    if b1.value.ndim != 3 or b2.value.ndim != 3:
        raise fail(node, "batch1 must be a 3D tensor" if b1.value.ndim != 3 else
                   "batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise fail(node, f"Expected size for first two dimensions of batch2 tensor to be: "
                         f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, "
                         f"{b2.shape[1]}].")
    out = (b1.shape[0], b1.shape[1], b2.shape[2])
    lead = len(out) - a.value.ndim
    for d in range(len(out) - 1, -1, -1):  # (PyTorch's expand of the input to the result)
        n = a.shape[d - lead] if d >= lead else 1
        if lead < 0 or (n != out[d] and n != 1):
            raise fail(node, f"The expanded size of the tensor ({out[d]}) must match the "
                             f"existing size ({n}) at non-singleton dimension {d}.  Target "
                             f"sizes: {list(out)}.  Tensor sizes: {list(a.shape)}")
    bkw = {}
    for key in ("beta", "alpha"):
        if given.get(key) is not None:
            bkw[key] = number(node, key, given[key])
    return ev.op("baddbmm", node, [a, b1, b2], bkw)


NAMED: dict = {"cdist": call_cdist, "baddbmm": call_baddbmm, "nansum": call_nansum,
               "nanmean": call_nanmean, "positive": call_positive,
               "floor_divide": call_floor_divide, "dist": call_dist, "cross": call_cross,
               "take": call_take, "rot90": call_rot90, "scatter": call_scatter}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
NAMED_SPACES["cross"] = ("torch", "Tensor", "linalg")
NAMED_SPACES["cdist"] = ("torch",)
