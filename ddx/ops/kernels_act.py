"""Activation functions and their backward kernels bit for bit with PyTorch's CPU build
(aten/src/ATen/native/cpu/Activation.cpp, UnaryOpsKernel.cpp's sigmoid, BinaryOpsKernel.cpp's
sigmoid_backward), for float32 and float64 arrays and numpy scalars, through ATen's loop
(ops/act_loop.py). GCC contracts a*b + c into one fused multiply-add in these lambdas: the
``fma`` calls below are where it does, found by measuring against torch 2.13.

Anything else (dual numbers, symbolic values, object or integer arrays, mixed dtypes) takes
the plain formula of ops/kernels.py, which the Hessian and the formulas differentiate."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError
from . import kernels as formulas
from .act_loop import (
    F32,
    GRAIN,
    elementwise,
    events,
    exact_dtype,
    fma,
    libm,
    pexp,
    pexpm1,
    pfma,
    plog1p,
    threads,
    verf,
    vexp,
    vexpm1,
    vlog1p,
    vtanh,
)

# --- the activations --------------------------------------------------------------------------

def sigmoid(a):
    """UnaryOpsKernel.cpp: 1 / (1 + exp(-x)) (the vector lambda's (0 - x).exp() + 1, reciprocal)."""
    dt = exact_dtype(a)
    if dt is None:
        return formulas.sigmoid(a)
    one = dt.type(1)
    return elementwise(lambda x: one / (one + vexp(-x)),
                       lambda x: one / (one + libm("expf", -x)), (a,), dt,
                       py=lambda x: 1 / (1 + pexp(-x)))


def sigmoid_vjp(g, out, a):
    """sigmoid_backward: grad * (1 - y) * y, in that order (any number type)."""
    return g * (1 - out) * out


def silu(a):
    dt = exact_dtype(a)
    if dt is None:
        return formulas.silu(a)
    one = dt.type(1)
    return elementwise(lambda x: x / (one + vexp(-x)),
                       lambda x: x / (one + libm("expf", -x)), (a,), dt,
                       py=lambda x: x / (1 + pexp(-x)))


def silu_vjp(g, out, a):
    """silu_backward: dy * s * (1 + x * (1 - s)), s = sigmoid(x) (the last two fused)."""
    dt = exact_dtype(g, a)
    if dt is None:
        return formulas.silu_vjp(g, out, a)
    one = dt.type(1)

    def rule(e):
        def on(dy, x):
            s = one / (one + e(-x))
            return dy * s * fma(x, one - s, one)
        return on

    def py(dy, x):
        s = 1 / (1 + pexp(-x))
        return dy * s * pfma(x, 1 - s, 1.0)

    return elementwise(rule(vexp), rule(lambda v: libm("expf", v)), (g, a), dt, py=py)


def mish(a):
    dt = exact_dtype(a)
    if dt is None:
        return formulas.mish(a)
    return elementwise(lambda x: x * vtanh(vlog1p(vexp(x))),
                       lambda x: x * libm("tanhf", libm("log1pf", libm("expf", x))), (a,), dt,
                       py=lambda x: x * math.tanh(plog1p(pexp(x))))


def mish_vjp(g, out, a):
    """mish_backward: dy * (t + x * s * (1 - t * t)), t = tanh(softplus(x)), s = sigmoid(x)."""
    dt = exact_dtype(g, a)
    if dt is None:
        return formulas.mish_vjp(g, out, a)
    one = dt.type(1)

    def rule(exp, log1p, tanh):
        def on(dy, x):
            s = one / (one + exp(-x))
            t = tanh(log1p(exp(x)))
            return dy * fma(x * s, fma(-t, t, one), t)
        return on

    def py(dy, x):
        s = 1 / (1 + pexp(-x))
        t = math.tanh(plog1p(pexp(x)))
        return dy * pfma(x * s, pfma(-t, t, 1.0), t)

    return elementwise(rule(vexp, vlog1p, vtanh),
                       rule(*(lambda v, f=f: libm(f, v) for f in ("expf", "log1pf", "tanhf"))),
                       (g, a), dt, py=py)


def softplus(a, beta=1.0, threshold=20.0):
    """softplus_kernel: x where x * beta > threshold, else log1p(exp(x * beta)) / beta."""
    dt = exact_dtype(a)
    if dt is None:
        return formulas.softplus(a, beta, threshold)
    b, th = dt.type(beta), dt.type(threshold)

    def rule(exp, log1p):
        def on(x):
            xb = x * b
            return np.where(xb > th, x, log1p(exp(xb)) / b)
        return on

    return elementwise(rule(vexp, vlog1p),
                       rule(lambda v: libm("expf", v), lambda v: libm("log1pf", v)), (a,), dt,
                       py=lambda x: x if x * b > th else plog1p(pexp(x * b)) / b)


def softplus_vjp(g, out, a, beta=1.0, threshold=20.0):
    """softplus_backward: z = exp(x * beta); dy where x * beta > threshold, else dy * z / (z + 1)."""
    dt = exact_dtype(g, a)
    if dt is None:
        return formulas.softplus_vjp(g, out, a, beta, threshold)
    b, th, one = dt.type(beta), dt.type(threshold), dt.type(1)

    def rule(exp):
        def on(dy, x):
            xb = x * b
            z = exp(xb)
            return np.where(xb > th, dy, dy * z / (z + one))
        return on

    def py(dy, x):
        z = pexp(x * b)
        return dy if x * b > th else dy * z / (z + 1)

    return elementwise(rule(vexp), rule(lambda v: libm("expf", v)), (g, a), dt, py=py)


def _elu_coefs(dt, alpha, scale, input_scale):
    """elu_kernel's negcoef = alpha * scale (in the tensor's dtype), poscoef, negiptcoef."""
    return dt.type(alpha) * dt.type(scale), dt.type(scale), dt.type(input_scale)


def elu(a, alpha=1.0, scale=1.0, input_scale=1.0):
    """elu_kernel: expm1(x * input_scale) * alpha * scale where x <= 0, x * scale elsewhere (the
    vector lambda tests x > 0, the scalar one x <= 0: they differ at nan)."""
    dt = exact_dtype(a)
    if dt is None:
        if input_scale != 1:
            return formulas.celu(a, alpha)
        return formulas.elu(a, alpha, scale)
    neg, pos, ipt = _elu_coefs(dt, alpha, scale, input_scale)
    return elementwise(lambda x: np.where(x > 0, x * pos, vexpm1(x * ipt) * neg),
                       lambda x: np.where(x <= 0, libm("expm1f", x * ipt) * neg, x * pos),
                       (a,), dt, py=lambda x: pexpm1(x * ipt) * neg if x <= 0 else x * pos)


def elu_vjp(g, out, a, alpha=1.0, scale=1.0, input_scale=1.0):
    """elu_backward (is_result false): dy * input_scale * negcoef * exp(x * input_scale) where
    x <= 0, dy * scale elsewhere."""
    dt = exact_dtype(g, a)
    if dt is None:
        if input_scale != 1:
            return formulas.celu_vjp(g, out, a, alpha)
        return formulas.elu_vjp(g, out, a, alpha, scale)
    neg, pos, ipt = _elu_coefs(dt, alpha, scale, input_scale)
    return elementwise(
        lambda dy, x: np.where(x > 0, dy * pos, dy * ipt * neg * vexp(x * ipt)),
        lambda dy, x: np.where(x <= 0, dy * ipt * neg * libm("expf", x * ipt), dy * pos),
        (g, a), dt, py=lambda dy, x: dy * ipt * neg * pexp(x * ipt) if x <= 0 else dy * pos)


def celu(a, alpha=1.0):
    """torch.celu: elu(x, alpha, 1, 1 / alpha), the inverse taken in double."""
    if alpha == 0:  # (PyTorch's refusal, a RuntimeError with these words)
        raise DdxRuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu(a, alpha, 1.0, 1.0 / alpha)


def celu_vjp(g, out, a, alpha=1.0):
    """CeluBackward0: elu_backward(grad, alpha, 1, 1.0 / alpha.toFloat()), so the inverse of
    alpha rounded to float32 first."""
    if alpha == 0:
        return formulas.celu_vjp(g, out, a, alpha)
    return elu_vjp(g, out, a, alpha, 1.0, 1.0 / float(np.float32(alpha)))


def logsigmoid(a):
    """_vec_log_sigmoid: min(x, 0) - log1p(exp(-|x|)), the vector lambda over every element
    (the last, partial vector is loaded partially: there is no scalar tail)."""
    dt = exact_dtype(a)
    if dt is None:
        return formulas.logsigmoid(a)
    with np.errstate(all="ignore"):
        out = np.minimum(a, dt.type(0)) - vlog1p(vexp(-np.abs(a)))
    events(out, (a,))
    return out


def logsigmoid_vjp(g, out, a):
    """log_sigmoid_backward over the forward's buffer b = exp(-|x|): dy * (1 - b / (1 + b))
    where x < 0, dy * b / (1 + b) elsewhere."""
    dt = exact_dtype(g, a)
    if dt is None:
        return formulas.logsigmoid_vjp(g, out, a)
    one = dt.type(1)
    with np.errstate(all="ignore"):
        b = vexp(-np.abs(a))
        q = b / (one + b)
        out = np.where(a < 0, (one - q) * g, q * g)
    events(out, (g, a))
    return out


GELU_BETA = 1.41421356237309504880 * 1.12837916709551257390 * 0.5  # M_SQRT2 * M_2_SQRTPI * 0.5
GELU_KAPPA = 0.044715


def _gelu_grain(n: int) -> int:
    """GeluKernelImpl splits more than 16384 elements evenly over the threads."""
    return max(1, n // threads()) if n > 16384 else GRAIN


def gelu_tanh(a):
    """GeluKernelImpl, approximate='tanh': 0.5 * x * (1 + tanh(beta * (x + kappa * x^3)))."""
    dt = exact_dtype(a)
    if dt is None:
        return 0.5 * a * (1 + np.tanh(GELU_BETA * (a + GELU_KAPPA * a * a * a)))
    kb, kk, one, half = (dt.type(v) for v in (GELU_BETA, GELU_KAPPA, 1, 0.5))

    def rule(tanh):
        def on(x):
            return half * x * (one + tanh(kb * fma(np.full_like(x, kk), x * x * x, x)))
        return on

    def py(x):
        return 0.5 * x * (1 + math.tanh(GELU_BETA * pfma(GELU_KAPPA, x * x * x, x)))

    return elementwise(rule(vtanh), rule(lambda v: libm("tanhf", v)), (a,), dt,
                       _gelu_grain(np.size(a)), py)


def gelu_tanh_vjp(g, out, a):
    """GeluBackwardKernelImpl, approximate='tanh', with GCC's contractions (and no grain of its
    own: one thread below GRAIN_SIZE)."""
    dt = exact_dtype(g, a)
    if dt is None:  # (PyTorch's formula, term for term)
        t = np.tanh(GELU_BETA * (a + GELU_KAPPA * a * a * a))
        right_derivative = (1 - t * t) * GELU_BETA * (1 + 3 * GELU_KAPPA * a * a)
        return g * (0.5 * (1 + t) + 0.5 * a * right_derivative)
    kb, kk, one, half = (dt.type(v) for v in (GELU_BETA, GELU_KAPPA, 1, 0.5))
    three_kk = dt.type(3) * kk

    def rule(tanh):
        def on(dy, x):
            x_sq = x * x
            t = tanh(kb * fma(np.full_like(x, kk), x * x * x, x))
            tanh_derivative = fma(-t, t, np.full_like(t, one))
            inner_derivative = kb * fma(np.full_like(x, three_kk), x_sq, np.full_like(x, one))
            return dy * (half * (one + t) + half * x * tanh_derivative * inner_derivative)
        return on

    def py(dy, x):
        t = math.tanh(GELU_BETA * pfma(GELU_KAPPA, x * x * x, x))
        inner_derivative = GELU_BETA * pfma(3 * GELU_KAPPA, x * x, 1.0)
        return dy * (0.5 * (1 + t) + 0.5 * x * pfma(-t, t, 1.0) * inner_derivative)

    return elementwise(rule(vtanh), rule(lambda v: libm("tanhf", v)), (g, a), dt, py=py)


SQRT1_2 = 0.70710678118654752440  # M_SQRT1_2
GELU_PDF = 1.12837916709551257390 * 0.70710678118654752440 * 0.5  # M_2_SQRTPI * M_SQRT1_2 / 2


def gelu(a):
    """GELU, approximate='none'. float32 with more than one element: oneDNN's kernel (ops/
    onednn.py), as ATen hands it over; else ATen's x * 0.5 * (1 + erf(x / sqrt 2)), erf being
    Sleef's in the vector bodies and the C library's in the tails."""
    dt = exact_dtype(a)
    if dt is None:
        return formulas.gelu(a)
    if dt == F32 and np.size(a) > 1:
        from . import onednn

        out = onednn.gelu(np.ravel(a)).reshape(np.shape(a))
        events(out, (a,))
        return out
    half, one, alpha = dt.type(0.5), dt.type(1), dt.type(SQRT1_2)

    def rule(erf):
        def on(x):
            return x * half * (one + erf(x * alpha))
        return on

    return elementwise(rule(verf), rule(_erf), (a,), dt, _gelu_grain(np.size(a)),
                       py=lambda x: x * 0.5 * (1 + math.erf(x * SQRT1_2)))


def _erf(x):
    """The C library's erf in x's dtype, over a few values."""
    return libm("erff", x)


def gelu_vjp(g, out, a):
    """GeluBackward0, approximate='none': oneDNN's derivative times the gradient (float32,
    more than one element), else ATen's dy * (cdf + x * pdf), cdf = 0.5 * (1 + erf(x / sqrt 2)),
    pdf = exp(-x^2 / 2) / sqrt(2 pi) (the vector lambda fuses x * pdf + cdf)."""
    dt = exact_dtype(g, a)
    if dt is None:
        return formulas.gelu_vjp(g, out, a)
    if dt == F32 and np.size(a) > 1:
        from . import onednn

        shape = np.broadcast_shapes(np.shape(g), np.shape(a))
        with np.errstate(all="ignore"):
            out = g * onednn.gelu_derivative(np.broadcast_to(a, shape).ravel()).reshape(shape)
        events(out, (g, a))
        return out
    half, one, alpha, beta = (dt.type(v) for v in (0.5, 1, SQRT1_2, GELU_PDF))

    def rule(exp, erf, fused):
        def on(dy, x):
            cdf = half * (one + erf(x * alpha))
            pdf = beta * exp(x * x * dt.type(-0.5))
            return dy * (fma(x, pdf, cdf) if fused else cdf + x * pdf)
        return on

    def py(dy, x):
        cdf = 0.5 * (1 + math.erf(x * SQRT1_2))
        return dy * (cdf + x * (GELU_PDF * pexp(x * x * -0.5)))

    return elementwise(rule(vexp, verf, True), rule(lambda v: libm("expf", v), _erf, False),
                       (g, a), dt, py=py)
