"""Powers as ATen computes them: x ** n by products and square roots where its CPU kernel
does (so x ** 3 is x*x*x to the last bit), their rules, and the buffer-writing forms the
templates use."""

from __future__ import annotations

import numpy as np

from .kernels import scaled


def power(a, exponent):
    """a ** exponent as ATen's CPU kernel computes it: 2, 3, -0.5, -1 and -2 by products and
    square roots (so x ** 3 is x*x*x to the last bit), the rest by pow."""
    if exponent == 2:
        return np.square(a)
    if exponent == 3:
        return a * a * a
    if exponent == -2:
        return 1 / (a * a)
    if exponent == -0.5:
        return 1 / np.sqrt(a)
    return np.power(a, exponent)


def pow_scalar(a, *, exponent):
    return power(a, exponent)


def pow_scalar_vjp(g, o, a, *, exponent):
    if exponent == 0:
        return g * 0
    if exponent == 2:
        return scaled(g, a, 2)
    return scaled(g, power(a, exponent - 1), exponent)


def pow_scalar_into(a, *, exponent, out):
    if exponent == 2:
        return np.square(a, out=out)
    if exponent in (3, -2, -0.5):
        out[...] = power(a, exponent)
        return out
    return np.power(a, exponent, out=out)


def square_vjp_into(g, o, a, *, exponent, buffer):
    """pow_scalar_vjp for x^2 after a whole reduction (g one repeated number), written into
    ``buffer``: the same single multiply as scaled's, without a new array."""
    if exponent == 2 and isinstance(g, np.ndarray) and g.ndim and g.size and not any(g.strides) \
            and g.shape == np.shape(a) == buffer.shape:
        return np.multiply(a, 2 * g.flat[0], out=buffer)
    return pow_scalar_vjp(g, o, a, exponent=exponent)


def rpow_vjp(g, o, a, *, base):
    if base == 0:
        return np.where(a >= 0, 0.0, g * o * np.log(base))
    return g * o * np.log(base)
