"""Callers of round 7's rows (ddx/ops/rows_m.py): addcmul/addcdiv (``value=``), copysign
(CopysignBackward1 for a plain number), ldexp (``self * 2 ** other``, LdexpBackward0),
masked_select, masked_scatter, index_fill, index_copy, put and scatter_add, with PyTorch's
checks and messages."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, bind
from .calls_loss import aliased
from .calls_shape import dim_of, expand_to, fail, int_of, tensor_arg
from .tensor import Tensor


def _number(v: Any) -> float | None:
    if isinstance(v, Tensor):
        return v.value.item() if v.weak else None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _three(name: str, row: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input", "tensor1", "tensor2", "value"), 3)
        xs = [tensor_arg(ev, node, given[k]) for k in ("input", "tensor1", "tensor2")]
        v = given.get("value", 1)
        value = _number(v)
        if value is None:
            raise fail(node, f"{name}(): argument 'value' must be Number", DdxTypeError)
        if name == "addcdiv" and all(x.value.dtype.kind in "biu" for x in xs[1:]):
            raise fail(node, "Integer division with addcdiv is no longer supported, and in a "
                             "future release addcdiv will perform a true division of tensor1 "
                             "and tensor2. The historic addcdiv behavior can be implemented as "
                             "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                             "for integer inputs and as (input + value * tensor1 / tensor2) "
                             "for float inputs. The future addcdiv behavior is just the latter "
                             "implementation: (input + value * tensor1 / tensor2), for all "
                             "dtypes.")
        try:
            np.broadcast_shapes(*(x.shape for x in xs))
        except ValueError:
            raise fail(node, "The size of tensor a must match the size of tensor b",
                       DdxShapeError) from None
        return ev.op(row, node, xs, {"value": float(value)})
    return call


def call_copysign(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "other"), 2)
    a = tensor_arg(ev, node, given["input"])
    other = given["other"]
    k = _number(other)
    if k is not None:
        if a.value.dtype.kind != "f":
            a = Tensor(a.value.astype(ev.dtype))
        return ev.op("copysign_scalar", node, [a], {"other": float(k)})
    b = tensor_arg(ev, node, other)
    if a.value.dtype.kind != "f" and b.value.dtype.kind != "f":
        a = Tensor(a.value.astype(ev.dtype))
    ev.check_broadcast(Ast("bin", "copysign", (), (), start=node.start, end=node.end,
                           pos=node.pos), a, b)
    return ev.op("copysign", node, [a, b])


def call_ldexp(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "other"), 2)
    a, e = (tensor_arg(ev, node, given[k]) for k in ("input", "other"))
    if e.requires_grad:
        raise fail(node, "ldexp where other requires grad is not supported by ddx")
    if a.value.dtype.kind != "f":
        a = Tensor(a.value.astype(ev.dtype))
    try:
        shape = np.broadcast_shapes(a.shape, e.shape)
    except ValueError:
        raise fail(node, f"The size of tensor a ({a.shape[-1]}) must match the size of tensor b "
                         f"({e.shape[-1]}) at non-singleton dimension", DdxShapeError) from None
    if shape != a.shape:
        a = expand_to(ev, node, a, shape)
    return ev.op("ldexp", node, [a], {"other": _nested(np.broadcast_to(e.value, shape))})


def _mask(ev: Evaluating, node: Ast, mask: Any, a: Tensor, name: str) -> tuple:
    if not isinstance(mask, Tensor) or mask.weak or mask.value.dtype.kind != "b":
        raise fail(node, f"{name}: expected BoolTensor for mask", DdxTypeError)
    try:
        shape = np.broadcast_shapes(a.shape, mask.shape)
    except ValueError:
        raise fail(node, f"The size of tensor a ({a.shape[-1] if a.shape else 1}) must match "
                         "the size of tensor b at a non-singleton dimension", DdxShapeError) \
            from None
    if shape != a.shape:
        raise fail(node, f"{name} where the mask broadcasts the input to a larger shape is not "
                         "supported by ddx")
    return _nested(np.broadcast_to(mask.value, a.shape))


def _nested(v: np.ndarray):
    return v.tolist() if v.ndim == 0 else tuple(_nested(x) for x in v)


def call_masked_select(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "mask"), 2)
    a = tensor_arg(ev, node, given["input"])
    return ev.op("masked_select", node, [a], {"mask": _mask(ev, node, given["mask"], a,
                                                             "masked_select")})


def call_masked_scatter(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "mask", "source"), 3)
    a, src = (tensor_arg(ev, node, given[k]) for k in ("input", "source"))
    m = given["mask"]
    if isinstance(m, Tensor) and not m.weak and m.value.dtype.kind == "b":
        try:
            shape = np.broadcast_shapes(a.shape, m.shape)
        except ValueError:
            shape = a.shape
        if shape != a.shape:  # (ATen's expand_outplace: self expanded to the mask's shape)
            a = expand_to(ev, node, a, shape)
    mask = _mask(ev, node, m, a, "masked_scatter_")
    if src.value.dtype != a.value.dtype:
        raise fail(node, "masked_scatter_: expected self and source to have same dtypes but "
                         f"got {a.value.dtype} and {src.value.dtype}")
    if np.count_nonzero(mask) > src.value.size:
        raise fail(node, "masked_scatter: expected source to have at least as many elements "
                         "as ones in mask")
    return ev.op("masked_scatter", node, [a, src], {"mask": mask})


def _ints(ev: Evaluating, node: Ast, value: Any, name: str) -> np.ndarray:
    """An index tensor; in one-liners, whose vector literals are floats, whole numbers too."""
    if isinstance(value, (list, tuple)):
        return np.asarray(value if not value or not isinstance(value[0], Tensor) else
                          [int_of(ev, node, v) for v in value], dtype=np.int64)
    if isinstance(value, Tensor) and not value.weak:
        v = value.value
        if v.dtype.kind in "iu" or (not ev.repl and v.dtype.kind == "f"
                                     and bool(np.all(np.mod(v, 1) == 0))):
            return v.astype(np.int64)
    raise fail(node, f"{name}(): Expected dtype int64 for index", DdxTypeError)


def _index(ev: Evaluating, node: Ast, value: Any, name: str) -> tuple[int, ...]:
    v = _ints(ev, node, value, name)
    if v.ndim > 1:
        raise fail(node, "Index is supposed to be a vector")
    return tuple(int(i) for i in v.reshape(-1).tolist())


def _checked(node: Ast, index: tuple, size: int, dim: int) -> tuple:
    for i in index:
        if not -size <= i < size:
            raise fail(node, f"index {i} is out of bounds for dimension {dim} with size {size}",
                       DdxShapeError)
    return tuple(i % size for i in index)


def call_index_fill(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "index", "value"), 4)
    a = tensor_arg(ev, node, given["input"])
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    index = _checked(node, _index(ev, node, given["index"], "index_fill"),
                     a.shape[dim] if a.value.ndim else 1, dim)
    value = _number(given["value"])
    if value is None:
        raise fail(node, "index_fill with a tensor value that is not 0-d is not supported by "
                         "ddx", DdxTypeError)
    return ev.op("index_fill", node, [a], {"dim": dim, "index": index, "value": value})


def call_index_copy(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "index", "source"), 4)
    a, src = (tensor_arg(ev, node, given[k]) for k in ("input", "source"))
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    index = _checked(node, _index(ev, node, given["index"], "index_copy"),
                     a.shape[dim] if a.value.ndim else 1, dim)
    want = a.shape[:dim] + (len(index),) + a.shape[dim + 1:] if a.value.ndim else ()
    if src.shape != want and not (src.value.size == len(index) == 1 and not a.value.ndim):
        raise fail(node, f"index_copy_(): Source/destination tensor must have same slice "
                         f"shapes. Destination slice shape: {list(a.shape)} at dimension {dim} "
                         f"and source slice shape: {list(src.shape)} at dimension 0.")
    if src.value.dtype != a.value.dtype:
        raise fail(node, "index_copy_(): self and source expected to have the same dtype, but "
                         f"got (self) {a.value.dtype} and (source) {src.value.dtype}")
    return ev.op("index_copy", node, [a, src], {"dim": dim, "index": index})


def call_put(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "index", "source", "accumulate"), 3)
    a, src = (tensor_arg(ev, node, given[k]) for k in ("input", "source"))
    flat = tuple(int(i) for i in _ints(ev, node, given["index"], "put").reshape(-1).tolist())
    size = max(a.value.size, 1)
    for i in flat:
        if not -size <= i < size:
            raise fail(node, f"out of range: tried to access index {i} on a tensor of {size} "
                             "elements.", DdxShapeError)
    if len(flat) != src.value.size:
        raise fail(node, f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {src.value.size}, "
                         f"index.numel() = {len(flat)}")
    acc = given.get("accumulate", False)
    acc = bool(acc.value) if isinstance(acc, Tensor) else bool(acc)
    return ev.op("put", node, [a, src], {"index": tuple(i % size for i in flat),
                                         "accumulate": acc})


def call_scatter_add(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "index", "src"), 4)
    a, src = (tensor_arg(ev, node, given[k]) for k in ("input", "src"))
    nd = a.value.ndim
    dim = dim_of(ev, node, given["dim"], nd)
    idx = _ints(ev, node, given["index"], "scatter_add")
    if idx.ndim != max(nd, 1) and idx.size:
        raise fail(node, "Index tensor must have the same number of dimensions as self tensor")
    size = a.shape[dim] if nd else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise fail(node, f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with "
                         f"size {size}", DdxShapeError)
    if src.value.ndim != idx.ndim or any(i > s for i, s in zip(idx.shape, src.shape)):
        raise fail(node, f"Expected index {list(idx.shape)} to be no larger than src "
                         f"{list(src.shape)} in every dimension")
    if src.value.dtype != a.value.dtype:
        raise fail(node, "scatter_add(): Expected self.dtype to be equal to src.dtype")
    return ev.op("scatter_add", node, [a, src], {"dim": dim, "index": _nested(idx)})


def _bias_form(name: str, names: tuple, ndims: tuple):
    """addmv(input, mat, vec) and addr(input, vec1, vec2), with beta = alpha = 1."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), (*names, "beta", "alpha"), 3)
        for k in ("beta", "alpha"):
            if k in given and _number(given[k]) != 1:
                raise fail(node, f"{name} with {k} other than 1 is not supported by ddx",
                           DdxTypeError)
        xs = [tensor_arg(ev, node, given[k]) for k in names]
        for k, x, nd in zip(names[1:], xs[1:], ndims):
            if x.value.ndim != nd:
                raise fail(node, f"{k} must be a {nd}-D tensor, got {x.value.ndim}-D")
        if len({x.value.dtype for x in xs}) > 1:
            raise fail(node, "expected m1 and m2 to have the same dtype")
        want = (xs[1].shape[0],) if name == "addmv" else (xs[1].shape[0], xs[2].shape[0])
        if name == "addmv" and xs[1].shape[1] != xs[2].shape[0]:
            raise fail(node, f"size mismatch, got input ({want[0]}), mat ({xs[1].shape[0]}x"
                             f"{xs[1].shape[1]}), vec ({xs[2].shape[0]})")
        try:
            if np.broadcast_shapes(xs[0].shape, want) != want:
                raise ValueError
        except ValueError:
            raise fail(node, f"The expanded size of the tensor must match the existing size of "
                             f"{name}'s input", DdxShapeError) from None
        return ev.op(name, node, xs)
    return call


CALLERS: dict = {"copysign": call_copysign}
NAMED: dict = {"addcmul": _three("addcmul", "addcmul"), "addcdiv": _three("addcdiv", "addcdiv"),
               "ldexp": call_ldexp, "masked_select": call_masked_select,
               "masked_scatter": call_masked_scatter, "index_fill": call_index_fill,
               "index_copy": call_index_copy, "put": call_put, "scatter_add": call_scatter_add,
               "addmv": _bias_form("addmv", ("input", "mat", "vec"), (2, 1)),
               "addr": _bias_form("addr", ("input", "vec1", "vec2"), (1, 1))}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}


def call_vdot(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """vdot of real vectors is dot's product (its own node, VdotBackward0)."""
    given = bind(node, args, aliased(node, kw), ("input", "other"), 2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("input", "other"))
    if a.value.ndim != 1 or b.value.ndim != 1:
        raise fail(node, f"1D tensors expected, but got {a.value.ndim}D and {b.value.ndim}D "
                         "tensors")
    if a.shape != b.shape:
        n, m = a.shape[0], b.shape[0]
        raise fail(node, f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have "
                         f"the same number of elements, but got {n} and {m} elements "
                         "respectively")
    if a.value.dtype != b.value.dtype:
        raise fail(node, f"vdot : expected both vectors to have same dtype, but found "
                         f"{a.value.dtype} and {b.value.dtype}")
    return ev.op("dot", node, [a, b], grad_fn="VdotBackward0")


def call_narrow_copy(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """A copy of narrow's slice: index_select's copy and rule, as NarrowCopyBackward0."""
    given = bind(node, args, aliased(node, kw), ("input", "dim", "start", "length"), 4)
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim == 0:
        raise fail(node, "narrow_copy(): cannot be applied to a 0-dim tensor.")
    dim = dim_of(ev, node, given["dim"], a.value.ndim)
    size = a.shape[dim]
    start, length = int_of(ev, node, given["start"]), int_of(ev, node, given["length"])
    start = start + size if start < 0 else start
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise fail(node, f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return ev.op("index_select", node, [a], {"dim": dim, "index": tuple(range(start,
                                                                             start + length))},
                 grad_fn="NarrowCopyBackward0")


def call_slice_scatter(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """src written into input[start:end:step] along dim: index_copy's forward and rules, as
    SliceScatterBackward0."""
    given = bind(node, args, aliased(node, kw), ("input", "src", "dim", "start", "end", "step"),
                 2)
    a, src = (tensor_arg(ev, node, given[k]) for k in ("input", "src"))
    dim = dim_of(ev, node, given.get("dim", 0), a.value.ndim)
    bounds = slice(*(None if given.get(k) is None else int_of(ev, node, given[k])
                     for k in ("start", "end", "step")))
    index = tuple(range(a.shape[dim]))[bounds]
    want = a.shape[:dim] + (len(index),) + a.shape[dim + 1:]
    if src.shape != want:
        raise fail(node, f"expected src to have a size equal to the slice of self. src size = "
                         f"{list(src.shape)}, slice size = {list(want)}")
    if src.value.dtype != a.value.dtype:
        src = Tensor(src.value.astype(a.value.dtype))
    return ev.op("index_copy", node, [a, src], {"dim": dim, "index": index},
                 grad_fn="SliceScatterBackward0")


NAMED.update({"vdot": call_vdot, "narrow_copy": call_narrow_copy,
              "slice_scatter": call_slice_scatter})
NAMED_SPACES.update({"vdot": ("torch", "Tensor"), "narrow_copy": ("torch", "Tensor"),
                     "slice_scatter": ("torch", "Tensor")})
