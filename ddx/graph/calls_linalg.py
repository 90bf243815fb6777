"""Callers for the op table's linalg rows (see ddx/graph/args.py for what a caller is).

Tables read by ddx/graph/functions.py: KINDS (a new Op.call kind -> factory(row name) ->
caller), CALLERS (row name -> its own caller), NAMED (a function that is not one row ->
caller) and NAMED_SPACES (such a function's namespaces: "torch", "Tensor", "F", "linalg").

matmul (and '@') records what PyTorch's matmul records (aten's _matmul_impl): dot, mv or mm
for 1-D and 2-D operands; a batch folded into mm/mv where PyTorch folds it; otherwise the
batches expanded to a common shape, reshaped to three dimensions and multiplied by bmm."""

from __future__ import annotations

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from ..limits import check_elements
from . import calls_matrix, calls_select
from .args import Evaluating, bind, check_arity
from .calls_shape import dim_of, expand_to, fail, int_list, layout, reshape_to, tensor_arg
from .create_args import torch_type
from .tensor import Tensor


def _two(ev: Evaluating, node: Ast, args: list, kw: dict, names=("input", "other")):
    given = bind(node, args, kw, names, required=2)
    return tuple(tensor_arg(ev, node, given[n]) for n in names)


_CPP = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _dtypes(node: Ast, a: Tensor, b: Tensor, what: str) -> None:
    """PyTorch's products take one dtype (no promotion), each with its own words."""
    if a.value.dtype == b.value.dtype:
        return
    ta, tb = (torch_type(t.value.dtype) for t in (a, b))
    ca, cb = (_CPP.get(str(t.value.dtype), str(t.value.dtype)) for t in (a, b))
    text = {"mm": f"expected m1 and m2 to have the same dtype, but got: {ca} != {cb}",
            "mv": f"addmv input tensors must have the same dtype, but got {tb}, {ta}, and {tb}",
            "dot": f"dot : expected both vectors to have same dtype, but found {ta} and {tb}",
            "bmm": f"expected scalar type {ta} but found {tb}"}[what]
    raise fail(node, text)


def _mm_shapes(node: Ast, a: Tensor, b: Tensor) -> None:
    _dtypes(node, a, b, "mm")
    if a.shape[1] != b.shape[0]:
        raise fail(node, f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                         f"and {b.shape[0]}x{b.shape[1]})", DdxShapeError)


def mm(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    _mm_shapes(node, a, b)
    return ev.op("mm", node, [a, b])


def mv(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    _dtypes(node, a, b, "mv")
    if a.shape[1] != b.shape[0]:
        raise fail(node, f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                         f"{a.shape[1]}), vec ({b.shape[0]})", DdxShapeError)
    return ev.op("mv", node, [a, b])


def dot(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    if a.value.ndim != 1 or b.value.ndim != 1:
        raise fail(node, f"1D tensors expected, but got {a.value.ndim}D and {b.value.ndim}D "
                         "tensors", DdxShapeError)
    _dtypes(node, a, b, "dot")
    if a.shape != b.shape:
        n, m = a.shape[0], b.shape[0]
        raise fail(node, f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have "
                         f"the same number of elements, but got {n} and {m} elements "
                         "respectively", DdxShapeError)
    return ev.op("dot", node, [a, b])


def bmm(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    for name, t in (("batch1", a), ("batch2", b)):
        if t.value.ndim != 3:
            raise fail(node, f"{name} must be a 3D tensor", DdxShapeError)
    _dtypes(node, a, b, "bmm")
    want = [a.shape[0], a.shape[2]]
    if list(b.shape[:2]) != want:
        raise fail(node, f"Expected size for first two dimensions of batch2 tensor to be: {want} "
                         f"but got: {list(b.shape[:2])}.", DdxShapeError)
    return ev.op("bmm", node, [a, b])


def transpose(ev: Evaluating, node: Ast, a: Tensor, d0: int, d1: int) -> Tensor:
    return ev.op("transpose", node, [a], {"dim0": d0, "dim1": d1})


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """aten's should_fold: fold the larger operand's batch into mm/mv's rows."""
    first_larger = a.value.ndim >= b.value.ndim
    big = a.value if first_larger else np.swapaxes(b.value, -1, -2)
    small = b if first_larger else a
    strides = layout(a) if first_larger else layout(b)
    if not first_larger:
        strides = strides[:-2] + (strides[-1], strides[-2])
    if not (big.ndim >= 3 and small.value.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if a.value.ndim == 2:
        return False
    if big.size == 0:
        return True
    shape = big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _broadcast(node: Ast, s1: tuple, s2: tuple) -> tuple:
    n = max(len(s1), len(s2))
    p1, p2 = (1,) * (n - len(s1)) + s1, (1,) * (n - len(s2)) + s2
    for i in range(n - 1, -1, -1):
        if p1[i] != p2[i] and p1[i] != 1 and p2[i] != 1:
            raise fail(node, f"The size of tensor a ({p1[i]}) must match the size of tensor b "
                             f"({p2[i]}) at non-singleton dimension {i}", DdxShapeError)
    return tuple(max(x, y) if x and y else 0 for x, y in zip(p1, p2))


def matmul(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    try:
        return _matmul(ev, node, a, b)
    except DdxShapeError as exc:
        if exc.hint is None:
            exc.hint = f"'{node.value if node.kind == 'bin' else 'matmul'}' got shapes " \
                       f"{list(a.shape)} and {list(b.shape)}"
        raise


def _matmul(ev: Evaluating, node: Ast, a: Tensor, b: Tensor) -> Tensor:
    da, db = a.value.ndim, b.value.ndim
    if da == 0 or db == 0:
        raise fail(node, f"both arguments to matmul need to be at least 1D, but they are {da}D "
                         f"and {db}D", DdxShapeError)
    if da == 1 and db == 1:
        return dot(ev, node, a, b)
    if da == 2 and db == 1:
        return mv(ev, node, a, b)
    if da == 1 and db == 2:
        row = ev.op("unsqueeze", node, [a], {"dim": 0})
        return ev.op("squeeze", node, [mm(ev, node, row, b)], {"inplace": 0})
    if da == 2 and db == 2:
        return mm(ev, node, a, b)
    if _should_fold(a, b):
        flip = db > da
        t1 = transpose(ev, node, b, db - 2, db - 1) if flip else a
        t2 = (ev.op("t", node, [a]) if da == 2 else a) if flip else b
        rows = t1.shape[:-1]
        folded = reshape_to(ev, node, t1, (int(np.prod(rows)), t1.shape[-1]))
        if t2.value.ndim == 2:
            out = ev.op("unsafe_view", node, [mm(ev, node, folded, t2)],
                        {"shape": rows + (t2.shape[1],)})
            if not flip:
                return out
            out = transpose(ev, node, out, out.value.ndim - 2, out.value.ndim - 1)
            return ev.op("clone", node, [out], {"contiguous": True})
        return ev.op("unsafe_view", node, [mv(ev, node, folded, t2)], {"shape": rows})
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch1, batch2 = a.shape[:max(da - 2, 0)], b.shape[:max(db - 2, 0)]
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a.requires_grad:
            return _matmul(ev, node, ev.op("squeeze", node, [a], {"dim": 0}), b)
        if batch2[0] == 1 and b.requires_grad:
            return _matmul(ev, node, a, ev.op("squeeze", node, [b], {"dim": 0}))
    batch = _broadcast(node, batch1, batch2)
    count = int(np.prod(batch))
    check_elements(count * max(n * m1, m2 * p, n * p), f"'@' of shapes {list(a.shape)} and "
                                                       f"{list(b.shape)}")
    left = reshape_to(ev, node, expand_to(ev, node, a, batch + (n, m1)), (count, n, m1))
    if db == 1:
        right = reshape_to(ev, node, expand_to(ev, node, b, batch + (m2,)), (count, m2))
        right = ev.op("unsqueeze", node, [right], {"dim": 2})
    else:
        right = reshape_to(ev, node, expand_to(ev, node, b, batch + (m2, p)), (count, m2, p))
    out = bmm(ev, node, left, right)
    if db == 1:
        out = ev.op("squeeze", node, [out], {"dim": 2})
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return ev.op("unsafe_view", node, [out], {"shape": shape})


def call_matmul(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    return matmul(ev, node, *_two(ev, node, args, kw))


def call_mm(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, b = _two(ev, node, args, kw, ("input", "mat2"))
    if a.value.ndim != 2:
        raise fail(node, "self must be a matrix", DdxShapeError)
    if b.value.ndim != 2:
        raise fail(node, "mat2 must be a matrix", DdxShapeError)
    return mm(ev, node, a, b)


def call_mv(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, b = _two(ev, node, args, kw, ("input", "vec"))
    if a.value.ndim != 2 or b.value.ndim != 1:
        raise fail(node, f"vector + matrix @ vector expected, got 1, {a.value.ndim}, "
                         f"{b.value.ndim}", DdxShapeError)
    return mv(ev, node, a, b)


def call_dot(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    return dot(ev, node, *_two(ev, node, args, kw, ("input", "tensor")))


def call_bmm(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    return bmm(ev, node, *_two(ev, node, args, kw, ("input", "mat2")))


def call_outer(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, b = _two(ev, node, args, kw, ("input", "vec2"))
    for name, t in (("self", a), ("vec2", b)):
        if t.value.ndim != 1:
            raise fail(node, f"outer: Expected 1-D argument {name}, but got {t.value.ndim}-D",
                       DdxShapeError)
    check_elements(a.shape[0] * b.shape[0], "outer()")
    return ev.op("mul", node, [reshape_to(ev, node, a, (a.shape[0], 1)), b])


# --- transposes ---------------------------------------------------------------------------------

def call_transpose(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "dim0", "dim1"))
    a = tensor_arg(ev, node, given["input"])
    nd = a.value.ndim
    if "dim0" not in given and "dim1" not in given:  # ddx's transpose(A) of a matrix
        if nd > 2:
            raise fail(node, f"transpose() expects a tensor with <= 2 dimensions, but got "
                             f"{nd}D (give the two dims: transpose(x, 0, 1))", DdxShapeError)
        return transpose(ev, node, a, 0, 1 if nd == 2 else 0)
    if "dim0" not in given or "dim1" not in given:
        missing = "dim1" if "dim0" in given else "dim0"
        raise fail(node, f"{node.value}() missing required argument '{missing}'", DdxTypeError)
    return transpose(ev, node, a, dim_of(ev, node, given["dim0"], nd),
                     dim_of(ev, node, given["dim1"], nd))


def call_t(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 1, kw)
    a = tensor_arg(ev, node, args[0])
    if a.value.ndim > 2:
        raise fail(node, f"t() expects a tensor with <= 2 dimensions, but self is "
                         f"{a.value.ndim}D", DdxShapeError)
    return ev.op("t", node, [a])


def call_permute(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, args[0])
    rest = list(args[1:]) + ([kw["dims"][0]] if "dims" in kw else [])
    order = int_list(ev, node, rest)
    nd = a.value.ndim
    if len(order) != nd:
        raise fail(node, "permute(sparse_coo): number of dimensions in the tensor input does not "
                         "match the length of the desired ordering of dimensions i.e. input.dim()"
                         f" = {nd} is not equal to len(dims) = {len(order)}", DdxShapeError)
    dims = tuple(dim_of(ev, node, d, nd) for d in order)
    if len(set(dims)) != len(dims):
        raise fail(node, "permute(): duplicate dims are not allowed.")
    return ev.op("permute", node, [a], {"dims": dims})


T_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
             "deprecated and it will throw an error in a future release. Consider `x.mT` to "
             "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
             "to reverse the dimensions of a tensor.")


def call_T(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:  # noqa: N802
    """x.T: the dimensions reversed (PyTorch's PermuteBackward0, for a matrix too)."""
    a = tensor_arg(ev, node, args[0])
    nd = a.value.ndim
    if nd != 2:
        ev.warnings.append(T_WARNING if nd else "Tensor.T is deprecated on 0-D tensors. This "
                           "function is the identity in these cases.")
    return ev.op("permute", node, [a], {"dims": tuple(range(nd - 1, -1, -1))})


def call_mT(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:  # noqa: N802
    """x.mT (and x.mH, x.H, x.adjoint() of a real tensor): the last two dims swapped."""
    a = tensor_arg(ev, node, args[0])
    nd = a.value.ndim
    if nd < 2:
        raise fail(node, f"tensor.mT is only supported on matrices or batches of matrices. Got "
                         f"{nd}-D tensor.", DdxShapeError)
    return transpose(ev, node, a, nd - 2, nd - 1)


CALLERS: dict = {"dot": call_dot, "mv": call_mv, "mm": call_mm, "bmm": call_bmm,
                 "transpose": call_transpose, "t": call_t, "permute": call_permute,
                 **calls_matrix.CALLERS, **calls_select.CALLERS}
# (calls_select's flip, roll, gather... are shape rows; they join here because that module
# imports calls_shape's helpers, so that calls_shape cannot import it back)
NAMED: dict = {"einsum": calls_matrix.call_einsum, "matmul": call_matmul,
               "outer": call_outer, "ger": call_outer, "diag": calls_matrix.call_diag,
               "T_attr": call_T, "mT_attr": call_mT, "mH_attr": call_mT, "H_attr": call_mT,
               "adjoint": call_mT, "matrix_norm": calls_matrix.call_matrix_norm,
               **calls_select.NAMED}
NAMED_SPACES: dict = {"matmul": ("torch", "Tensor", "linalg"), "T_attr": (), "mT_attr": (),
                      "mH_attr": (), "H_attr": (), "outer": ("torch", "Tensor"),
                      "ger": ("torch", "Tensor"), "diag": ("torch", "Tensor"),
                      "adjoint": ("torch", "Tensor"), "matrix_norm": ("linalg",),
                      **calls_select.NAMED_SPACES}
KINDS: dict = {}
LISTS: set = {"einsum"}
