"""Kernels beside the op table: forward functions and VJP/JVP rules that are more than one
expression, the emit functions for rows a template cannot write, and kink tests. Written with
numpy's functions only, so that they run on arrays, dual numbers and symbolic values alike."""

from __future__ import annotations

import math

import numpy as np

SQRT1_2 = math.sqrt(0.5)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)

# --- kernels: forward functions and rules that are more than one expression -----------------

def expand(g, shape, dim):
    """Broadcast a reduced gradient back over the reduced axis (or all axes)."""
    if dim is not None:
        g = np.expand_dims(g, dim)
    return np.broadcast_to(g, shape)


def maximum_vjp(g, out, a, b, *, first):
    mine, other = (a, b) if first else (b, a)
    share = np.where(mine == other, g / 2, g)
    return np.where(mine < other, 0.0, share)


def minimum_vjp(g, out, a, b, *, first):
    mine, other = (a, b) if first else (b, a)
    share = np.where(mine == other, g / 2, g)
    return np.where(mine > other, 0.0, share)


def softplus(a, beta=1.0, threshold=20.0):
    """PyTorch's: log1p(exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    if beta == 1:
        return np.where(a > threshold, a, np.log1p(np.exp(np.minimum(a, threshold))))
    ax = a * beta
    return np.where(ax > threshold, a, np.log1p(np.exp(np.minimum(ax, threshold))) / beta)


def softplus_vjp(g, out, a, beta=1.0, threshold=20.0):
    ax = a if beta == 1 else a * beta
    z = np.exp(np.minimum(ax, threshold))
    return np.where(ax > threshold, g, g * z / (z + 1))


def sigmoid(a):
    # Split by sign so exp never overflows.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def erf(a):
    """math.erf's values on arrays (numpy has no erf): ops/kernels_erf.py, imported at the first
    call, not at start-up."""
    from .kernels_erf import erf as on_arrays

    return on_arrays(a)


def erfc(a):
    from .kernels_erf import erfc as on_arrays

    return on_arrays(a)


def rule_sigmoid(a):
    """sigmoid inside rules: 1/(1 + exp(-x)) has a derivative everywhere (the split by sign
    in sigmoid() goes through abs, whose slope at 0 is 0); exp(-x) overflowing gives 0."""
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-a))


def logit_vjp(g, out, a):
    # PyTorch: nan outside [0, 1], where the forward is nan too
    return np.where((a < 0) | (a > 1), np.nan, g / (a * (1 - a)))


def silu(a):
    return a * sigmoid(a)


def silu_vjp(g, out, a):
    s = rule_sigmoid(a)
    return g * s * (1 + a * (1 - s))


def mish(a):
    return a * np.tanh(softplus(a))


def mish_vjp(g, out, a):
    t = np.tanh(softplus(a))
    return g * (t + a * rule_sigmoid(a) * (1 - t * t))


def logsigmoid(a):
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def logsigmoid_vjp(g, out, a):
    with np.errstate(over="ignore"):
        return g / (1 + np.exp(a))  # g * sigmoid(-x)


def hardswish_vjp(g, out, a):
    # PyTorch: slope 0 up to and at -3, 1 from 3 on
    return np.where(a <= -3, 0.0, np.where(a < 3, g * (a / 3 + 0.5), g))


def elu(a, alpha=1.0, scale=1.0):
    return np.where(a > 0, scale * a, (alpha * scale) * np.expm1(np.minimum(a, 0)))


def elu_vjp(g, out, a, alpha=1.0, scale=1.0):
    """PyTorch takes the left slope, alpha * scale, at 0, but its second derivative there
    is 0 (elu_double_backward masks x < 0): the inner where gives exactly that."""
    return np.where(a > 0, g * scale, g * (alpha * scale) * np.exp(np.where(a < 0, a, 0.0)))


def celu(a, alpha=1.0):
    """celu(x, alpha) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return elu(a) if alpha == 1 else np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0) / alpha))


def celu_vjp(g, out, a, alpha=1.0):
    if alpha == 1:
        return elu_vjp(g, out, a)
    return np.where(a > 0, g, g * np.exp(np.where(a < 0, a, 0.0) / alpha))


def gelu(a):
    return a * 0.5 * (1 + erf(a * SQRT1_2))


def gelu_vjp(g, out, a):
    """PyTorch's g * (cdf + x * pdf). Rules call ufuncs only and numpy has no erf, so the
    cdf is read from the result, out / x; at 0, where that is 0/0, it is 0.5 + x * pdf (the
    same value and the same slope, so the Hessian is right there too)."""
    zero = a == 0
    pdf = np.exp(-0.5 * (a * a)) * INV_SQRT_2PI
    cdf = np.where(zero, 0.5 + a * pdf, out / np.where(zero, 1.0, a))
    return g * (cdf + a * pdf)


def atan2(a, b):
    """torch.atan2: two float32 arrays as ATen's cpu_kernel_vec computes it (SLEEF's atan2f on
    whole vectors, the C library's atan2f on the rest: ddx/ops/vecloop.py); others numpy's."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype == np.float32 \
            and a.size and b.size:
        from . import libm
        from .kernels_sleef import atan2f
        from .vecloop import binary_loop

        scalar = libm.function("atan2f", True, 2)
        if scalar is not None:
            shape = np.broadcast_shapes(a.shape, b.shape)
            return binary_loop(np.ascontiguousarray(np.broadcast_to(a, shape)), b, atan2f, scalar)
    return np.arctan2(a, b)


atan2.ufunc = np.arctan2  # (the op table's index of rows by ufunc: --hessian's rules)


def atan2_vjp(g, out, a, b, *, first):
    # PyTorch: both slopes 0 at (0, 0), where 1/(x^2 + y^2) is inf
    d = a * a + b * b
    with np.errstate(divide="ignore"):
        recip = np.where(d == 0, 0.0, 1 / d)
    return g * b * recip if first else -g * a * recip


def floor_div(a, b):
    """PyTorch's div(rounding_mode="floor"), as Python's //: from the remainder, so that
    1 // 0.1 is 9 (floor(1 / 0.1) is 10)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # (at b = 0 PyTorch gives a / b)
        return np.where(b == 0, a / b, np.rint((a - np.remainder(a, b)) / b))


def extreme_vjp(g, out, a, dim=None, *, argfn=None):
    """max/min: the full reduction shares g among ties (PyTorch's evenly_distribute_backward);
    with dim, g goes to the index the forward picked."""
    if dim is None:
        mask = a == out
        return g * mask / np.count_nonzero(mask)
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    grad = np.zeros_like(g, shape=a.shape)  # zeros_like, not zeros: dual numbers pass through
    np.put_along_axis(grad, idx, np.expand_dims(g, dim), axis=dim)
    return grad


def extreme_jvp(ts, out, a, dim=None, *, argfn=None):
    (t,) = ts
    if dim is None:
        mask = a == out
        return np.sum(t * mask) / np.count_nonzero(mask)
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    return np.squeeze(np.take_along_axis(np.broadcast_to(t, a.shape), idx, axis=dim), dim)


def norm_vjp(g, out, a, dim=None):
    o = out if dim is None else np.expand_dims(out, dim)
    gg = g if dim is None else np.expand_dims(g, dim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(o == 0, 0.0, gg * a / o)


def norm_jvp(ts, out, a, dim=None):
    (t,) = ts
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(out == 0, 0.0, np.sum(a * t, axis=dim) / out)


def logsumexp(a, dim=None):
    # (initial: the log of an empty sum is -inf, as PyTorch gives)
    m = np.max(a, axis=dim, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return s.reshape(np.sum(a, axis=dim).shape) if dim is not None else s.reshape(())


def logsumexp_vjp(g, out, a, dim=None):
    o = out if dim is None else np.expand_dims(out, dim)
    gg = g if dim is None else np.expand_dims(g, dim)
    return gg * np.exp(a - o)


def logsumexp_jvp(ts, out, a, dim=None):
    (t,) = ts
    o = out if dim is None else np.expand_dims(out, dim)
    return np.sum(np.exp(a - o) * t, axis=dim)


def linear(fn):
    """JVP of an op that is linear in its single input: apply it to the tangent."""
    return lambda ts, out, a, **kw: fn(np.broadcast_to(ts[0], np.shape(a)), **kw)


def bilinear(fn):
    """JVP of an op linear in each of two inputs (products): f(ta, b) + f(a, tb)."""
    def jvp(ts, out, a, b):
        ta, tb = ts
        parts = [fn(ta, b) if ta is not None else None, fn(a, tb) if tb is not None else None]
        parts = [p for p in parts if p is not None]
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return jvp


def scaled(g, x, factor):
    """g * x * factor with one pass and one new array: an upstream gradient that is one
    repeated number (a broadcast, as after sum) folds into the factor."""
    # (0-d gradients take the general path, so arrays and numpy scalars round alike)
    if isinstance(g, np.ndarray) and g.ndim and g.size and not any(g.strides) \
            and g.shape == np.shape(x):
        return np.multiply(x, factor * g.flat[0])
    r = np.multiply(g, x)
    if factor != 1:
        r *= factor
    return r


def scatter(g, shape, key):
    grad = np.zeros_like(g, shape=shape)
    grad[key] = g
    return grad


def stack(*xs):
    return np.stack(np.broadcast_arrays(*xs) if len({np.shape(x) for x in xs}) > 1 else xs)


def pick(i: int):
    return lambda g, o, *xs: g[i]


# --- emitted code for the rows that need more than a template --------------------------------

def emit_extreme(op_name: str):
    def emit(args, t, lib):
        dim = t.kw.get("dim")
        if lib == "torch":
            return (f"torch.{op_name}({args[0]}, dim={dim}).values" if dim is not None
                    else f"torch.{op_name}({args[0]})")
        return f"jnp.{op_name}({args[0]}" + (f", axis={dim})" if dim is not None else ")")
    return emit


def emit_tensors_only(op_name: str):
    """torch.maximum & co take tensors only: plain numbers are wrapped."""
    def emit(args, t, lib):
        wrap = "torch.tensor" if lib == "torch" else "jnp.asarray"
        a, b = (f"{wrap}({x})" if s.weak else x for x, s in zip(args, t.inputs))
        return f"{'torch' if lib == 'torch' else 'jnp'}.{op_name}({a}, {b})"
    return emit


def emit_transpose(args, t, lib):
    if t.value.ndim < 2:
        return args[0]
    return f"torch.transpose({args[0]}, 0, 1)" if lib == "torch" else f"jnp.transpose({args[0]})"


def emit_logsumexp(args, t, lib):
    dim = t.kw.get("dim")
    if lib == "torch":
        d = dim if dim is not None else f"tuple(range({args[0]}.dim()))"
        return f"torch.logsumexp({args[0]}, dim={d})"
    return f"jax.scipy.special.logsumexp({args[0]}" + (f", axis={dim})" if dim is not None
                                                       else ")")


def reduction_emit(torch_name: str, jax_name: str) -> dict:
    return {"torch": f"{torch_name}({{0}}{{tail}})", "jax": f"{jax_name}({{0}}{{tail}})"}


def at_zero(a, *rest, **params):
    return np.asarray(a) == 0


def at(*points):
    """A kink test: where the input is one of these points."""
    return lambda a, *rest, **params: np.isin(np.asarray(a), points)


def at_integer(a, *rest, **params):
    a = np.asarray(a)
    return a == np.floor(a)


def at_half(a, *rest, **params):
    a = np.asarray(a)
    return a - np.floor(a) == 0.5


def at_integer_ratio(a, b):
    with np.errstate(all="ignore"):
        r = np.asarray(a) / np.asarray(b)
    return r == np.floor(r)


def at_origin(a, b):
    return (np.asarray(a) == 0) & (np.asarray(b) == 0)


def at_tie(a, b):
    return np.asarray(a) == np.asarray(b)


def at_ends(a, min_val=-1.0, max_val=1.0):
    """hardtanh's kinks: its two ends, wherever the parameters put them."""
    return np.isin(np.asarray(a), (min_val, max_val))


def at_reduced_tie(a, dim=None):
    a = np.asarray(a)
    top = np.max(a, axis=dim, keepdims=True)
    return np.count_nonzero(a == top, axis=dim) > 1


# PREC (see symbolic.py): 1 + -, 2 * / @, 3 unary minus, 4 ^, 9 an atom or a call
