"""THE op table: per primitive its numpy forward, one VJP per input, a JVP and the grad_fn name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

LN2 = float(np.log(2.0))
LN10 = float(np.log(10.0))


class Op:
    """One primitive. VJPs take ``(g, out, *inputs, **kw)``; the engine undoes broadcasting.

    (A plain class: a dataclass costs a few milliseconds of every one-liner's start-up.)"""

    __slots__ = ("name", "grad_fn", "fn", "vjp", "jvp", "saves", "elementwise", "reads", "into",
                 "vjp_into")

    def __init__(self, name: str, grad_fn: str, fn: Callable, vjp: tuple[Callable, ...],
                 jvp: Callable | None = None, saves: bool = True, elementwise: bool = True,
                 reads: str = "io", into: Callable | None = None,
                 vjp_into: tuple | None = None) -> None:
        self.name = name
        self.grad_fn = grad_fn
        self.fn = fn
        self.vjp = vjp
        # (tangents, out, *inputs, **kw); None: elementwise, the VJP rule applied to t
        self.jvp = jvp
        self.saves = saves  # keeps inputs for backward, so a second backward through it fails
        self.elementwise = elementwise
        # What the VJPs read besides g: "i" the inputs' values, "o" the output's value (the
        # shapes they may always read). A value no VJP reads can be overwritten once the
        # forward pass is past it (Template).
        self.reads = reads
        self.into = into  # fn(*inputs, **kw, out=buffer): the same numbers, into an array
        # per input, vjp(g, out, *inputs, **kw, buffer=...) that may write into ``buffer``
        self.vjp_into = vjp_into

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    @property
    def arity(self) -> int:
        return len(self.vjp)


OPS: dict[str, Op] = {}


def op(name: str, grad_fn: str, fn: Callable, *vjp: Callable, jvp: Callable | None = None,
       saves: bool = True, elementwise: bool = True, reads: str = "io",
       into: Callable | None = None, vjp_into: tuple | None = None) -> Op:
    if into is None and isinstance(fn, np.ufunc):
        into = fn
    row = Op(name, grad_fn, fn, tuple(vjp), jvp, saves, elementwise, reads, into, vjp_into)
    OPS[name] = row
    return row


def _expand(g, shape, dim):
    """Broadcast a reduced gradient back over the reduced axis (or all axes)."""
    if dim is not None:
        g = np.expand_dims(g, dim)
    return np.broadcast_to(g, shape)


def _maximum_vjp(g, out, a, b, *, first):
    mine, other = (a, b) if first else (b, a)
    share = np.where(mine == other, g / 2, g)
    return np.where(mine < other, 0.0, share)


def _minimum_vjp(g, out, a, b, *, first):
    mine, other = (a, b) if first else (b, a)
    share = np.where(mine == other, g / 2, g)
    return np.where(mine > other, 0.0, share)


def _pow_base_vjp(g, out, a, b):
    # PyTorch: exponent == 0 gives 0, even where base ** -1 is inf.
    return np.where(b == 0, 0.0, g * b * np.power(a, b - 1))


def _pow_exp_vjp(g, out, a, b):
    # PyTorch masks base == 0 with exponent >= 0 to 0 (log(0) would make 0 * -inf = nan).
    return np.where((a == 0) & (b >= 0), 0.0, g * out * np.log(a))


def _softplus(a):
    return np.where(a > 20, a, np.log1p(np.exp(np.minimum(a, 20))))


def _softplus_vjp(g, out, a):
    z = np.exp(np.minimum(a, 20))
    return np.where(a > 20, g, g * z / (z + 1))


def _sigmoid(a):
    # Split by sign so exp never overflows.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _extreme_vjp(g, out, a, dim=None, *, argfn=None):
    """max/min: the full reduction shares g among ties (PyTorch's evenly_distribute_backward);
    with dim, g goes to the index the forward picked."""
    if dim is None:
        mask = a == out
        return g * mask / np.count_nonzero(mask)
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    grad = np.zeros_like(g, shape=a.shape)  # zeros_like, not zeros: dual numbers pass through
    np.put_along_axis(grad, idx, np.expand_dims(g, dim), axis=dim)
    return grad


def _extreme_jvp(ts, out, a, dim=None, *, argfn=None):
    (t,) = ts
    if dim is None:
        mask = a == out
        return np.sum(t * mask) / np.count_nonzero(mask)
    idx = np.expand_dims(argfn(a, axis=dim), dim)
    return np.squeeze(np.take_along_axis(np.broadcast_to(t, a.shape), idx, axis=dim), dim)


def _norm_vjp(g, out, a, dim=None):
    o = out if dim is None else np.expand_dims(out, dim)
    gg = g if dim is None else np.expand_dims(g, dim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(o == 0, 0.0, gg * a / o)


def _norm_jvp(ts, out, a, dim=None):
    (t,) = ts
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(out == 0, 0.0, np.sum(a * t, axis=dim) / out)


def _logsumexp(a, dim=None):
    m = np.max(a, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    s = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return s.reshape(np.sum(a, axis=dim).shape) if dim is not None else s.reshape(())


def _logsumexp_vjp(g, out, a, dim=None):
    o = out if dim is None else np.expand_dims(out, dim)
    gg = g if dim is None else np.expand_dims(g, dim)
    return gg * np.exp(a - o)


def _logsumexp_jvp(ts, out, a, dim=None):
    (t,) = ts
    o = out if dim is None else np.expand_dims(out, dim)
    return np.sum(np.exp(a - o) * t, axis=dim)


def _linear(fn):
    """JVP of an op that is linear in its single input: apply it to the tangent."""
    return lambda ts, out, a, **kw: fn(np.broadcast_to(ts[0], np.shape(a)), **kw)


def _bilinear(fn):
    """JVP of an op linear in each of two inputs (products): f(ta, b) + f(a, tb)."""
    def jvp(ts, out, a, b):
        ta, tb = ts
        parts = [fn(ta, b) if ta is not None else None, fn(a, tb) if tb is not None else None]
        parts = [p for p in parts if p is not None]
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return jvp


# --- arithmetic ---------------------------------------------------------------------------
# Arithmetic as operators, not np.add & co: the same ufuncs for arrays, and several times
# faster on numpy scalars, which the batch replay (ddx/template.py) computes with.
op("add", "AddBackward0", lambda a, b: a + b, lambda g, o, a, b: g, lambda g, o, a, b: g, saves=False,
   reads="", into=np.add)
op("sub", "SubBackward0", lambda a, b: a - b, lambda g, o, a, b: g, lambda g, o, a, b: -g, saves=False,
   reads="", into=np.subtract)
op("rsub", "RsubBackward1", lambda a, *, other: other - a, lambda g, o, a, **k: -g, saves=False,
   reads="")
op("mul", "MulBackward0", lambda a, b: a * b, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   reads="i", into=np.multiply,
   vjp_into=(lambda g, o, a, b, *, buffer: np.multiply(g, b, out=buffer),
             lambda g, o, a, b, *, buffer: np.multiply(g, a, out=buffer)))
op("div", "DivBackward0", lambda a, b: a / b, lambda g, o, a, b: g / b, lambda g, o, a, b: -g * o / b,
   into=np.true_divide)
op("neg", "NegBackward0", lambda a: -a, lambda g, o, a: -g, saves=False, reads="", into=np.negative)
op("reciprocal", "ReciprocalBackward0", np.reciprocal, lambda g, o, a: -g * o * o, reads="o")
op("pow", "PowBackward1", np.power, _pow_base_vjp, _pow_exp_vjp)
def _scaled(g, x, factor):
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


def _pow_scalar(a, *, exponent):
    return np.square(a) if exponent == 2 else np.power(a, exponent)


def _pow_scalar_vjp(g, o, a, *, exponent):
    if exponent == 0:
        return g * 0
    if exponent == 2:
        return _scaled(g, a, 2)
    return _scaled(g, np.power(a, exponent - 1), exponent)


def _pow_scalar_into(a, *, exponent, out):
    return np.square(a, out=out) if exponent == 2 else np.power(a, exponent, out=out)


def _square_vjp_into(g, o, a, *, exponent, buffer):
    """_pow_scalar_vjp for x^2 after a whole reduction (g one repeated number), written into
    ``buffer``: the same single multiply as _scaled's, without a new array."""
    if exponent == 2 and isinstance(g, np.ndarray) and g.ndim and g.size and not any(g.strides) \
            and g.shape == np.shape(a) == buffer.shape:
        return np.multiply(a, 2 * g.flat[0], out=buffer)
    return _pow_scalar_vjp(g, o, a, exponent=exponent)


op("pow_scalar", "PowBackward0", _pow_scalar, _pow_scalar_vjp, reads="i", into=_pow_scalar_into,
   vjp_into=(_square_vjp_into,))
op("rpow_scalar", "PowBackward2", lambda a, *, base: np.power(base, a),
   lambda g, o, a, *, base: (np.where(a >= 0, 0.0, g * o * np.log(base)) if base == 0
                             else g * o * np.log(base)))
op("maximum", "MaximumBackward0", np.maximum,
   lambda g, o, a, b: _maximum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: _maximum_vjp(g, o, a, b, first=False))
op("minimum", "MinimumBackward0", np.minimum,
   lambda g, o, a, b: _minimum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: _minimum_vjp(g, o, a, b, first=False))

# --- elementwise functions: forward, then the derivative (reusing the result where it can) ---
op("abs", "AbsBackward0", np.abs, lambda g, o, a: g * np.sign(a), reads="i")
op("sqrt", "SqrtBackward0", np.sqrt, lambda g, o, a: g / (2 * o), reads="o")
op("exp", "ExpBackward0", np.exp, lambda g, o, a: g * o, reads="o")
op("log", "LogBackward0", np.log, lambda g, o, a: g / a, reads="i")
op("log2", "Log2Backward0", np.log2, lambda g, o, a: g / (a * LN2), reads="i")
op("log10", "Log10Backward0", np.log10, lambda g, o, a: g / (a * LN10), reads="i")
op("sin", "SinBackward0", np.sin, lambda g, o, a: g * np.cos(a), reads="i")
op("cos", "CosBackward0", np.cos, lambda g, o, a: -g * np.sin(a), reads="i")
op("tan", "TanBackward0", np.tan, lambda g, o, a: g * (1 + o * o), reads="o")
op("asin", "AsinBackward0", np.arcsin, lambda g, o, a: g / np.sqrt(1 - a * a), reads="i")
op("acos", "AcosBackward0", np.arccos, lambda g, o, a: -g / np.sqrt(1 - a * a), reads="i")
op("atan", "AtanBackward0", np.arctan, lambda g, o, a: g / (1 + a * a), reads="i")
op("sinh", "SinhBackward0", np.sinh, lambda g, o, a: g * np.cosh(a), reads="i")
op("cosh", "CoshBackward0", np.cosh, lambda g, o, a: g * np.sinh(a), reads="i")
op("tanh", "TanhBackward0", np.tanh, lambda g, o, a: g * (1 - o * o), reads="o")
op("sigmoid", "SigmoidBackward0", _sigmoid, lambda g, o, a: g * o * (1 - o), reads="o")
op("relu", "ReluBackward0", lambda a: np.maximum(a, 0), lambda g, o, a: g * (o > 0), reads="o")
op("softplus", "SoftplusBackward0", _softplus, _softplus_vjp, reads="i")

# --- reductions (dim=None reduces everything) ---------------------------------------------
op("sum", "SumBackward0", lambda a, dim=None: np.sum(a, axis=dim),
   lambda g, o, a, dim=None: _expand(g, a.shape, dim),
   jvp=_linear(lambda t, dim=None: np.sum(t, axis=dim)), saves=False, elementwise=False,
   reads="")  # (VJPs may always read their inputs' shapes)
op("mean", "MeanBackward0", lambda a, dim=None: np.mean(a, axis=dim),
   lambda g, o, a, dim=None: _expand(g / (a.size if dim is None else a.shape[dim]), a.shape, dim),
   jvp=_linear(lambda t, dim=None: np.mean(t, axis=dim)), saves=False, elementwise=False,
   reads="")
op("max", "MaxBackward1", lambda a, dim=None: np.max(a, axis=dim),
   lambda g, o, a, dim=None: _extreme_vjp(g, o, a, dim, argfn=np.argmax),
   jvp=lambda ts, o, a, dim=None: _extreme_jvp(ts, o, a, dim, argfn=np.argmax), elementwise=False)
op("min", "MinBackward1", lambda a, dim=None: np.min(a, axis=dim),
   lambda g, o, a, dim=None: _extreme_vjp(g, o, a, dim, argfn=np.argmin),
   jvp=lambda ts, o, a, dim=None: _extreme_jvp(ts, o, a, dim, argfn=np.argmin), elementwise=False)
op("norm", "LinalgVectorNormBackward0", lambda a, dim=None: np.sqrt(np.sum(a * a, axis=dim)),
   _norm_vjp, jvp=_norm_jvp, elementwise=False)
op("logsumexp", "LogsumexpBackward0", _logsumexp, _logsumexp_vjp, jvp=_logsumexp_jvp,
   elementwise=False)

# --- products and shape ops ---------------------------------------------------------------
op("dot", "DotBackward0", np.dot, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   jvp=_bilinear(np.dot), elementwise=False)
op("mv", "MvBackward0", np.matmul, lambda g, o, a, b: np.outer(g, b), lambda g, o, a, b: a.T @ g,
   jvp=_bilinear(np.matmul), elementwise=False)
op("vm", "SqueezeBackward4", np.matmul, lambda g, o, a, b: b @ g, lambda g, o, a, b: np.outer(a, g),
   jvp=_bilinear(np.matmul), elementwise=False)
op("mm", "MmBackward0", np.matmul, lambda g, o, a, b: g @ b.T, lambda g, o, a, b: a.T @ g,
   jvp=_bilinear(np.matmul), elementwise=False)
op("transpose", "TransposeBackward0", np.transpose, lambda g, o, a: np.transpose(g),
   jvp=_linear(np.transpose), saves=False, elementwise=False)


def _scatter(g, shape, key):
    grad = np.zeros_like(g, shape=shape)
    grad[key] = g
    return grad


op("select", "SelectBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: _scatter(g, a.shape, key),
   jvp=_linear(lambda t, *, key: t[key]), saves=False, elementwise=False)
op("slice", "SliceBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: _scatter(g, a.shape, key),
   jvp=_linear(lambda t, *, key: t[key]), saves=False, elementwise=False)


def _stack(*xs):
    return np.stack(np.broadcast_arrays(*xs) if len({np.shape(x) for x in xs}) > 1 else xs)


def _pick(i: int):
    return lambda g, o, *xs: g[i]


def stack_op(n: int) -> Op:
    """torch.stack of n inputs (vector literals with variables in them)."""
    name = f"stack{n}"
    if name not in OPS:
        vjps = tuple(_pick(i) for i in range(n))
        OPS[name] = Op(name, "StackBackward0", _stack, vjps,
                       lambda ts, o, *xs: _stack(*[np.zeros(np.shape(x)) if t is None else t
                                                   for t, x in zip(ts, xs)]),
                       saves=False, elementwise=False)
    return OPS[name]


# What the JSON and the pictures call an op where its table name is an implementation detail.
_SHOWN = {"pow_scalar": "pow", "rpow_scalar": "pow", "dot": "matmul", "mv": "matmul",
          "vm": "matmul", "mm": "matmul"}


def display_name(op_name: str) -> str:
    return _SHOWN.get(op_name) or ("stack" if op_name.startswith("stack") else op_name)


# Functions a user may call by name, with how many positional tensor arguments each takes.
UNARY = ("abs sqrt exp log log2 log10 sin cos tan asin acos atan sinh cosh tanh sigmoid relu "
         "softplus reciprocal").split()
REDUCTIONS = ("sum", "mean", "max", "min", "norm", "logsumexp")
