"""Powers as ATen computes them: x ** n by products and square roots where its CPU kernel
does (so x ** 3 is x*x*x to the last bit), their rules, and the buffer-writing forms the
templates use."""

from __future__ import annotations

import math

import numpy as np

from . import vml
from .kernels import scaled
from .libm import c_pow

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def exact_float(a) -> bool:
    """Whether ``a`` takes ATen's own kernels: a float32/float64 array or numpy scalar (dual
    numbers, formulas and integers keep numpy's meaning)."""
    return isinstance(a, (np.ndarray, np.floating)) and a.dtype in _FLOATS


def power(a, exponent):
    """a ** exponent as ATen's CPU kernel computes it: 0 and 1 by a fill and a copy
    (pow_Tensor_Scalar_out), 2, 3, 0.5, -0.5, -1 and -2 by products, square roots and a
    division (so x ** 3 is x*x*x to the last bit), the rest by SLEEF's pow and the C
    library's (ddx/ops/sleef_pow.py)."""
    if exponent == 2:
        return np.square(a)
    if exponent == 3:
        return a * a * a
    if exponent == -2:
        return 1 / (a * a)
    if exponent == -0.5:
        return 1 / np.sqrt(a)
    kind = type(a)
    if not (kind is np.ndarray and a.dtype in _FLOATS or kind is np.float64
            or kind is np.float32) or isinstance(exponent, complex):
        return np.power(a, exponent)  # (dual numbers, formulas, integers: numpy's meaning)
    if exponent == 0:
        return np.ones_like(a)
    if exponent == 1:
        return a.copy()
    if exponent == 0.5:
        return vml.sqrt(a)  # (sqrt_kernel: torch.sqrt's, MKL's in float32)
    if exponent == -1:
        return 1 / a
    if a.ndim == 0:  # (a number is all tail: the C library's pow)
        r = a.dtype.type(c_pow(float(a), float(exponent)))
        if not math.isfinite(r):
            np.power(a, exponent)  # (numpy's flags for an inf or nan: the trace's warnings)
        return r
    return _loop(a, exponent, True)


def tensor_power(a, b):
    """torch.pow(a, b) of two tensors (or a number base, b a tensor: pow_Scalar): SLEEF's pow
    on whole vectors, the C library's powf (float32) or pow on the rest."""
    if not (exact_float(a) or exact_float(b)) or not all(isinstance(v, (np.ndarray, np.generic, int, float))
                                               for v in (a, b)):
        return np.power(a, b)
    dtype = np.result_type(a, b)
    if dtype not in _FLOATS:
        return np.power(a, b)
    base = np.asarray(a, dtype)
    if np.ndim(base) == 0 and np.ndim(b) > 0:
        base = np.broadcast_to(base, np.shape(b))
    return _loop(base, np.asarray(b, dtype), False)


tensor_power.ufunc = np.power  # (the op table's index of rows by ufunc: --hessian's rules)


def _loop(a, b, scalar_exponent: bool):
    from .sleef_pow import pow_loop

    r = pow_loop(np.asarray(a), b, scalar_exponent)
    if not np.isfinite(r).all():
        np.power(a, b)  # (numpy's own flags for what became inf or nan: the trace's warnings)
    return r[()] if r.ndim == 0 else r  # (a number for 0-d operands, as numpy's ufuncs)


def pow_scalar(a, *, exponent):
    return power(a, exponent)


def pow_scalar_vjp(g, o, a, *, exponent):
    """pow_backward: grad * (exponent * self.pow(exponent - 1)), in that order."""
    if exponent == 0:
        return np.zeros_like(a) if exact_float(a) else g * 0
    if exponent == 2:
        return scaled(g, a, 2)  # (times 2 rounds alike in any order)
    p = power(a, exponent - 1)
    return g * (p * exponent) if exact_float(p) else scaled(g, p, exponent)


def pow_scalar_chain(spread: bool, *, exponent):
    """pow_scalar's formulas for ddx/replay/chain.py: power's products for 2 and 3 and
    pow_scalar_vjp's (scaled's order for 2: one repeated g folds into the factor)."""
    if exponent == 2:
        return ("a * a", "a * (2 * g)" if spread else "(g * a) * 2")
    if exponent == 3:
        return ("(a * a) * a", "g * ((a * a) * 3)")
    return None


def pow_scalar_into(a, *, exponent, out):
    if exponent == 2:
        return np.square(a, out=out)
    out[...] = power(a, exponent)
    return out


def square_vjp_into(g, o, a, *, exponent, buffer):
    """pow_scalar_vjp for x^2 after a whole reduction (g one repeated number), written into
    ``buffer``: the same single multiply as scaled's, without a new array."""
    if exponent == 2 and isinstance(g, np.ndarray) and g.ndim and g.size and not any(g.strides) \
            and g.shape == np.shape(a) == buffer.shape:
        return np.multiply(a, 2 * g.flat[0], out=buffer)
    return pow_scalar_vjp(g, o, a, exponent=exponent)


def rpow(a, *, base):
    return tensor_power(base, a)


def rpow_vjp(g, o, a, *, base):
    """pow_backward_exponent of a number base: grad * (result * log(base)), log(base) the
    Scalar's (a double, which the product rounds to the tensor's dtype)."""
    log_base = math.log(base) if base > 0 else -math.inf if base == 0 else math.nan
    if base == 0:
        return g * np.where(a >= 0, 0.0, o * log_base)
    return g * (o * log_base)


def pow_base_vjp(g, out, a, b):
    """pow_backward_self: where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)))."""
    return np.where(b == 0, 0.0, g * (b * tensor_power(a, b - 1)))


def pow_exp_vjp(g, out, a, b):
    """pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * log(self))
    (log(0) would make 0 * -inf = nan)."""
    return g * np.where((a == 0) & (b >= 0), 0.0, out * vml.log(a))
