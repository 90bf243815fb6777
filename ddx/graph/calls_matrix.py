"""Callers for the matrix functions of the linalg rows: trace, diag, diagonal, det, inv,
solve, cholesky and einsum (their tables join ddx/graph/calls_linalg.py's)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxShapeError, DdxTypeError
from ..lang.tree import Ast
from ..limits import check_elements
from ..ops.kernels_linalg import (
    einsum_grad_fn,
    einsum_sizes,
    is_vector_rhs,
    lu_info,
    parse_einsum,
)
from ..ops.rows_linalg import einsum_op
from .args import Evaluating, bind
from .calls_shape import dim_of, fail, int_list, tensor_arg
from .tensor import Tensor
from .values import truth, weak


def _two(ev: Evaluating, node: Ast, args: list, kw: dict, names: tuple):
    given = bind(node, args, kw, names, required=2)
    return tuple(tensor_arg(ev, node, given[n]) for n in names)


def _square(node: Ast, name: str, a: Tensor) -> None:
    if a.value.ndim < 2:
        raise fail(node, f"linalg.{name}: The input tensor A must have at least 2 dimensions.",
                   DdxShapeError)
    if a.shape[-1] != a.shape[-2]:
        raise fail(node, f"linalg.{name}: A must be batches of square matrices, but they are "
                         f"{a.shape[-2]} by {a.shape[-1]} matrices", DdxShapeError)


def _spelled_linalg(node: Ast) -> bool:
    """Whether the call is torch.linalg.X(...) (torch.X(...) and x.X() are the older ops)."""
    if node.kind != "method":
        return True  # (the bare name)
    obj = node.kids[0]
    return obj.kind == "attr" and obj.value == "linalg"


def _one_matrix(name: str, check=None):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        names = ("input", "upper") if name == "cholesky" else ("input",)
        given = bind(node, args, kw, names)
        a = tensor_arg(ev, node, given["input"])
        _square(node, "inv" if name == "inverse" else name, a)
        if check is not None:
            check(node, a.value)
        extra = {}
        if name == "cholesky" and not _spelled_linalg(node):
            extra["legacy"] = True
        if name == "cholesky" and truth(given.get("upper", False)):
            extra["upper"] = True
        return ev.op(name, node, [a], extra)
    return call


def _singular(node: Ast, a: np.ndarray) -> None:
    for k, m in enumerate(a.reshape(-1, *a.shape[-2:])):
        info = lu_info(m)
        if info:
            where = f"(Batch element {k}): " if a.ndim > 2 else ""
            raise fail(node, f"linalg.inv: {where}The diagonal element {info} is zero, the "
                             "inversion could not be completed because the input matrix is "
                             "singular.")


def _positive_definite(node: Ast, a: np.ndarray) -> None:
    for k, m in enumerate(a.reshape(-1, *a.shape[-2:])):
        for order in range(1, m.shape[0] + 1):
            try:
                np.linalg.cholesky(m[:order, :order])
            except np.linalg.LinAlgError:
                where = f"(Batch element {k}): " if a.ndim > 2 else ""
                raise fail(node, f"linalg.cholesky: {where}The factorization could not be "
                                 "completed because the input is not positive-definite (the "
                                 f"leading minor of order {order} is not positive-definite)."
                           ) from None


def call_solve(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a, b = _two(ev, node, args, kw, ("A", "B"))
    _square(node, "solve", a)
    if a.value.dtype != b.value.dtype:
        names = {"float32": "Float", "float64": "Double"}
        ta, tb = (names.get(str(t.value.dtype), str(t.value.dtype)) for t in (a, b))
        raise fail(node, f"linalg.solve: Expected A and B to have the same dtype, but found A of "
                         f"type {ta} and B of type {tb} instead")
    vector = is_vector_rhs(a.shape, b.shape)
    rows = b.shape[-1] if vector else (b.shape[-2] if b.value.ndim >= 2 else b.shape[0])
    if rows != a.shape[-1] or b.value.ndim == 0:
        cols = 1 if vector else b.shape[-1]
        raise fail(node, f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                         f"({a.shape[-2]}x{a.shape[-1]} and {rows}x{cols})", DdxShapeError)
    if any(lu_info(m) for m in a.value.reshape(-1, *a.shape[-2:])):
        raise fail(node, "torch.linalg.solve: The solver failed because the input matrix is "
                         "singular.")
    return ev.op("solve", node, [a, b])


def call_trace(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input",))["input"])
    if a.value.ndim != 2:
        raise fail(node, f"trace: expected a matrix, but got tensor with dim {a.value.ndim}",
                   DdxShapeError)
    return ev.op("trace", node, [a])


def call_diag(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "diagonal"))
    a = tensor_arg(ev, node, given["input"])
    k = int_list(ev, node, [given.get("diagonal", 0)])[0]
    if a.value.ndim == 1:
        check_elements((a.shape[0] + abs(k)) ** 2, "diag() of a vector")
        return ev.op("diag_embed", node, [a], {"diagonal": k})
    if a.value.ndim == 2:
        return ev.op("diagonal", node, [a], {"offset": k, "copy": True})
    raise fail(node, f"diag(): Supports 1D or 2D tensors. Got {a.value.ndim}D", DdxShapeError)


def call_diagonal(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "offset", "dim1", "dim2"))
    a = tensor_arg(ev, node, given["input"])
    if a.value.ndim < 2:
        raise fail(node, f"diagonal dimensions requires ndim larger than 1, but got "
                         f"{a.value.ndim}", DdxShapeError)
    dims = (dim_of(ev, node, given.get("dim1", 0), a.value.ndim),
            dim_of(ev, node, given.get("dim2", 1), a.value.ndim))
    if dims[0] == dims[1]:
        raise fail(node, f"diagonal dimensions cannot be identical {dims[0]}, {dims[1]}",
                   DdxShapeError)
    kw = {"offset": int_list(ev, node, [given.get("offset", 0)])[0]}
    if dims != (0, 1) or a.value.ndim != 2:  # (numpy's default dims are 0, 1 too)
        kw.update(dim1=dims[0], dim2=dims[1])
    return ev.op("diagonal", node, [a], kw)


def call_einsum(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    if kw:
        name = next(iter(kw))
        raise fail(node, f"einsum() got an unexpected keyword argument '{name}'", DdxTypeError)
    if not args or not isinstance(args[0], str):
        raise fail(node, "einsum(): argument 'equation' must be str (write it in quotes: "
                         "einsum('ij,jk->ik', a, b))", DdxTypeError)
    operands = list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    xs = [tensor_arg(ev, node, x) for x in operands]
    parsed = parse_einsum(args[0], [x.value.ndim for x in xs])
    if isinstance(parsed, str):
        raise fail(node, parsed)
    ins, out = parsed
    sizes = einsum_sizes(ins, [x.shape for x in xs])
    if isinstance(sizes, str):
        raise fail(node, sizes, DdxShapeError)
    check_elements(int(np.prod([sizes[ch] for ch in out])), f"einsum() to '{out}'")
    return ev.op(einsum_op(len(xs)).name, node, xs, {"equation": ",".join(ins) + "->" + out},
                 grad_fn=einsum_grad_fn(ins, out))


def call_matrix_norm(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """torch.linalg.matrix_norm: 'fro' is the vector norm over the two matrix dims; 1, -1,
    inf, -inf the largest or smallest column or row sum of |A| (the nodes PyTorch records)."""
    given = bind(node, args, kw, ("A", "ord", "dim", "keepdim"))
    a = tensor_arg(ev, node, given["A"])
    if a.value.ndim < 2:
        raise fail(node, "linalg.matrix_norm: The input tensor A must have at least 2 "
                         "dimensions.", DdxShapeError)
    order = given.get("ord", "fro")
    if isinstance(order, Tensor) and order.weak:
        order = float(order.value)
    dims = given.get("dim", (weak(-2), weak(-1)))
    if not isinstance(dims, (tuple, list)) or len(dims) != 2:
        raise fail(node, "linalg.matrix_norm: dim must be a 2-tuple. Got "
                         f"{list(dims) if isinstance(dims, (tuple, list)) else dims}")
    d0, d1 = (dim_of(ev, node, d, a.value.ndim) for d in dims)
    keep = given.get("keepdim", False)
    pos = node.pos
    if order == "fro":
        return ev.functions["vector_norm"](ev, node, [a, weak(2), (weak(d0), weak(d1))],
                                           {"keepdim": (keep, pos)})
    if order not in (1.0, -1.0, np.inf, -np.inf):
        raise fail(node, f"linalg.matrix_norm: ord={order!r} is not supported by ddx (its "
                         "'fro', 1, -1, inf and -inf are)", DdxTypeError)
    summed, other = (d0, d1) if abs(order) == 1 else (d1, d0)
    keeping = keep is True or (isinstance(keep, Tensor) and bool(keep.value))
    if not keeping and summed < other:
        other -= 1  # (the first reduction took a dim before it away)
    sums = ev.functions["vector_norm"](ev, node, [a, weak(1), weak(summed)],
                                       {"keepdim": (keeping, pos)})
    pick = "amax" if order > 0 else "amin"
    return ev.functions[pick](ev, node, [sums, weak(other)], {"keepdim": (keeping, pos)})


CALLERS: dict = {"trace": call_trace, "diagonal": call_diagonal,
                 "det": _one_matrix("det"), "inv": _one_matrix("inv", _singular),
                 "inverse": _one_matrix("inverse", _singular),
                 "cholesky": _one_matrix("cholesky", _positive_definite), "solve": call_solve}
