"""einsum as ATen computes it (Linear.cpp's einsum and sumproduct_pair) for float32/float64
arrays. One operand: its diagonals where a subscript repeats, permuted, torch.sum over the
contracted subscripts (_one). Two, each subscript once per operand (capitals only where the
output keeps them, see _applies): the operands
permuted to the output's subscripts then the contracted ones in label order, a subscript only
one operand has summed first (torch.sum), then either a product (nothing contracted) or
torch.bmm of the operands reshaped to (both, left only, contracted) and (both, contracted,
right only), viewed and permuted back. The gradients are the ones PyTorch's autograd makes of
that chain (BmmBackward0's grad.bmm(b^T) and a^T.bmm(grad), sums expanded back, the product's
gradient summed to the operand's shape). None where this does not apply (np.einsum then)."""

from __future__ import annotations

import numpy as np

from . import kernels_gemm as gemm
from .kernels_sum import torch_sum

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _applies(xs, equation: str) -> bool:
    """Two operands, each subscript once per operand, or one operand; capital letters (an
    ellipsis's dims, as parse_einsum spells them, or the user's) only where the output keeps
    them: the contracted subscripts go in label order, which for letters is sorted order."""
    if len(xs) not in (1, 2) or "->" not in equation:
        return False
    if not all(type(x) is np.ndarray and x.dtype in _FLOATS for x in xs) or \
            xs[0].dtype != xs[-1].dtype:
        return False
    ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
    if len(ins) != len(xs) or not all(len(s) == x.ndim for s, x in zip(ins, xs)):
        return False
    if any(ch.isupper() and ch not in out for s in ins for ch in s):
        return False
    return len(xs) == 1 or all(len(set(s)) == len(s) for s in ins)


def _one(x: np.ndarray, subs: str, out: str):
    """ATen's einsum of one operand: each repeated subscript's diagonal (diagonal(0, first,
    again), moved to the first's place), the operand permuted to the output's subscripts then
    the contracted ones in label order, and torch.sum over those (the view itself when none)."""
    labels = list(subs)
    k = 0
    while k < len(labels):
        first = labels.index(labels[k])
        if first < k:
            x = np.moveaxis(np.diagonal(x, 0, first, k), -1, first)
            del labels[k]
        else:
            k += 1
    rest = sorted(set(labels) - set(out))
    v = np.transpose(x, [labels.index(ch) for ch in list(out) + rest])
    if not rest:
        return v
    return np.asarray(torch_sum(v, tuple(range(len(out), len(out) + len(rest)))))


def _full(x: np.ndarray, subs: str, perm: list) -> np.ndarray:
    """x permuted to ``perm``'s order, a size-1 dim for each subscript it lacks."""
    mine = [subs.index(ch) for ch in perm if ch in subs]
    v = np.transpose(x, mine) if mine else x
    shape = [x.shape[subs.index(ch)] if ch in subs else 1 for ch in perm]
    return v.reshape(shape)


def _contracted(a_shape: tuple, b_shape: tuple, counts: list, start: int) -> tuple:
    """einsum's contraction loop for one pair (Linear.cpp): of the contracted dims (from
    ``start``), those the pair alone still has (summed in its product), and those only a or
    only b has (summed on that side first); ``counts`` (operands with the dim not 1) is
    brought up to date."""
    sum_dims, a_dims, b_dims = [], [], []
    for d in range(start, len(counts)):
        if a_shape[d] != 1 and b_shape[d] != 1:
            counts[d] -= 1
            if counts[d] == 1:
                sum_dims.append(d)
                counts[d] = 0
        elif counts[d] == 1:
            if a_shape[d] != 1:
                a_dims.append(d)
                counts[d] = 0
            elif b_shape[d] != 1:
                b_dims.append(d)
                counts[d] = 0
    return sum_dims, a_dims, b_dims


class _Plan:
    """The chain of one call: what is summed first, and the bmm's layouts."""

    def __init__(self, xs, equation: str) -> None:
        ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
        rest = sorted(set(ins[0] + ins[1]) - set(out))
        self.perm = list(out) + rest
        self.out_size = len(out)
        self.ins = ins
        self.shapes = [x.shape for x in xs]
        a, b = (_full(x, s, self.perm) for x, s in zip(xs, ins))
        self.full_shapes = [a.shape, b.shape]
        counts = [int(a.shape[j] != 1) + int(b.shape[j] != 1) for j in range(len(self.perm))]
        sum_dims, a_dims, b_dims = _contracted(a.shape, b.shape, counts, self.out_size)
        self.pre = [a_dims, b_dims]  # dims summed first (keepdim), per operand
        self.sum_dims = sum_dims

    def operands(self, xs) -> list:
        ops = []
        for k, (x, s) in enumerate(zip(xs, self.ins)):
            v = _full(x, s, self.perm)
            for j in self.pre[k]:
                v = np.asarray(torch_sum(v, (j,), True))
            ops.append(v)
        return ops

    def pair(self, left, right) -> tuple:
        """sumproduct_pair's classification (left and right already summed)."""
        lro, lo, ro, inner = [], [], [], []
        for i in range(left.ndim):
            sl, sr = left.shape[i] != 1, right.shape[i] != 1
            if i in self.sum_dims:
                if sl and sr:
                    continue
                side = 0 if sl else 1 if sr else None
                if side is not None:
                    inner.append((side, i))
            elif sl and sr:
                lro.append(i)
            elif sl:
                lo.append(i)
            else:
                ro.append(i)
        return lro, lo, ro, inner


def _size(shape, dims) -> int:
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))


def _forward_parts(plan: _Plan, xs):
    left, right = plan.operands(xs)
    if not plan.sum_dims:
        return None, left, right
    lro, lo, ro, inner = plan.pair(left, right)
    for side, i in inner:  # (a summed dim nontrivial on one side only: summed there first)
        if side == 0:
            left = np.asarray(torch_sum(left, (i,), True))
        else:
            right = np.asarray(torch_sum(right, (i,), True))
    sd = plan.sum_dims
    lperm, rperm = lro + lo + sd + ro, lro + sd + ro + lo
    left_r = np.transpose(left, lperm).reshape(_size(left.shape, lro), _size(left.shape, lo),
                                               _size(left.shape, sd))
    right_r = np.transpose(right, rperm).reshape(_size(right.shape, lro),
                                                 _size(right.shape, sd),
                                                 _size(right.shape, ro))
    return (lro, lo, ro, inner, lperm, rperm, left, right), left_r, right_r


def _sides(lshape: tuple, rshape: tuple, sum_dims: list) -> tuple:
    """sumproduct_pair's kept dims: in both (lro), left only (lo), the rest (ro)."""
    lro, lo, ro = [], [], []
    for i in range(len(lshape)):
        if i not in sum_dims:
            (lro if lshape[i] != 1 and rshape[i] != 1 else lo if lshape[i] != 1 else ro).append(i)
    return lro, lo, ro


def _sumproduct_pair(left: np.ndarray, right: np.ndarray, sum_dims: list) -> np.ndarray:
    """Linear.cpp's sumproduct_pair (keepdim): (left*right) summed over sum_dims, by a
    product, or by bmm of the operands permuted and reshaped (a dim only one side has is
    summed on that side first)."""
    if not sum_dims:
        return left * right
    for i in sum_dims:
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if sl and not sr:
            left = np.asarray(torch_sum(left, (i,), True))
        elif sr and not sl:
            right = np.asarray(torch_sum(right, (i,), True))
    lro, lo, ro = _sides(left.shape, right.shape, sum_dims)
    sum_size = _size(left.shape, sum_dims)
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    order = lro + lo + sum_dims + ro
    lmat = np.transpose(left, order).reshape(_size(left.shape, lro), _size(left.shape, lo),
                                             sum_size)
    rmat = np.transpose(right, lro + sum_dims + ro + lo).reshape(
        _size(right.shape, lro), sum_size, _size(right.shape, ro))
    res = gemm.bmm(lmat, rmat).reshape(out_size)
    return np.transpose(res, [order.index(d) for d in range(left.ndim)])


def _path(equation: str, xs) -> list | None:
    """The contraction order torch.einsum asks ATen for: opt_einsum's path ("auto") when that
    package is installed, as torch.backends.opt_einsum takes it; else None (left to right)."""
    try:
        import opt_einsum
    except ImportError:
        return None
    steps = opt_einsum.contract_path(equation, *xs, optimize="auto")[0]
    return [k for pair in steps for k in pair]


def _many(xs, equation: str, tape: list | None = None):
    """ATen's einsum of three operands or more: the operands permuted to the output's then
    the contracted subscripts, contracted two at a time in the path's order (a dim the pair
    alone still has summed in the pair's product, one only one of them has summed on that
    side first), the contracted dims of the last result viewed away. ``tape`` receives each
    step: (the sources of a and b: ("x", k) or ("step", n), a and b before and after their
    sums, sum_dims)."""
    ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
    perm = list(out) + sorted(set("".join(ins)) - set(out))
    ops = [(_full(x, s, perm), ("x", k)) for k, (x, s) in enumerate(zip(xs, ins))]
    counts = [sum(o.shape[d] != 1 for o, _ in ops) for d in range(len(perm))]
    path = _path(equation, xs)
    steps = iter(path or [])
    n = 0
    while len(ops) > 1:
        i, j = (next(steps), next(steps)) if path else (0, 1)
        i, j = min(i, j), max(i, j)
        (a0, a_src), (b0, b_src) = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_dims, b_dims = _contracted(a0.shape, b0.shape, counts, len(out))
        a = np.asarray(torch_sum(a0, tuple(a_dims), True)) if a_dims else a0
        b = np.asarray(torch_sum(b0, tuple(b_dims), True)) if b_dims else b0
        made = (_sumproduct_pair(a, b, sum_dims), ("step", n))
        if tape is not None:
            tape.append(((a_src, b_src), (a0, a), (b0, b), sum_dims))
        n += 1
        if path:
            ops.append(made)
        else:
            ops.insert(0, made)
    return ops[0][0].reshape(ops[0][0].shape[:len(out)])


def _pair_grads(g: np.ndarray, a: np.ndarray, b: np.ndarray, sum_dims: list) -> tuple:
    """The gradients of _sumproduct_pair(a, b, sum_dims) (both sides two-sided: einsum's
    pairs), as autograd makes them: MulBackward0's grad * other summed to each shape, or
    BmmBackward0's grad.bmm(b^T) and a^T.bmm(grad) through the views."""
    dt = a.dtype
    if not sum_dims:
        out = []
        for mine, other in ((a, b), (b, a)):
            prod = np.asarray(np.broadcast_to(g, np.broadcast_shapes(a.shape, b.shape)) * other,
                              dt)
            axes = tuple(k for k, m in enumerate(mine.shape) if m == 1 and prod.shape[k] != 1)
            out.append(np.asarray(torch_sum(prod, axes, True), dt) if axes else prod)
        return tuple(out)
    lro, lo, ro = _sides(a.shape, b.shape, sum_dims)
    lperm, rperm = lro + lo + sum_dims + ro, lro + sum_dims + ro + lo
    sum_size = _size(a.shape, sum_dims)
    lmat = np.transpose(a, lperm).reshape(_size(a.shape, lro), _size(a.shape, lo), sum_size)
    rmat = np.transpose(b, rperm).reshape(_size(b.shape, lro), sum_size, _size(b.shape, ro))
    g_r = np.transpose(np.broadcast_to(g, [a.shape[d] if d in lro + lo else b.shape[d]
                                           if d in ro else 1 for d in range(a.ndim)]),
                       lro + lo + sum_dims + ro).reshape(lmat.shape[0], lmat.shape[1],
                                                         rmat.shape[2])
    ga = gemm.bmm(g_r, np.transpose(rmat, (0, 2, 1)))
    gb = gemm.bmm(np.transpose(lmat, (0, 2, 1)), g_r)
    ga = np.transpose(ga.reshape([a.shape[d] for d in lperm]), np.argsort(lperm))
    gb = np.transpose(gb.reshape([b.shape[d] for d in rperm]), np.argsort(rperm))
    return ga, gb


def _many_vjp(i: int, g, xs, equation: str):
    """Operand i's gradient of _many, back through its tape."""
    tape: list = []
    _many(xs, equation, tape)
    ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
    perm = list(out) + sorted(set("".join(ins)) - set(out))
    g = np.asarray(g, xs[0].dtype)
    grads = {("step", len(tape) - 1): g.reshape(g.shape + (1,) * (len(perm) - g.ndim))}
    for n in range(len(tape) - 1, -1, -1):
        (a_src, b_src), (a0, a), (b0, b), sum_dims = tape[n]
        ga, gb = _pair_grads(grads.pop(("step", n)), a, b, sum_dims)
        grads[a_src] = np.broadcast_to(ga, a0.shape)  # (SumBackward1: the grad expanded)
        grads[b_src] = np.broadcast_to(gb, b0.shape)
    grad = grads[("x", i)]
    subs = ins[i]
    keep = [j for j, ch in enumerate(perm) if ch in subs]
    grad = grad.reshape([grad.shape[j] for j in keep])
    labels = [perm[j] for j in keep]
    # (contiguous, as the .grad AccumulateGrad keeps for a contiguous leaf; autograd.grad's
    # own result can be a permuted view in PyTorch, whose later sum adds in another order)
    return np.ascontiguousarray(np.transpose(grad, [labels.index(ch) for ch in subs]))


def _many_applies(xs, equation: str) -> bool:
    if len(xs) < 3 or "->" not in equation or not all(
            type(x) is np.ndarray and x.dtype == xs[0].dtype and x.dtype in _FLOATS for x in xs):
        return False
    ins, out = equation.split("->")[0].split(","), equation.split("->")[1]
    return len(ins) == len(xs) and all(len(s) == x.ndim and len(set(s)) == len(s)
                                       for s, x in zip(ins, xs)) and \
        not any(ch.isupper() and ch not in out for ch in "".join(ins))


def einsum(xs, equation: str):
    if _many_applies(xs, equation):
        return _many(xs, equation)
    if not _applies(xs, equation):
        return None
    if len(xs) == 1:
        return _one(xs[0], equation.split("->")[0], equation.split("->")[1])
    plan = _Plan(xs, equation)
    parts, left, right = _forward_parts(plan, xs)
    if parts is None:
        result = left * right
    else:
        lro, lo, ro, _, _, _, lfull, rfull = parts
        res = gemm.bmm(left, right)
        sizes = [lfull.shape[d] for d in lro] + [lfull.shape[d] for d in lo] + \
            [1] * len(plan.sum_dims) + [rfull.shape[d] for d in ro]
        order = lro + lo + plan.sum_dims + ro
        operm = [order.index(d) for d in range(lfull.ndim)]
        result = np.transpose(res.reshape(sizes), operm)
    out_shape = result.shape[:plan.out_size]
    return np.ascontiguousarray(result).reshape(out_shape)


def _back_to_operand(grad_full: np.ndarray, plan: _Plan, k: int, x_shape: tuple):
    """From operand k's (summed) full view back to its own shape: the sums expanded, the
    size-1 dims dropped, the permutation undone."""
    full = plan.full_shapes[k]
    grad = np.broadcast_to(grad_full, full)
    subs = plan.ins[k]
    keep = [j for j, ch in enumerate(plan.perm) if ch in subs]
    grad = grad.reshape([full[j] for j in keep])
    labels = [plan.perm[j] for j in keep]
    return np.ascontiguousarray(np.transpose(grad, [labels.index(ch) for ch in subs]))


def einsum_vjp(i: int, g, xs, equation: str):
    if _many_applies(xs, equation) and (type(g) is np.ndarray or isinstance(g, np.generic)):
        return _many_vjp(i, g, xs, equation)
    if len(xs) != 2 or not _applies(xs, equation) or \
            not (type(g) is np.ndarray or isinstance(g, np.generic)):
        return None  # (one operand: the general rule's copies and sums are exact)
    plan = _Plan(xs, equation)
    dt = xs[0].dtype
    parts, left, right = _forward_parts(plan, xs)
    ndim = len(plan.perm)
    g = np.asarray(g, dt)
    if parts is None:
        out_full = np.broadcast_shapes(left.shape, right.shape)
        gf = np.broadcast_to(g.reshape(g.shape + (1,) * (ndim - g.ndim)), out_full)
        mine, other = (left, right) if i == 0 else (right, left)
        prod = np.asarray(gf * other, dt)
        axes = tuple(j for j, n in enumerate(mine.shape) if n == 1 and prod.shape[j] != 1)
        grad_full = np.asarray(torch_sum(prod, axes, True), dt) if axes else prod  # (sum_to)
        return _back_to_operand(grad_full, plan, i, xs[i].shape)
    lro, lo, ro, inner, lperm, rperm, lfull, rfull = parts
    sizes = [lfull.shape[d] for d in lro] + [lfull.shape[d] for d in lo] + \
        [1] * len(plan.sum_dims) + [rfull.shape[d] for d in ro]
    order = lro + lo + plan.sum_dims + ro
    gfull = np.broadcast_to(g.reshape(g.shape + (1,) * (ndim - g.ndim)),
                            tuple(np.transpose(np.empty(sizes, np.int8),
                                               [order.index(d) for d in range(ndim)]).shape))
    g_r = np.transpose(gfull, order).reshape(  # (a view where one is possible, as torch's)
        _size(lfull.shape, lro), _size(lfull.shape, lo), _size(rfull.shape, ro))
    if i == 0:
        grad_r = gemm.bmm(g_r, np.transpose(right, (0, 2, 1)))
        grad = np.transpose(grad_r.reshape([lfull.shape[d] for d in lperm]),
                            np.argsort(lperm))
    else:
        grad_r = gemm.bmm(np.transpose(left, (0, 2, 1)), g_r)
        grad = np.transpose(grad_r.reshape([rfull.shape[d] for d in rperm]),
                            np.argsort(rperm))
    return _back_to_operand(grad, plan, i, xs[i].shape)
