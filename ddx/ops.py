"""THE op table: one row per primitive holds everything ddx knows about it.

A row has its numpy forward, one VJP per input (and a JVP where the op is not elementwise),
the grad_fn name and its variants by argument, the names a user calls it by, how it is
written (in ddx's language, in pictures, in the JSON, in emitted torch/JAX scripts), the
notes --explain gives where its domain ends or it has a kink, its result dtype, and an
example call that the table's tests and every mode are run on. Nothing else in ddx names an
op: adding an op is adding a row here (with a kernel function beside it where it needs one).

The VJP rules are written with numpy's functions, so that they run unchanged on the number
types that implement numpy's protocols: plain arrays (the engine), dual numbers (second
order, ddx/hessian.py) and symbolic values (the explain view's formulas, ddx/symbolic.py).
Both of those find the derivative of each numpy function a rule uses in this same table
(``UFUNCS``), so no second derivative table exists."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

LN2 = float(np.log(2.0))
LN10 = float(np.log(10.0))
TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))


class Op:
    """One primitive. VJPs take ``(g, out, *inputs, **kw)``; the engine undoes broadcasting.

    (A plain class: a dataclass costs a few milliseconds of every one-liner's start-up.)"""

    __slots__ = ("name", "grad_fn", "fn", "vjp", "jvp", "saves", "elementwise", "reads", "into",
                 "vjp_into", "call", "names", "variants", "shown", "symbol", "text", "prec",
                 "emit", "hint", "kink", "domain", "dtype", "example", "method")

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
        self.call = None  # "unary" | "binary" | "reduction": called by name; None: by syntax
        self.names: tuple[str, ...] = ()  # every name it is called by (the row's own first)
        self.method = True  # also x.name(...) in the REPL
        self.variants: dict[str, str] = {}  # keyword argument present -> grad_fn name
        self.shown = name  # what the JSON and the pictures call it
        self.symbol = name  # its short form in pictures
        self.text = None  # its form in ddx's language, "{0} + {1}"; None: name(args)
        self.prec = 9  # the binding strength of ``text`` (see symbolic.PREC)
        self.emit: dict = {}  # "torch"/"jax" -> a str.format template or a function
        self.hint: str | None = None  # what to do where its value or gradient is nan/inf
        self.kink: tuple | None = None  # (where(*inputs) -> bool mask, what PyTorch takes)
        self.domain: tuple = (-2.0, 2.0)  # where it is smooth: random points for tests
        self.dtype = "same"  # result dtype: "same" (the inputs' float dtype) or a numpy name
        self.example: tuple = ("", {})  # (source using x, y, shapes) for the table's tests

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    @property
    def arity(self) -> int:
        return len(self.vjp)

    def grad_fn_for(self, kw: dict | None) -> str:
        """The grad_fn name PyTorch gives this op for these keyword arguments."""
        if kw and self.variants:
            for key, name in self.variants.items():
                if kw.get(key) is not None:
                    return name
        return self.grad_fn


OPS: dict[str, Op] = {}
CALLS: dict[str, Op] = {}  # every name a user may call an op by -> its row
UFUNCS: dict[np.ufunc, Op] = {}  # an elementwise row by its numpy ufunc (derivatives of rules)


def op(name: str, grad_fn: str, fn: Callable, *vjp: Callable, jvp: Callable | None = None,
       saves: bool = True, elementwise: bool = True, reads: str = "io",
       into: Callable | None = None, vjp_into: tuple | None = None, call: str | None = None,
       names: tuple[str, ...] = (), method: bool = True, variants: dict | None = None,
       shown: str | None = None, symbol: str | None = None, text: str | None = None,
       prec: int = 9, emit: dict | None = None, hint: str | None = None,
       kink: tuple | None = None, domain: tuple = (-2.0, 2.0), dtype: str = "same",
       example: tuple | None = None) -> Op:
    """Register one row (a later row of the same name replaces it everywhere)."""
    if into is None and isinstance(fn, np.ufunc):
        into = fn
    row = Op(name, grad_fn, fn, tuple(vjp), jvp, saves, elementwise, reads, into, vjp_into)
    row.call = call
    row.names = (name, *names) if call else ()
    row.method = method
    row.variants = variants or {}
    row.shown = shown or name
    row.symbol = symbol or (text.replace("{0}", "").replace("{1}", "").strip() if text
                            else row.shown)
    row.text = text
    row.prec = prec
    row.emit = emit or {}
    row.hint = hint
    row.kink = kink
    row.domain = domain
    row.dtype = dtype
    if example is None:
        arity = len(vjp)
        args = ", ".join("xy"[i] for i in range(arity))
        shapes = {"x": (4,)} if call == "reduction" else {}
        example = (text.format("x", "y") if text else f"{name}({args})", shapes)
    row.example = example
    old = OPS.get(name)
    if old is not None:
        for key in [k for k, v in CALLS.items() if v is old]:
            del CALLS[key]
        for key in [k for k, v in UFUNCS.items() if v is old]:
            del UFUNCS[key]
    OPS[name] = row
    for alias in row.names:
        CALLS[alias] = row
    if elementwise:
        for f in (into, fn):
            if isinstance(f, np.ufunc) and f.nout == 1 and f not in UFUNCS:
                UFUNCS[f] = row
    return row


def unregister(name: str) -> None:
    """Remove a row (tests register synthetic rows and take them out again)."""
    row = OPS.pop(name)
    for table in (CALLS, UFUNCS):
        for key in [k for k, v in table.items() if v is row]:
            del table[key]


def display_name(op_name: str) -> str:
    """What the JSON and the pictures call an op (pow_scalar is "pow")."""
    row = OPS.get(op_name)
    return row.shown if row is not None else op_name


# --- kernels: forward functions and rules that are more than one expression -----------------

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


def _erf(a):
    """erf elementwise: numpy has none, so math.erf per element, in the input's dtype."""
    from math import erf

    arr = np.asarray(a)
    flat = [erf(v) for v in arr.reshape(-1).tolist()]
    return np.array(flat, dtype=arr.dtype if arr.dtype.kind == "f" else np.float64
                    ).reshape(arr.shape)


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
    # (initial: the log of an empty sum is -inf, as PyTorch gives)
    m = np.max(a, axis=dim, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
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


def _rpow_vjp(g, o, a, *, base):
    if base == 0:
        return np.where(a >= 0, 0.0, g * o * np.log(base))
    return g * o * np.log(base)


def _scatter(g, shape, key):
    grad = np.zeros_like(g, shape=shape)
    grad[key] = g
    return grad


def _stack(*xs):
    return np.stack(np.broadcast_arrays(*xs) if len({np.shape(x) for x in xs}) > 1 else xs)


def _pick(i: int):
    return lambda g, o, *xs: g[i]


# --- emitted code for the rows that need more than a template --------------------------------

def _emit_extreme(op_name: str):
    def emit(args, t, lib):
        dim = t.kw.get("dim")
        if lib == "torch":
            return (f"torch.{op_name}({args[0]}, dim={dim}).values" if dim is not None
                    else f"torch.{op_name}({args[0]})")
        return f"jnp.{op_name}({args[0]}" + (f", axis={dim})" if dim is not None else ")")
    return emit


def _emit_tensors_only(op_name: str):
    """torch.maximum & co take tensors only: plain numbers are wrapped."""
    def emit(args, t, lib):
        wrap = "torch.tensor" if lib == "torch" else "jnp.asarray"
        a, b = (f"{wrap}({x})" if s.weak else x for x, s in zip(args, t.inputs))
        return f"{'torch' if lib == 'torch' else 'jnp'}.{op_name}({a}, {b})"
    return emit


def _emit_transpose(args, t, lib):
    if t.value.ndim < 2:
        return args[0]
    return f"torch.transpose({args[0]}, 0, 1)" if lib == "torch" else f"jnp.transpose({args[0]})"


def _emit_logsumexp(args, t, lib):
    dim = t.kw.get("dim")
    if lib == "torch":
        d = dim if dim is not None else f"tuple(range({args[0]}.dim()))"
        return f"torch.logsumexp({args[0]}, dim={d})"
    return f"jax.scipy.special.logsumexp({args[0]}" + (f", axis={dim})" if dim is not None
                                                       else ")")


def _reduction_emit(torch_name: str, jax_name: str) -> dict:
    return {"torch": f"{torch_name}({{0}}{{tail}})", "jax": f"{jax_name}({{0}}{{tail}})"}


def _at_zero(a, *rest):
    return np.asarray(a) == 0


def _at_tie(a, b):
    return np.asarray(a) == np.asarray(b)


def _at_reduced_tie(a, dim=None):
    a = np.asarray(a)
    top = np.max(a, axis=dim, keepdims=True)
    return np.count_nonzero(a == top, axis=dim) > 1


# PREC (see symbolic.py): 1 + -, 2 * / @, 3 unary minus, 4 ^, 9 an atom or a call
_NEEDS_POSITIVE = (0.25, 3.0)
_UNIT = (-0.9, 0.9)

# --- arithmetic ---------------------------------------------------------------------------
# Arithmetic as operators, not np.add & co: the same ufuncs for arrays, and several times
# faster on numpy scalars, which the batch replay (ddx/template.py) computes with.
op("add", "AddBackward0", lambda a, b: a + b, lambda g, o, a, b: g, lambda g, o, a, b: g,
   saves=False, reads="", into=np.add, call="binary", text="{0} + {1}", prec=1,
   emit={"torch": "({0} + {1})", "jax": "({0} + {1})"})
op("sub", "SubBackward0", lambda a, b: a - b, lambda g, o, a, b: g, lambda g, o, a, b: -g,
   saves=False, reads="", into=np.subtract, call="binary", names=("subtract",),
   text="{0} - {1}", prec=1, emit={"torch": "({0} - {1})", "jax": "({0} - {1})"})
op("rsub", "RsubBackward1", lambda a, *, other: other - a, lambda g, o, a, **k: -g, saves=False,
   reads="", text="{other} - {0}", prec=1, symbol="-",
   emit={"torch": "({other!r} - {0})", "jax": "({other!r} - {0})"}, example=("2 - x", {}))
op("mul", "MulBackward0", lambda a, b: a * b, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   reads="i", into=np.multiply, call="binary", names=("multiply",), text="{0}*{1}", prec=2,
   vjp_into=(lambda g, o, a, b, *, buffer: np.multiply(g, b, out=buffer),
             lambda g, o, a, b, *, buffer: np.multiply(g, a, out=buffer)),
   emit={"torch": "({0} * {1})", "jax": "({0} * {1})"})
op("div", "DivBackward0", lambda a, b: a / b, lambda g, o, a, b: g / b, lambda g, o, a, b: -g * o / b,
   into=np.true_divide, call="binary", names=("divide", "true_divide"), text="{0}/{1}", prec=2,
   emit={"torch": "({0} / {1})", "jax": "({0} / {1})"},
   hint="a division by zero: add an epsilon to the denominator",
   domain=(0.5, 2.0))
op("neg", "NegBackward0", lambda a: -a, lambda g, o, a: -g, saves=False, reads="",
   into=np.negative, call="unary", names=("negative",), text="-{0}", prec=3,
   emit={"torch": "(-{0})", "jax": "(-{0})"})
op("reciprocal", "ReciprocalBackward0", np.reciprocal, lambda g, o, a: -g * o * o, reads="o",
   call="unary", symbol="1/x", text="1/{0}", prec=2,
   hint="a division by zero: add an epsilon to the denominator",
   domain=_NEEDS_POSITIVE, emit={"torch": "torch.reciprocal({0})", "jax": "jnp.reciprocal({0})"})
op("pow", "PowBackward1", np.power, _pow_base_vjp, _pow_exp_vjp, call="binary",
   text="{0}^{1}", prec=4, symbol="^", emit={"torch": "({0} ** {1})", "jax": "({0} ** {1})"},
   hint="a power with a zero or negative base: keep the base positive",
   domain=_NEEDS_POSITIVE)
op("pow_scalar", "PowBackward0", _pow_scalar, _pow_scalar_vjp, reads="i", into=_pow_scalar_into,
   vjp_into=(_square_vjp_into,), shown="pow", symbol="^", text="{0}^{exponent}", prec=4,
   emit={"torch": "({0} ** {exponent!r})", "jax": "({0} ** {exponent!r})"},
   hint="a fractional or negative power of zero: keep the base positive",
   domain=_NEEDS_POSITIVE, example=("x ^ 2.5", {}))
op("rpow_scalar", "PowBackward2", lambda a, *, base: np.power(base, a), _rpow_vjp,
   shown="pow", symbol="^", text="{base}^{0}", prec=4,
   emit={"torch": "({base!r} ** {0})", "jax": "({base!r} ** {0})"}, example=("1.7 ^ x", {}))
op("maximum", "MaximumBackward0", np.maximum,
   lambda g, o, a, b: _maximum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: _maximum_vjp(g, o, a, b, first=False), call="binary",
   emit={"torch": _emit_tensors_only("maximum"), "jax": _emit_tensors_only("maximum")},
   kink=(_at_tie, "at a tie PyTorch gives each input half the gradient"))
op("minimum", "MinimumBackward0", np.minimum,
   lambda g, o, a, b: _minimum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: _minimum_vjp(g, o, a, b, first=False), call="binary",
   emit={"torch": _emit_tensors_only("minimum"), "jax": _emit_tensors_only("minimum")},
   kink=(_at_tie, "at a tie PyTorch gives each input half the gradient"))

# --- elementwise functions: forward, then the derivative (reusing the result where it can) ---
op("abs", "AbsBackward0", np.abs, lambda g, o, a: g * np.sign(a), reads="i", call="unary",
   names=("absolute",), kink=(_at_zero, "at 0 PyTorch takes the slope 0 (sign(0) = 0)"),
   emit={"torch": "torch.abs({0})", "jax": "jnp.abs({0})"}, domain=(0.25, 2.0))
op("sign", "SignBackward0", np.sign, lambda g, o, a: g * 0, reads="", call="unary",
   emit={"torch": "torch.sign({0})", "jax": "jnp.sign({0})"}, domain=(0.25, 2.0))
op("square", "PowBackward0", np.square, lambda g, o, a: _scaled(g, a, 2), reads="i",
   call="unary", emit={"torch": "torch.square({0})", "jax": "jnp.square({0})"})
op("sqrt", "SqrtBackward0", np.sqrt, lambda g, o, a: g / (2 * o), reads="o", call="unary",
   hint="sqrt is not differentiable at 0 (its slope is infinite): use sqrt(x + 1e-12), or "
        "keep x away from 0", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.sqrt({0})", "jax": "jnp.sqrt({0})"})
op("exp", "ExpBackward0", np.exp, lambda g, o, a: g * o, reads="o", call="unary",
   hint="exp overflows past about 709: rescale the input (logsumexp is the stable form)",
   emit={"torch": "torch.exp({0})", "jax": "jnp.exp({0})"})
op("expm1", "Expm1Backward0", np.expm1, lambda g, o, a: g * (o + 1), reads="o", call="unary",
   emit={"torch": "torch.expm1({0})", "jax": "jnp.expm1({0})"})
op("log", "LogBackward0", np.log, lambda g, o, a: g / a, reads="i", call="unary", names=("ln",),
   hint="log(x) needs x > 0: clamp x or add a small epsilon, log(x + 1e-12)",
   domain=_NEEDS_POSITIVE, emit={"torch": "torch.log({0})", "jax": "jnp.log({0})"})
op("log1p", "Log1PBackward0", np.log1p, lambda g, o, a: g / (a + 1), reads="i", call="unary",
   hint="log1p(x) needs x > -1", domain=(-0.75, 2.0),
   emit={"torch": "torch.log1p({0})", "jax": "jnp.log1p({0})"})
op("log2", "Log2Backward0", np.log2, lambda g, o, a: g / (a * LN2), reads="i", call="unary",
   hint="log2(x) needs x > 0: add a small epsilon", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.log2({0})", "jax": "jnp.log2({0})"})
op("log10", "Log10Backward0", np.log10, lambda g, o, a: g / (a * LN10), reads="i",
   call="unary", hint="log10(x) needs x > 0", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.log10({0})", "jax": "jnp.log10({0})"})
op("sin", "SinBackward0", np.sin, lambda g, o, a: g * np.cos(a), reads="i", call="unary",
   emit={"torch": "torch.sin({0})", "jax": "jnp.sin({0})"})
op("cos", "CosBackward0", np.cos, lambda g, o, a: -g * np.sin(a), reads="i", call="unary",
   emit={"torch": "torch.cos({0})", "jax": "jnp.cos({0})"})
op("tan", "TanBackward0", np.tan, lambda g, o, a: g * (1 + o * o), reads="o", call="unary",
   domain=(-1.2, 1.2), emit={"torch": "torch.tan({0})", "jax": "jnp.tan({0})"})
op("asin", "AsinBackward0", np.arcsin, lambda g, o, a: g / np.sqrt(1 - a * a), reads="i",
   call="unary", names=("arcsin",), hint="asin' is infinite at |x| = 1", domain=_UNIT,
   emit={"torch": "torch.asin({0})", "jax": "jnp.arcsin({0})"})
op("acos", "AcosBackward0", np.arccos, lambda g, o, a: -g / np.sqrt(1 - a * a), reads="i",
   call="unary", names=("arccos",), hint="acos' is infinite at |x| = 1", domain=_UNIT,
   emit={"torch": "torch.acos({0})", "jax": "jnp.arccos({0})"})
op("atan", "AtanBackward0", np.arctan, lambda g, o, a: g / (1 + a * a), reads="i",
   call="unary", names=("arctan",), emit={"torch": "torch.atan({0})", "jax": "jnp.arctan({0})"})
op("sinh", "SinhBackward0", np.sinh, lambda g, o, a: g * np.cosh(a), reads="i", call="unary",
   emit={"torch": "torch.sinh({0})", "jax": "jnp.sinh({0})"})
op("cosh", "CoshBackward0", np.cosh, lambda g, o, a: g * np.sinh(a), reads="i", call="unary",
   emit={"torch": "torch.cosh({0})", "jax": "jnp.cosh({0})"})
op("tanh", "TanhBackward0", np.tanh, lambda g, o, a: g * (1 - o * o), reads="o", call="unary",
   emit={"torch": "torch.tanh({0})", "jax": "jnp.tanh({0})"})
op("sigmoid", "SigmoidBackward0", _sigmoid, lambda g, o, a: g * o * (1 - o), reads="o",
   call="unary", emit={"torch": "torch.sigmoid({0})", "jax": "jax.nn.sigmoid({0})"})
op("relu", "ReluBackward0", lambda a: np.maximum(a, 0), lambda g, o, a: g * (o > 0), reads="o",
   call="unary", kink=(_at_zero, "at 0 PyTorch takes the slope 0"),
   emit={"torch": "torch.relu({0})", "jax": "jax.nn.relu({0})"})
op("softplus", "SoftplusBackward0", _softplus, _softplus_vjp, reads="i", call="unary",
   emit={"torch": "torch.nn.functional.softplus({0})", "jax": "jax.nn.softplus({0})"})
op("erf", "ErfBackward0", _erf,
   lambda g, o, a: g * TWO_OVER_SQRT_PI * np.exp(-(a * a)), reads="i", call="unary",
   emit={"torch": "torch.erf({0})", "jax": "jax.scipy.special.erf({0})"})

# --- reductions (dim=None reduces everything) ---------------------------------------------
op("sum", "SumBackward0", lambda a, dim=None: np.sum(a, axis=dim),
   lambda g, o, a, dim=None: _expand(g, a.shape, dim),
   jvp=_linear(lambda t, dim=None: np.sum(t, axis=dim)), saves=False, elementwise=False,
   reads="", call="reduction", variants={"dim": "SumBackward1"},
   emit=_reduction_emit("torch.sum", "jnp.sum"))  # (VJPs may always read their inputs' shapes)
op("mean", "MeanBackward0", lambda a, dim=None: np.mean(a, axis=dim),
   lambda g, o, a, dim=None: _expand(g / (a.size if dim is None else a.shape[dim]), a.shape, dim),
   jvp=_linear(lambda t, dim=None: np.mean(t, axis=dim)), saves=False, elementwise=False,
   reads="", call="reduction", variants={"dim": "MeanBackward1"},
   emit=_reduction_emit("torch.mean", "jnp.mean"))
op("max", "MaxBackward1", lambda a, dim=None: np.max(a, axis=dim),
   lambda g, o, a, dim=None: _extreme_vjp(g, o, a, dim, argfn=np.argmax),
   jvp=lambda ts, o, a, dim=None: _extreme_jvp(ts, o, a, dim, argfn=np.argmax),
   elementwise=False, call="reduction", variants={"dim": "MaxBackward0"},
   kink=(_at_reduced_tie, "tied maxima share the gradient evenly"),
   emit={"torch": _emit_extreme("max"), "jax": _emit_extreme("max")})
op("min", "MinBackward1", lambda a, dim=None: np.min(a, axis=dim),
   lambda g, o, a, dim=None: _extreme_vjp(g, o, a, dim, argfn=np.argmin),
   jvp=lambda ts, o, a, dim=None: _extreme_jvp(ts, o, a, dim, argfn=np.argmin),
   elementwise=False, call="reduction", variants={"dim": "MinBackward0"},
   kink=(_at_reduced_tie, "tied minima share the gradient evenly"),
   emit={"torch": _emit_extreme("min"), "jax": _emit_extreme("min")})
op("norm", "LinalgVectorNormBackward0", lambda a, dim=None: np.sqrt(np.sum(a * a, axis=dim)),
   _norm_vjp, jvp=_norm_jvp, elementwise=False, call="reduction",
   hint="norm is not differentiable at the zero vector",
   emit={"torch": "torch.linalg.vector_norm({0}{tail})", "jax": "jnp.linalg.norm({0}{tail})"})
op("logsumexp", "LogsumexpBackward0", _logsumexp, _logsumexp_vjp, jvp=_logsumexp_jvp,
   elementwise=False, call="reduction",
   emit={"torch": _emit_logsumexp, "jax": _emit_logsumexp})

# --- products and shape ops ---------------------------------------------------------------
op("dot", "DotBackward0", np.dot, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   jvp=_bilinear(np.dot), elementwise=False, call="binary", shown="matmul", symbol="@",
   emit={"torch": "torch.dot({0}, {1})", "jax": "jnp.dot({0}, {1})"},
   example=("dot(x, y)", {"x": (3,), "y": (3,)}))
op("mv", "MvBackward0", np.matmul, lambda g, o, a, b: np.outer(g, b), lambda g, o, a, b: a.T @ g,
   jvp=_bilinear(np.matmul), elementwise=False, shown="matmul", text="{0} @ {1}", prec=2,
   emit={"torch": "({0} @ {1})", "jax": "({0} @ {1})"},
   example=("x @ y", {"x": (2, 3), "y": (3,)}))
op("vm", "SqueezeBackward4", np.matmul, lambda g, o, a, b: b @ g, lambda g, o, a, b: np.outer(a, g),
   jvp=_bilinear(np.matmul), elementwise=False, shown="matmul", text="{0} @ {1}", prec=2,
   emit={"torch": "({0} @ {1})", "jax": "({0} @ {1})"},
   example=("x @ y", {"x": (2,), "y": (2, 3)}))
op("mm", "MmBackward0", np.matmul, lambda g, o, a, b: g @ b.T, lambda g, o, a, b: a.T @ g,
   jvp=_bilinear(np.matmul), elementwise=False, shown="matmul", text="{0} @ {1}", prec=2,
   emit={"torch": "({0} @ {1})", "jax": "({0} @ {1})"},
   example=("x @ y", {"x": (2, 3), "y": (3, 2)}))
op("transpose", "TransposeBackward0", np.transpose, lambda g, o, a: np.transpose(g),
   jvp=_linear(np.transpose), saves=False, elementwise=False, call="unary",
   emit={"torch": _emit_transpose, "jax": _emit_transpose},
   example=("transpose(x)", {"x": (2, 3)}))
op("select", "SelectBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: _scatter(g, a.shape, key),
   jvp=_linear(lambda t, *, key: t[key]), saves=False, elementwise=False, symbol="[i]",
   emit={"torch": "{0}[{key}]", "jax": "{0}[{key}]"}, example=("x[1]", {"x": (3,)}))
op("slice", "SliceBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: _scatter(g, a.shape, key),
   jvp=_linear(lambda t, *, key: t[key]), saves=False, elementwise=False, symbol="[a:b]",
   emit={"torch": "{0}[{key}]", "jax": "{0}[{key}]"}, example=("x[1:]", {"x": (3,)}))


def stack_op(n: int) -> Op:
    """torch.stack of n inputs (vector literals with variables in them): one row per count."""
    name = f"stack{n}"
    if name not in OPS:
        op(name, "StackBackward0", _stack, *(_pick(i) for i in range(n)),
           jvp=lambda ts, o, *xs: _stack(*[np.zeros(np.shape(x)) if t is None else t
                                           for t, x in zip(ts, xs)]),
           saves=False, elementwise=False, shown="stack",
           emit={"torch": "torch.stack([{all}])", "jax": "jnp.stack([{all}])"},
           example=("[" + ", ".join("xy"[i % 2] for i in range(n)) + "]", {}))
    return OPS[name]
