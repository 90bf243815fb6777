"""Kernels of the linalg rows (ddx/ops/rows_linalg.py): products, trace and diagonals, and
det/inv/solve/cholesky with PyTorch's backward formulas.

The rules are written with matmul and the array functions dual numbers carry (so the Hessian
runs through them); the matrix functions numpy gives dual numbers no derivative for (inv, solve)
are written here for them too: d(A^-1) = -A^-1 dA A^-1."""

from __future__ import annotations

import numpy as np

from . import kernels_einsum
from . import kernels_gemm as gemm
from .kernels_lu import det  # noqa: F401 - the det row's forward, re-exported
from .kernels_shape import on_parts, refuse


def _is_dual(x) -> bool:
    return not isinstance(x, (np.ndarray, np.generic, float, int)) and hasattr(x, "p") \
        and hasattr(x, "t")


def mT(a):  # noqa: N802 - PyTorch's name
    """The last two dimensions swapped (a batch of matrices transposed)."""
    n = np.ndim(a)
    return np.transpose(a, (*range(n - 2), n - 1, n - 2))


def inv(a):
    if _is_dual(a):
        p = np.linalg.inv(a.p)
        return type(a)(p, -(p @ a.t @ p))
    if not isinstance(a, (np.ndarray, np.generic)):
        return refuse(a)
    return np.linalg.inv(a)


def _solve_plain(a, b, vector: bool):
    if vector:
        return np.linalg.solve(a, np.asarray(b)[..., None])[..., 0]
    return np.linalg.solve(a, b)


def is_vector_rhs(a_shape, b_shape) -> bool:
    """PyTorch's linalg.solve: B is a (batch of) vector(s) when it has one dimension fewer."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1
                                 and tuple(b_shape) == tuple(a_shape[:-1]))


def solve(a, b):
    """X with A X = B; on dual numbers too: dX = A^-1 (dB - dA X)."""
    vector = is_vector_rhs(np.shape(a), np.shape(b))
    if not (_is_dual(a) or _is_dual(b)):
        if not isinstance(a, (np.ndarray, np.generic)):
            return refuse(a)
        return _solve_plain(a, b, vector)
    ap, at = (a.p, a.t) if _is_dual(a) else (np.asarray(a), None)
    bp, bt = (b.p, b.t) if _is_dual(b) else (np.asarray(b), None)
    x = _solve_plain(ap, bp, vector)
    rhs = np.zeros_like(x) if bt is None else np.asarray(bt, dtype=np.float64)
    if at is not None:
        rhs = rhs - (at @ x[..., None])[..., 0] if vector else rhs - at @ x
    dual = a if _is_dual(a) else b
    return type(dual)(x, _solve_plain(ap, rhs, vector))


def _outer_last(u, v, vector: bool):
    """u v^T over the last dimension (vector right-hand sides) or u @ v^T (matrices)."""
    if vector:
        return np.expand_dims(u, -1) * np.expand_dims(v, -2)
    return u @ mT(v)


def solve_vjp_a(g, o, a, b):
    gb = solve(mT(a), g)
    return -_outer_last(gb, o, is_vector_rhs(np.shape(a), np.shape(b)))


def solve_vjp_b(g, o, a, b):
    return solve(mT(a), g)


def solve_jvp(ts, o, a, b):
    ta, tb = ts
    vector = is_vector_rhs(np.shape(a), np.shape(b))
    rhs = np.zeros(np.shape(o)) if tb is None else np.broadcast_to(tb, np.shape(o))
    if ta is not None:
        ta = np.broadcast_to(ta, np.shape(a))
        rhs = rhs - ((ta @ o[..., None])[..., 0] if vector else ta @ o)
    return _solve_plain(a, rhs, vector)


def _det_grad_at_zero(o: np.ndarray, a: np.ndarray) -> np.ndarray:
    """det(A) A^-T per matrix of a batch, 0 where det(A) is 0 (PyTorch's backward is g det(A)
    times the inverse of a perturbed LU there, so 0)."""
    n = a.shape[-1]
    dets, mats = np.reshape(o, -1), np.reshape(a, (-1, n, n))
    out = np.zeros(mats.shape)
    for k, (d, m) in enumerate(zip(dets, mats)):
        if d != 0:
            out[k] = d * np.linalg.inv(m).T
    return out.reshape(a.shape)


def det_vjp(g, o, a):
    """d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T."""
    gg = np.expand_dims(np.expand_dims(g, -1), -1)
    if not _is_dual(a) and isinstance(a, np.ndarray) and np.any(np.asarray(o) == 0):
        return gg * _det_grad_at_zero(np.asarray(o), a)
    oo = np.expand_dims(np.expand_dims(o, -1), -1)
    return gg * (oo * mT(inv(a)))


def det_jvp(ts, o, a):
    (t,) = ts
    t = np.broadcast_to(t, np.shape(a))
    return np.sum(det_vjp(np.ones_like(o), o, a) * t, axis=(-2, -1))


def inv_vjp(g, o, a):
    return -(mT(o) @ g @ mT(o))


def lower_mask(shape, k: int = 0) -> np.ndarray:
    return np.tri(shape[-2], shape[-1], k, dtype=bool)


def cholesky(a, *, legacy=None, upper=None):
    """The factor of (A + A^T)/2: A itself where A is symmetric, as PyTorch assumes (it reads
    the lower triangle), so that the gradient, PyTorch's symmetric one, is the derivative.
    upper=True: U = L^T."""
    low = np.linalg.cholesky((a + mT(a)) / 2)
    return mT(low) if upper else low


def cholesky_vjp(g, o, a, *, legacy=None, upper=None):
    if upper:
        g, o = mT(g), mT(o)
    """PyTorch's cholesky_backward: P = tril(L^T gL) with its strictly lower part mirrored and
    everything halved; gA = L^-T P L^-1."""
    mask = lower_mask(np.shape(o))
    t = np.where(mask, mT(o) @ g, 0.0)
    p = 0.5 * (t + mT(np.where(lower_mask(np.shape(o), -1), t, 0.0)))
    linv = inv(o)
    return mT(linv) @ p @ linv


def cholesky_jvp(ts, o, a, *, legacy=None, upper=None):
    """dL = L Phi(L^-1 dA L^-T), Phi: the lower triangle with the diagonal halved."""
    if upper:
        return mT(cholesky_jvp(ts, mT(o), a))
    t = np.broadcast_to(ts[0], np.shape(a))
    linv = np.linalg.inv(o)
    m = linv @ ((t + mT(t)) / 2) @ mT(linv)
    phi = np.where(lower_mask(np.shape(o), -1), m, 0.0) + 0.5 * np.where(
        np.eye(np.shape(o)[-1], dtype=bool), m, 0.0)
    return o @ phi


def trace_vjp(g, o, a):
    return np.expand_dims(np.expand_dims(g, -1), -1) * np.eye(*np.shape(a)[-2:])


def diag_embed(a, *, diagonal=0):
    return np.diag(a, diagonal)


def diag_embed_back(g, o, a, *, diagonal=0):
    return on_parts(np.diagonal, g, diagonal)


def diagonal(a, *, offset=0, copy=None, dim1=0, dim2=1):
    """torch.diagonal: the diagonal of dims dim1, dim2, as the last dim (numpy's too): a view
    of ``a``, written through as PyTorch's (``x.diagonal().fill_(1)``; numpy's own is
    read-only until told otherwise); torch.diag's (``copy``) is a copy."""
    got = np.diagonal(a, offset, dim1, dim2)
    if copy or not isinstance(a, np.ndarray) or not a.flags.writeable:
        return got.copy()
    got.flags.writeable = True
    return got


def _diagonal_scatter(g, shape, offset, dim1=0, dim2=1):
    out = np.zeros(shape, dtype=g.dtype)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))  # (a view: written through)
    rows = np.arange(g.shape[-1])
    if offset >= 0:
        moved[..., rows, rows + offset] = g
    else:
        moved[..., rows - offset, rows] = g
    return out


def diagonal_back(g, o, a, *, offset=0, copy=None, dim1=0, dim2=1):
    return on_parts(_diagonal_scatter, g, np.shape(a), offset, dim1, dim2)


def bmm_vjp_a(g, o, a, b):
    """BmmBackward0's self: grad.bmm(mat2.transpose(1, 2))."""
    return gemm.bmm(g, mT(b))


def bmm_vjp_b(g, o, a, b):
    """BmmBackward0's mat2: self.transpose(1, 2).bmm(grad)."""
    return gemm.bmm(mT(a), g)


def lu_info(a: np.ndarray) -> int:
    """LAPACK getrf's info for a singular matrix: the 1-based index of the first zero pivot
    of the LU factorisation with partial pivoting (PyTorch names it in its error)."""
    u = np.array(a, dtype=np.float64)
    n = u.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return 0


def emit_solve(args, t, lib):
    if lib == "torch":
        return f"torch.linalg.solve({args[0]}, {args[1]})"
    a, b = t.inputs
    if is_vector_rhs(a.value.shape, b.value.shape) and b.value.ndim > 1:
        return f"jnp.linalg.solve({args[0]}, {args[1]}[..., None])[..., 0]"
    return f"jnp.linalg.solve({args[0]}, {args[1]})"


def emit_diagonal(args, t, lib):
    k = t.kw.get("offset", 0)
    dims = f", {t.kw['dim1']}, {t.kw['dim2']}" if "dim1" in t.kw else ""
    if lib == "jax":
        return f"jnp.diagonal({args[0]}, {k}{dims})"
    return f"torch.diag({args[0]}, {k})" if t.kw.get("copy") else \
        f"torch.diagonal({args[0]}, {k}{dims})"


# --- einsum -------------------------------------------------------------------------------------

def parse_einsum(equation: str, ndims: list[int]) -> tuple[list[str], str] | str:
    """PyTorch's einsum equation, its ellipses spelled out in capital letters: (the inputs'
    subscripts, the output's), or PyTorch's error text."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    for k, ch in enumerate(eq):
        if not (ch.isalpha() and ch.isascii()) and ch not in ",.->":
            return (f"einsum(): invalid subscript given at index {k} in the equation string, "
                    "subscripts must be in [a-zA-Z]")
    if len(ins) > len(ndims):
        return "einsum(): fewer operands were provided than specified in the equation"
    if len(ins) < len(ndims):
        return "einsum(): more operands were provided than specified in the equation"
    width = max([n - len(s.replace("...", "")) for s, n in zip(ins, ndims) if "..." in s],
                default=0)
    fill = "ZYXWVUTSRQPONMLKJIHGFEDCBA"[:width][::-1]
    out_ins = []
    for k, (s, n) in enumerate(zip(ins, ndims)):
        letters = len(s.replace("...", ""))
        if "..." in s:
            s = s.replace("...", fill[width - (n - letters):] if n > letters else "")
        elif letters != n:
            return (f"einsum(): the number of subscripts in the equation ({letters}) does not "
                    f"match the number of dimensions ({n}) for operand {k} and no ellipsis "
                    "was given")
        out_ins.append(s)
    if arrow:
        out = rhs.replace("...", fill)
        seen = set()
        for ch in out:
            if ch in seen:
                return f"einsum(): output subscript {ch} appears more than once in the output"
            if not any(ch in s for s in out_ins):
                return (f"einsum(): output subscript {ch} does not appear in the equation for "
                        "any input operand")
            seen.add(ch)
    else:
        counts = {}
        for s in out_ins:
            for ch in s:
                counts[ch] = counts.get(ch, 0) + 1
        out = fill + "".join(sorted(ch for ch, n in counts.items() if n == 1 and ch not in fill))
    return out_ins, out


def einsum_sizes(ins: list[str], shapes: list[tuple]) -> dict | str:
    sizes: dict[str, int] = {}
    for k, (s, shape) in enumerate(zip(ins, shapes)):
        for ch, n in zip(s, shape):
            have = sizes.get(ch)
            if have is None or have == 1:
                sizes[ch] = n
            elif n != have and n != 1:
                if ch.isupper():
                    return (f"einsum(): dimension {'ZYXWVUTSRQPONMLKJIHGFEDCBA'.index(ch)} "
                            f"covered by ellipsis in operand {k}has size {n} which does not "
                            f"broadcast with previously seen ellipsis with size {have} for the "
                            "respective dimension")
                return (f"einsum(): subscript {ch} has size {n} for operand {k} which does not "
                        f"broadcast with previously seen size {have}")
    return sizes


def _broadcast_subscripts(x, subs: str, sizes: dict):
    want = tuple(sizes[ch] for ch in subs)
    return x if np.shape(x) == want else np.broadcast_to(x, want)


def _einsum_any(eq: str, *ops):
    """np.einsum, also on dual numbers (it is linear in each operand: the product rule)."""
    duals = [k for k, x in enumerate(ops) if _is_dual(x)]
    plain = [x.p if _is_dual(x) else x for x in ops]
    for x in plain:
        if not isinstance(x, (np.ndarray, np.generic, float, int)):
            return refuse(x)
    value = np.einsum(eq, *plain)
    if not duals:
        return value
    tangent = sum(np.einsum(eq, *[ops[j].t if j == k else plain[j] for j in range(len(ops))])
                  for k in duals)
    return type(ops[duals[0]])(value, tangent)


def einsum(*xs, equation):
    exact = kernels_einsum.einsum(list(xs), equation)
    if exact is not None:
        return exact
    ins = equation.split("->")[0].split(",")
    sizes = einsum_sizes(ins, [np.shape(x) for x in xs])
    xs = [_broadcast_subscripts(x, s, sizes) for x, s in zip(xs, ins)]
    return np.einsum(equation, *xs)


def einsum_part(i: int):
    """The VJP of einsum's operand i: g contracted with the other operands, into operand i's
    subscripts (broadcast over those only it has, and onto its diagonal where a subscript
    repeats)."""
    def vjp(g, o, *xs, equation):
        exact = kernels_einsum.einsum_vjp(i, g, list(xs), equation)
        if exact is not None:
            return exact
        ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
        sizes = einsum_sizes(ins, [np.shape(x) for x in xs])
        others = [_broadcast_subscripts(x, s, sizes) for k, (x, s) in enumerate(zip(xs, ins))
                  if k != i]
        other_subs = [s for k, s in enumerate(ins) if k != i]
        mine = ins[i]
        unique = "".join(dict.fromkeys(mine))
        present = "".join(ch for ch in unique if ch in out or any(ch in s for s in other_subs))
        grad = _einsum_any(",".join([out, *other_subs]) + "->" + present, g, *others)
        for k, ch in enumerate(unique):  # subscripts summed away in operand i alone
            if ch not in present:
                grad = np.expand_dims(grad, k)
        grad = np.broadcast_to(grad, tuple(sizes[ch] for ch in unique)) if \
            np.shape(grad) != tuple(sizes[ch] for ch in unique) else grad
        if unique == mine:
            return grad
        return on_parts(_onto_diagonal, grad, mine, unique, sizes)
    return vjp


def _onto_diagonal(grad, mine: str, unique: str, sizes: dict):
    full = np.zeros(tuple(sizes[ch] for ch in mine), dtype=grad.dtype)
    view = np.einsum(f"{mine}->{unique}", full)
    view[...] = grad
    return full


def einsum_jvp(ts, o, *xs, equation):
    total = None
    for k, t in enumerate(ts):
        if t is None:
            continue
        ops = [np.broadcast_to(t, np.shape(xs[k])) if j == k else x for j, x in enumerate(xs)]
        part = einsum(*ops, equation=equation)
        total = part if total is None else total + part
    return total


def einsum_grad_fn(ins: list[str], out: str) -> str:
    """The node PyTorch's einsum ends with: a sum (one operand, subscripts summed), a permute
    (one operand, none summed), a product (no subscript contracted) or bmm's view."""
    if len(ins) == 1:
        return "SumBackward1" if set(ins[0]) - set(out) else "PermuteBackward0"
    return "ViewBackward0" if set("".join(ins)) - set(out) else "MulBackward0"


def emit_cholesky(args, t, lib):
    upper = ", upper=True" if t.kw.get("upper") else ""
    if lib == "torch":
        return f"torch.{'' if t.kw.get('legacy') else 'linalg.'}cholesky({args[0]}{upper})"
    low = f"jnp.linalg.cholesky({args[0]}, symmetrize_input=True)"
    return f"jnp.swapaxes({low}, -1, -2)" if upper else low
