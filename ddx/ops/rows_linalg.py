"""The op table's linalg rows (one op(...) call per op; see ddx/ops/table.py for a row's fields).

matmul is not one row: ddx/graph/calls_linalg.py records what PyTorch's matmul records for the
ranks it is given (dot, mv, mm, bmm, with the views, expands and squeezes around them)."""

from __future__ import annotations

import numpy as np

from . import kernels_gemm as gemm
from .kernels import bilinear, linear
from .kernels_linalg import (
    bmm_vjp_a,
    bmm_vjp_b,
    cholesky,
    cholesky_jvp,
    cholesky_vjp,
    det,
    det_jvp,
    det_vjp,
    diag_embed,
    diag_embed_back,
    diagonal,
    diagonal_back,
    einsum,
    einsum_jvp,
    einsum_part,
    emit_cholesky,
    emit_diagonal,
    emit_solve,
    inv,
    inv_vjp,
    solve,
    solve_jvp,
    solve_vjp_a,
    solve_vjp_b,
    trace_vjp,
)
from .kernels_shape import swap_back, swapped
from .table import OPS, Op, op

_LINALG = ("torch", "Tensor", "linalg")

op("dot", "DotBackward0", gemm.dot, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   jvp=bilinear(gemm.dot), elementwise=False, call="binary", shown="matmul", symbol="@",
   emit={"torch": "torch.dot({0}, {1})", "jax": "jnp.dot({0}, {1})"},
   example=("dot(x, y)", {"x": (3,), "y": (3,)}))
op("mv", "MvBackward0", gemm.mv, lambda g, o, a, b: np.outer(g, b),
   lambda g, o, a, b: gemm.mv(np.transpose(a), g),
   jvp=bilinear(gemm.mv), elementwise=False, call="binary", shown="matmul", text="{0} @ {1}",
   prec=2, emit={"torch": "torch.mv({0}, {1})", "jax": "({0} @ {1})"},
   example=("x @ y", {"x": (2, 3), "y": (3,)}))
op("mm", "MmBackward0", gemm.mm, lambda g, o, a, b: gemm.or_else(gemm.mm_grad_a(g, b, a), g, b.T),
   lambda g, o, a, b: gemm.or_else(gemm.mm_grad_b(g, a, b), a.T, g),
   jvp=bilinear(gemm.mm), elementwise=False, call="binary", shown="matmul", text="{0} @ {1}",
   prec=2, emit={"torch": "torch.mm({0}, {1})", "jax": "({0} @ {1})"},
   example=("x @ y", {"x": (2, 3), "y": (3, 2)}))
op("bmm", "BmmBackward0", gemm.bmm, bmm_vjp_a, bmm_vjp_b, jvp=bilinear(gemm.bmm),
   elementwise=False, call="binary", shown="matmul", text="{0} @ {1}", prec=2,
   emit={"torch": "torch.bmm({0}, {1})", "jax": "({0} @ {1})"},
   example=("bmm(x, y)", {"x": (2, 2, 3), "y": (2, 3, 2)}))
# transpose(x, dim0, dim1); ddx's own transpose(A) of a matrix is transpose(A, 0, 1)
op("transpose", "TransposeBackward0", swapped, swap_back, jvp=linear(swapped), saves=False,
   elementwise=False, reads="", call="shape", names=("swapaxes", "swapdims"),
   emit={"torch": "torch.transpose({0}, {dim0}, {dim1})",
         "jax": "jnp.swapaxes({0}, {dim0}, {dim1})"},
   example=("transpose(x, 0, 1)", {"x": (2, 3)}))
op("t", "TBackward0", np.transpose, lambda g, o, a: np.transpose(g), jvp=linear(np.transpose),
   saves=False, elementwise=False, reads="", call="shape",
   emit={"torch": "torch.t({0})", "jax": "jnp.transpose({0})"},
   example=("t(x)", {"x": (2, 3)}))
op("trace", "TraceBackward0", np.trace, trace_vjp, jvp=linear(np.trace), saves=False,
   elementwise=False, reads="", call="shape",
   emit={"torch": "torch.trace({0})", "jax": "jnp.trace({0})"},
   example=("trace(x)", {"x": (3, 3)}))
op("diag_embed", "DiagEmbedBackward0", diag_embed, diag_embed_back, jvp=linear(diag_embed),
   saves=False, elementwise=False, reads="", shown="diag",
   emit={"torch": "torch.diag({0}, {diagonal})", "jax": "jnp.diag({0}, {diagonal})"},
   example=("diag(x, 1)", {"x": (3,)}))
op("diagonal", "DiagonalBackward0", diagonal, diagonal_back, jvp=linear(diagonal), saves=False,
   elementwise=False, reads="", call="shape", variants={"copy": "DiagonalBackward0_copy"},
   spaces=_LINALG, emit={"torch": emit_diagonal, "jax": emit_diagonal},
   example=("diag(x, -1)", {"x": (3, 3)}))
op("det", "LinalgDetBackward0", det, det_vjp, jvp=det_jvp, elementwise=False, call="shape",
   spaces=_LINALG, emit={"torch": "torch.linalg.det({0})", "jax": "jnp.linalg.det({0})"},
   hint="det's gradient is det(A) A^-T: at a singular matrix it is the adjugate",
   example=("det(x + [[3, 1], [0, 3]])", {"x": (2, 2)}))
for _name, _spaces in (("inv", ("linalg",)), ("inverse", ("torch", "Tensor"))):
    op(_name, "LinalgInvExBackward0", inv, inv_vjp, jvp=lambda ts, o, a: -(o @ ts[0] @ o),
       elementwise=False, reads="o", call="shape", spaces=_spaces,
       emit={"torch": "torch.linalg.inv({0})", "jax": "jnp.linalg.inv({0})"},
       hint="the inverse of a nearly singular matrix is huge: check its condition number",
       example=(f"{_name}(x + [[3, 1], [0, 3]])", {"x": (2, 2)}))
op("solve", "LinalgSolveExBackward0", solve, solve_vjp_a, solve_vjp_b,
   jvp=solve_jvp,
   elementwise=False, call="shape", spaces=_LINALG,
   emit={"torch": emit_solve, "jax": emit_solve},
   example=("solve(x + [[3, 1], [0, 3]], y)", {"x": (2, 2), "y": (2,)}))
# torch.linalg.cholesky (and ddx's cholesky); torch.cholesky and x.cholesky() are the older
# CholeskyBackward0 (legacy=True). Both read A as symmetric: A and A^T give the same factor.
op("cholesky", "LinalgCholeskyExBackward0", cholesky, cholesky_vjp, jvp=cholesky_jvp,
   elementwise=False, reads="o", call="shape", spaces=_LINALG,
   variants={"legacy": "CholeskyBackward0"},
   emit={"torch": emit_cholesky, "jax": emit_cholesky},
   example=("cholesky(x @ transpose(x, 0, 1) + [[1, 0, 0], [0, 1, 0], [0, 0, 1]])",
            {"x": (3, 4)}))


def einsum_op(n: int) -> Op:
    """torch.einsum of n operands: one row per count (grad_fn: the node PyTorch's einsum ends
    with, given by the caller)."""
    name = f"einsum{n}"
    if name not in OPS:
        op(name, "ViewBackward0", einsum, *(einsum_part(i) for i in range(n)), jvp=einsum_jvp,
           elementwise=False, shown="einsum",
           emit={"torch": lambda args, t, lib: f"torch.einsum({t.kw['equation']!r}, "
                                               f"{', '.join(args)})",
                 "jax": lambda args, t, lib: f"jnp.einsum({t.kw['equation']!r}, "
                                             f"{', '.join(args)})"},
           example=(("einsum('ij,jk->ik', x, y)", {"x": (2, 3), "y": (3, 2)}) if n == 2 else
                    ("einsum('ii->i', x)", {"x": (3, 3)}) if n == 1 else
                    ("einsum('i,ij,j->', y, x, y)", {"x": (3, 3), "y": (3,)})))
    return OPS[name]


for _n in (1, 2, 3):
    einsum_op(_n)
