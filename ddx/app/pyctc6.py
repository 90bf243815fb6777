"""torch.nn.functional.ctc_loss and nn.CTCLoss as ATen's CPU kernels compute them
(LossCTC.cpp): the forward variables alpha over the blank-extended targets in log space
(each step ``log(exp(a1 - m) + exp(a2 - m) + exp(a3 - m)) + m + log_prob``, with the C
library's exp and log), the backward variables beta and the per-character sums of
alpha + beta that make the gradient ``exp(lp) - exp(sum + nll - lp)`` times the upstream
gradient; then ``reduction`` as ctc_loss_impl applies it (the mean divides each loss by its
target length, clamped to 1)."""

from __future__ import annotations

import math

import numpy as np

from ..graph.tensor import Tensor
from ..ops.kernels_cpu import log_c
from ..ops.kernels_unary import c_library
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, error, num, tensor
from .pyfused import fused
from .pymodules import EXTRA, Native
from .pynn6 import Module6

exp_c = c_library(np.exp, math.exp, "expf")


def _primes(targets: np.ndarray, offset: int, length: int, blank: int) -> np.ndarray:
    """The target with a blank before, between and after its labels."""
    out = np.full(2 * length + 1, blank, dtype=np.int64)
    out[1::2] = targets[offset:offset + length]
    return out


def _logsum3(a, b, c, dt):
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == -np.inf, dt.type(0), m).astype(dt)
    total = ((exp_c((a - m).astype(dt)) + exp_c((b - m).astype(dt))).astype(dt) +
             exp_c((c - m).astype(dt))).astype(dt)
    return (log_c(total) + m).astype(dt)


def _alpha(lp: np.ndarray, tp: np.ndarray, steps: int, dt) -> np.ndarray:
    L = tp.size
    alpha = np.full((max(steps, 1), L), -np.inf, dtype=dt)
    alpha[0, 0] = lp[0, tp[0]]
    if L > 1:
        alpha[0, 1] = lp[0, tp[1]]
    skip = np.zeros(L, dtype=bool)
    skip[2:] = tp[2:] != tp[:-2]
    for t in range(1, steps):
        a1 = alpha[t - 1]
        a2 = np.concatenate([[-np.inf], a1[:-1]]).astype(dt)
        a3 = np.where(skip, np.concatenate([[-np.inf, -np.inf], a1[:-2]]), -np.inf).astype(dt)
        alpha[t] = (_logsum3(a1, a2, a3, dt) + lp[t, tp]).astype(dt)
    return alpha


def _nll(alpha: np.ndarray, steps: int, length: int, dt) -> float:
    if steps == 0:
        return 0.0 if length == 0 else math.inf
    if length == 0:
        return -float(alpha[steps - 1, 0])
    l1, l2 = alpha[steps - 1, 2 * length], alpha[steps - 1, 2 * length - 1]
    m = max(l1, l2)
    m = dt.type(0) if m == -np.inf else m
    total = (exp_c(dt.type(l1 - m)) + exp_c(dt.type(l2 - m))).astype(dt)
    return -float((log_c(total) + m).astype(dt))


def _log_add(a, b, dt):
    if a == -np.inf:
        return b
    m = max(a, b)
    total = dt.type(exp_c(dt.type(a - m)) + exp_c(dt.type(b - m)))
    return dt.type(log_c(total) + m)


def _backward(lp, tp, alpha, steps, length, nll, gr, dt) -> np.ndarray:
    """One sample's gradient (T, C), as ctc_loss_backward_cpu_template computes it."""
    T, C = lp.shape
    grad = np.full((T, C), -np.inf, dtype=dt)
    if steps == 0:
        return np.zeros((T, C), dtype=dt)
    L = tp.size
    beta = np.full((steps, L), -np.inf, dtype=dt)
    last = steps - 1
    beta[last, 2 * length] = lp[last, tp[2 * length]]  # (a blank)
    grad[last, tp[2 * length]] = dt.type(alpha[last, 2 * length] + beta[last, 2 * length])
    if length > 0:
        c = tp[2 * length - 1]
        beta[last, 2 * length - 1] = lp[last, c]
        grad[last, c] = dt.type(alpha[last, 2 * length - 1] + beta[last, 2 * length - 1])
    skip = np.zeros(L, dtype=bool)
    skip[:-2] = tp[2:] != tp[:-2]
    for t in range(steps - 2, -1, -1):
        b1 = beta[t + 1]
        b2 = np.concatenate([b1[1:], [-np.inf]]).astype(dt)
        b3 = np.where(skip, np.concatenate([b1[2:], [-np.inf, -np.inf]]), -np.inf).astype(dt)
        beta[t] = (_logsum3(b1, b2, b3, dt) + lp[t, tp]).astype(dt)
        ab = (alpha[t] + beta[t]).astype(dt)
        for s in range(L - 1, -1, -1):  # (descending s, each into its character's sum)
            grad[t, tp[s]] = _log_add(grad[t, tp[s]], ab[s], dt)
    nll_t = dt.type(nll)
    part = exp_c(((grad[:steps] + nll_t).astype(dt) - lp[:steps]).astype(dt))
    grad[:steps] = ((exp_c(lp[:steps]) - part).astype(dt) * dt.type(gr)).astype(dt)
    grad[steps:] = 0
    return grad


def ctc_loss(ev, node, args, kw):
    g = bind("ctc_loss", (("log_probs", REQUIRED), ("targets", REQUIRED),
                          ("input_lengths", REQUIRED), ("target_lengths", REQUIRED),
                          ("blank", 0), ("reduction", "mean"), ("zero_infinity", False)),
             args, kw)
    x = tensor(node, g["log_probs"], "log_probs", "ctc_loss")
    blank, reduction = int(num(g["blank"])), g["reduction"]
    zero_inf = bool(num(g["zero_infinity"]))
    if reduction not in ("mean", "sum", "none"):
        raise PyException.error("ValueError", f"{reduction} is not a valid value for reduction")
    lengths = [np.asarray(v.value if isinstance(v, Tensor) else [num(i) for i in v],
                          dtype=np.int64).reshape(-1)
               for v in (g["input_lengths"], g["target_lengths"])]
    targets = np.asarray(tensor(node, g["targets"], "targets", "ctc_loss").value, dtype=np.int64)
    unbatched = x.value.ndim == 2
    lp_all = x.value[:, None, :] if unbatched else x.value
    if unbatched:  # (F.ctc_loss unsqueezes an unbatched sample's arguments)
        targets = targets.reshape(1, -1)
    T, N, C = lp_all.shape
    if targets.ndim == 2:  # padded: one row per sample
        flat = targets.reshape(-1)
        offsets = [b * targets.shape[1] for b in range(targets.shape[0])]
    else:  # the targets one after another
        flat = targets
        offsets = list(np.concatenate([[0], np.cumsum(lengths[1])[:-1]]).astype(int))
    il, tl = lengths
    if il.size != N or tl.size != N or len(offsets) != N:
        raise error(f"Expected tensor to have size at least {N} at dimension 0, but got size "
                    f"{min(il.size, tl.size, len(offsets))} for argument #3 'input_lengths'",
                    node)
    if il.size and il.max() > T:
        raise error(f"Expected input_lengths to have value at most {T}, but got value "
                    f"{int(il.max())} (while checking arguments for ctc_loss_cpu)", node)
    dt = x.value.dtype
    lp_c = np.ascontiguousarray(np.transpose(lp_all, (1, 0, 2)))
    saved, nlls = [], np.zeros(N, dtype=dt)
    for b in range(N):
        tp = _primes(flat, int(offsets[b]), int(tl[b]), blank)
        alpha = _alpha(lp_c[b], tp, int(il[b]), dt)
        nlls[b] = _nll(alpha, int(il[b]), int(tl[b]), dt)
        saved.append((tp, alpha))

    def vjp(gout: np.ndarray) -> np.ndarray:
        gout = np.broadcast_to(np.asarray(gout, dtype=dt).reshape(-1), (N,))
        grads = np.zeros((N, T, C), dtype=dt)
        for b in range(N):
            if zero_inf and nlls[b] == np.inf:
                continue
            tp, alpha = saved[b]
            grads[b] = _backward(lp_c[b], tp, alpha, int(il[b]), int(tl[b]), nlls[b],
                                 gout[b], dt)
        out = np.ascontiguousarray(np.transpose(grads, (1, 0, 2)))  # (T, N, C), as ATen's
        return np.ascontiguousarray(out[:, 0, :]) if unbatched else out

    res = fused(ev, node, "CtcLossBackward0", nlls, [x], (vjp,))
    if zero_inf:
        res = call(ev, node, "where", Tensor(nlls == np.inf), Tensor(np.zeros((), dt)), res)
    if reduction == "mean":
        res = call(ev, node, "mean", call(ev, node, "div", res,
                                          Tensor(np.maximum(tl, 1).astype(dt))))
    elif reduction == "sum":
        res = call(ev, node, "sum", res)
    elif unbatched:
        res = call(ev, node, "reshape", res, ())
    return res


class CTCLoss(Module6):
    def forward(self, ev, node, args, kw):
        g = bind("CTCLoss.forward", (("log_probs", REQUIRED), ("targets", REQUIRED),
                                     ("input_lengths", REQUIRED), ("target_lengths", REQUIRED)),
                 list(args), kw)
        return ctc_loss(ev, node, [g[k] for k in ("log_probs", "targets", "input_lengths",
                                                  "target_lengths")],
                        {k: (v, node.pos) for k, v in self.kw.items()})


def _module(ev, node, args, kw):
    g = bind("CTCLoss.__init__", (("blank", 0), ("reduction", "mean"),
                                  ("zero_infinity", False)), list(args), kw)
    return CTCLoss("CTCLoss", None, g, "")


def register() -> None:
    EXTRA["torch.nn.functional"]["ctc_loss"] = Native("ctc_loss", ctc_loss)
    EXTRA["torch"].setdefault("ctc_loss", EXTRA["torch.nn.functional"]["ctc_loss"])
    EXTRA["torch.nn"]["CTCLoss"] = Native("CTCLoss", _module)


register()

__all__ = ["CTCLoss", "ctc_loss", "exp_c"]
