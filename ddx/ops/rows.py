"""THE op table's rows: one per primitive, holding everything ddx knows about it (see
ddx/ops/__init__.py for what a row holds). Adding an op is adding a row here."""

from __future__ import annotations

import numpy as np

from . import kernels_cpu, vml
from .kernels import (
    at,
    at_ends,
    at_half,
    at_integer,
    at_integer_ratio,
    at_origin,
    at_tie,
    at_zero,
    atan2,
    atan2_vjp,
    emit_tensors_only,
    floor_div,
    hardswish_vjp,
    linear,
    logit_vjp,
    maximum_vjp,
    minimum_vjp,
    pick,
    scaled,
    scatter,
    stack,
)
from .kernels_act import (
    celu,
    celu_vjp,
    elu,
    elu_vjp,
    gelu,
    gelu_vjp,
    logsigmoid,
    logsigmoid_vjp,
    mish,
    mish_vjp,
    sigmoid,
    sigmoid_vjp,
    silu,
    silu_vjp,
    softplus,
    softplus_vjp,
)
from .kernels_pow import (
    pow_base_vjp,
    pow_exp_vjp,
    pow_scalar,
    pow_scalar_chain,
    pow_scalar_into,
    pow_scalar_vjp,
    rpow,
    rpow_vjp,
    square_vjp_into,
    tensor_power,
)
from .kernels_rem import remainder as aten_remainder
from .kernels_unary import (
    acosh_vjp,
    arccosh,
    arcsinh,
    arctanh,
    asinh_vjp,
    atanh_vjp,
    cosh,
    erf_value,
    erf_vjp,
    erfc_value,
    erfc_vjp,
    exp2,
    expm1,
    kept,
    log1p,
    logit,
    reciprocal,
    reciprocal_vjp,
    relu_vjp,
    rint,
    rsqrt_vjp,
    sinh,
    tanh_vjp,
    zero_slope,
)
from .table import OPS, Op, op

LN2 = float(np.log(2.0))
LN10 = 2.3025850929940456  # derivatives.yaml's literal for log10: one ulp under ln(10)
TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))
_NEEDS_POSITIVE = (0.25, 3.0)
_UNIT = (-0.9, 0.9)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SIXTH_F32 = float(np.float32(1 / 6))  # PyTorch's hardsigmoid slope is 1.0f / 6.0f, in float64 too

# --- arithmetic ---------------------------------------------------------------------------
# Arithmetic as operators, not np.add & co: the same ufuncs for arrays, and several times
# faster on numpy scalars, which the batch replay (ddx/replay/template.py) computes with.
op("add", "AddBackward0", lambda a, b: a + b, lambda g, o, a, b: g, lambda g, o, a, b: g,
   saves=False, reads="", into=np.add, call="binary", text="{0} + {1}", prec=1,
   emit={"torch": "({0} + {1})", "jax": "({0} + {1})"}, chain=("a + b", "g", "g"))
op("sub", "SubBackward0", lambda a, b: a - b, lambda g, o, a, b: g, lambda g, o, a, b: -g,
   saves=False, reads="", into=np.subtract, call="binary", names=("subtract",),
   text="{0} - {1}", prec=1, emit={"torch": "({0} - {1})", "jax": "({0} - {1})"},
   chain=("a - b", "g", "-g"))
op("rsub", "RsubBackward1", lambda a, *, other: other - a, lambda g, o, a, **k: -g, saves=False,
   reads="", text="{other} - {0}", prec=1, symbol="-",
   emit={"torch": "({other!r} - {0})", "jax": "({other!r} - {0})"}, example=("2 - x", {}),
   chain=("other - a", "-g"))
op("mul", "MulBackward0", lambda a, b: a * b, lambda g, o, a, b: g * b, lambda g, o, a, b: g * a,
   reads="i", into=np.multiply, call="binary", names=("multiply",), text="{0}*{1}", prec=2,
   vjp_into=(lambda g, o, a, b, *, buffer: np.multiply(g, b, out=buffer),
             lambda g, o, a, b, *, buffer: np.multiply(g, a, out=buffer)),
   emit={"torch": "({0} * {1})", "jax": "({0} * {1})"}, chain=("a * b", "g * b", "g * a"))
op("div", "DivBackward0", lambda a, b: a / b, lambda g, o, a, b: g / b,
   lambda g, o, a, b: -g * ((a / b) / b), reads="i", into=np.true_divide, call="binary",
   names=("divide", "true_divide"), text="{0}/{1}", prec=2,
   emit={"torch": "({0} / {1})", "jax": "({0} / {1})"},
   hint="a division by zero: add an epsilon to the denominator",
   domain=(0.5, 2.0), chain=("a / b", "g / b", "-g * ((a / b) / b)"))
op("neg", "NegBackward0", lambda a: -a, lambda g, o, a: -g, saves=False, reads="",
   into=np.negative, call="unary", names=("negative",), text="-{0}", prec=3,
   emit={"torch": "(-{0})", "jax": "(-{0})"}, chain=("-a", "-g"))
op("reciprocal", "ReciprocalBackward0", reciprocal, reciprocal_vjp, reads="o",
   call="unary", symbol="1/x", text="1/{0}", prec=2,
   hint="a division by zero: add an epsilon to the denominator",
   domain=_NEEDS_POSITIVE, emit={"torch": "torch.reciprocal({0})", "jax": "jnp.reciprocal({0})"})
op("pow", "PowBackward1", tensor_power, pow_base_vjp, pow_exp_vjp, call="binary",
   text="{0}^{1}", prec=4, symbol="^", emit={"torch": "({0} ** {1})", "jax": "({0} ** {1})"},
   hint="a power with a zero or negative base: keep the base positive",
   domain=_NEEDS_POSITIVE)
op("pow_scalar", "PowBackward0", pow_scalar, pow_scalar_vjp, reads="i", into=pow_scalar_into,
   vjp_into=(square_vjp_into,), shown="pow", symbol="^", text="{0}^{exponent}", prec=4,
   emit={"torch": "({0} ** {exponent!r})", "jax": "({0} ** {exponent!r})"},
   hint="a fractional or negative power of zero: keep the base positive",
   domain=_NEEDS_POSITIVE, example=("x ^ 2.5", {}), chain=pow_scalar_chain)
op("rpow_scalar", "PowBackward2", rpow, rpow_vjp,
   shown="pow", symbol="^", text="{base}^{0}", prec=4,
   emit={"torch": "({base!r} ** {0})", "jax": "({base!r} ** {0})"}, example=("1.7 ^ x", {}))
op("maximum", "MaximumBackward0", np.maximum,
   lambda g, o, a, b: maximum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: maximum_vjp(g, o, a, b, first=False), call="binary",
   emit={"torch": emit_tensors_only("maximum"), "jax": emit_tensors_only("maximum")},
   kink=(at_tie, "at a tie PyTorch gives each input half the gradient"))
op("minimum", "MinimumBackward0", np.minimum,
   lambda g, o, a, b: minimum_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: minimum_vjp(g, o, a, b, first=False), call="binary",
   emit={"torch": emit_tensors_only("minimum"), "jax": emit_tensors_only("minimum")},
   kink=(at_tie, "at a tie PyTorch gives each input half the gradient"))

# --- elementwise functions: forward, then the derivative (reusing the result where it can) ---
op("abs", "AbsBackward0", np.abs, lambda g, o, a: g * np.sign(a), reads="i", call="unary",
   names=("absolute",), kink=(at_zero, "at 0 PyTorch takes the slope 0 (sign(0) = 0)"),
   emit={"torch": "torch.abs({0})", "jax": "jnp.abs({0})"}, domain=(0.25, 2.0))
op("sign", "SignBackward0", np.sign, zero_slope, saves=False, reads="", call="unary",
   emit={"torch": "torch.sign({0})", "jax": "jnp.sign({0})"}, domain=(0.25, 2.0))
op("square", "PowBackward0", np.square, lambda g, o, a: scaled(g, a, 2), reads="i",
   call="unary", emit={"torch": "torch.square({0})", "jax": "jnp.square({0})"})
op("sqrt", "SqrtBackward0", vml.sqrt, lambda g, o, a: g / (2 * o), reads="o", into=vml.sqrt, call="unary",
   hint="sqrt is not differentiable at 0 (its slope is infinite): use sqrt(x + 1e-12), or "
        "keep x away from 0", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.sqrt({0})", "jax": "jnp.sqrt({0})"})
op("exp", "ExpBackward0", vml.exp, lambda g, o, a: g * o, reads="o", into=vml.exp, call="unary",
   hint="exp overflows past about 709: rescale the input (logsumexp is the stable form)",
   emit={"torch": "torch.exp({0})", "jax": "jnp.exp({0})"})
op("expm1", "Expm1Backward0", expm1, lambda g, o, a: g * (o + 1), reads="o", into=expm1,
   call="unary",
   emit={"torch": "torch.expm1({0})", "jax": "jnp.expm1({0})"},
   spaces=('torch', 'Tensor', 'special'))
op("log", "LogBackward0", vml.log, lambda g, o, a: g / a, reads="i", into=vml.log, call="unary",
   names=("ln",),
   hint="log(x) needs x > 0: clamp x or add a small epsilon, log(x + 1e-12)",
   domain=_NEEDS_POSITIVE, emit={"torch": "torch.log({0})", "jax": "jnp.log({0})"})
op("log1p", "Log1PBackward0", log1p, lambda g, o, a: g / (a + 1), reads="i", into=log1p,
   call="unary", hint="log1p(x) needs x > -1", domain=(-0.75, 2.0),
   emit={"torch": "torch.log1p({0})", "jax": "jnp.log1p({0})"},
   spaces=('torch', 'Tensor', 'special'))
op("log2", "Log2Backward0", vml.log2, lambda g, o, a: g / (a * LN2), reads="i", into=vml.log2, call="unary",
   hint="log2(x) needs x > 0: add a small epsilon", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.log2({0})", "jax": "jnp.log2({0})"})
op("log10", "Log10Backward0", vml.log10, lambda g, o, a: g / (a * LN10), reads="i",
   into=vml.log10, call="unary", hint="log10(x) needs x > 0", domain=_NEEDS_POSITIVE,
   emit={"torch": "torch.log10({0})", "jax": "jnp.log10({0})"})
op("sin", "SinBackward0", vml.sin, lambda g, o, a: g * vml.cos(a), reads="i", into=vml.sin, call="unary",
   emit={"torch": "torch.sin({0})", "jax": "jnp.sin({0})"})
op("cos", "CosBackward0", vml.cos, lambda g, o, a: -g * vml.sin(a), reads="i", into=vml.cos, call="unary",
   emit={"torch": "torch.cos({0})", "jax": "jnp.cos({0})"})
op("tan", "TanBackward0", vml.tan, lambda g, o, a: g * (1 + o * o), reads="o", into=vml.tan, call="unary",
   domain=(-1.2, 1.2), emit={"torch": "torch.tan({0})", "jax": "jnp.tan({0})"})
op("asin", "AsinBackward0", vml.arcsin, lambda g, o, a: g * (1 / np.sqrt(-a * a + 1)), reads="i",
   into=vml.arcsin, call="unary", names=("arcsin",), hint="asin' is infinite at |x| = 1", domain=_UNIT,
   emit={"torch": "torch.asin({0})", "jax": "jnp.arcsin({0})"})
op("acos", "AcosBackward0", vml.arccos, lambda g, o, a: g * -(1 / np.sqrt(-a * a + 1)), reads="i",
   into=vml.arccos, call="unary", names=("arccos",), hint="acos' is infinite at |x| = 1", domain=_UNIT,
   emit={"torch": "torch.acos({0})", "jax": "jnp.arccos({0})"})
op("atan", "AtanBackward0", vml.arctan, lambda g, o, a: g / (1 + a * a), reads="i",
   into=vml.arctan, call="unary", names=("arctan",),
   emit={"torch": "torch.atan({0})", "jax": "jnp.arctan({0})"})
op("asinh", "AsinhBackward0", arcsinh, asinh_vjp, reads="i", into=arcsinh, call="unary",
   names=("arcsinh",), emit={"torch": "torch.asinh({0})", "jax": "jnp.arcsinh({0})"})
op("acosh", "AcoshBackward0", arccosh, acosh_vjp, reads="i", into=arccosh, call="unary",
   names=("arccosh",), hint="acosh(x) needs x >= 1, and its slope is infinite at 1", domain=(1.25, 3.0),
   emit={"torch": "torch.acosh({0})", "jax": "jnp.arccosh({0})"})
op("atanh", "AtanhBackward0", arctanh, atanh_vjp, reads="i", into=arctanh, call="unary",
   names=("arctanh",), hint="atanh(x) needs |x| < 1: it is infinite at 1 and -1", domain=_UNIT,
   emit={"torch": "torch.atanh({0})", "jax": "jnp.arctanh({0})"})
op("sinh", "SinhBackward0", sinh, lambda g, o, a: g * cosh(a), reads="i", into=sinh,
   call="unary", emit={"torch": "torch.sinh({0})", "jax": "jnp.sinh({0})"})
op("cosh", "CoshBackward0", cosh, lambda g, o, a: g * sinh(a), reads="i", into=cosh,
   call="unary", emit={"torch": "torch.cosh({0})", "jax": "jnp.cosh({0})"})
op("tanh", "TanhBackward0", vml.tanh, tanh_vjp, reads="o", into=vml.tanh, call="unary",
   emit={"torch": "torch.tanh({0})", "jax": "jnp.tanh({0})"}, spaces=('torch', 'Tensor', 'F'))
op("sigmoid", "SigmoidBackward0", sigmoid, sigmoid_vjp, reads="o",
   call="unary", emit={"torch": "torch.sigmoid({0})", "jax": "jax.nn.sigmoid({0})"},
   spaces=('torch', 'Tensor', 'F'))
op("relu", "ReluBackward0", lambda a: np.maximum(0, a), relu_vjp, reads="o",
   call="unary", kink=(at_zero, "at 0 PyTorch takes the slope 0"),
   emit={"torch": "torch.relu({0})", "jax": "jax.nn.relu({0})"}, spaces=('torch', 'Tensor', 'F'))
op("softplus", "SoftplusBackward0", softplus, softplus_vjp, reads="i", call="unary",
   params={"beta": 1.0, "threshold": 20.0},
   emit={"torch": "torch.nn.functional.softplus({0}, {beta!r}, {threshold!r})",
         "jax": "jnp.where({0} * {beta!r} > {threshold!r}, {0}, "
                "jax.nn.softplus({0} * {beta!r}) / {beta!r})"},
   example=("softplus(x, beta=2, threshold=3)", {}), spaces=('F',))
op("erf", "ErfBackward0", erf_value, erf_vjp, reads="i", call="unary",
   emit={"torch": "torch.erf({0})", "jax": "jax.scipy.special.erf({0})"},
   spaces=('torch', 'Tensor', 'special'))

op("erfc", "ErfcBackward0", erfc_value, erfc_vjp, reads="i", call="unary",
   emit={"torch": "torch.erfc({0})", "jax": "jax.scipy.special.erfc({0})"},
   spaces=('torch', 'Tensor', 'special'))
op("exp2", "Exp2Backward0", exp2, lambda g, o, a: g * o * LN2, reads="o", into=exp2,
   call="unary",
   hint="exp2 overflows past 1024: rescale the input",
   emit={"torch": "torch.exp2({0})", "jax": "jnp.exp2({0})"}, spaces=('torch', 'Tensor', 'special'))
op("rsqrt", "RsqrtBackward0", lambda a: 1 / np.sqrt(a), rsqrt_vjp,
   reads="o", call="unary", hint="rsqrt(x) needs x > 0: add a small epsilon",
   domain=_NEEDS_POSITIVE, emit={"torch": "torch.rsqrt({0})", "jax": "jax.lax.rsqrt({0})"})
op("sinc", "SincBackward0", kernels_cpu.sinc, kernels_cpu.sinc_vjp, call="unary",
   emit={"torch": "torch.sinc({0})", "jax": "jnp.sinc({0})"}, spaces=('torch', 'Tensor', 'special'))
op("logit", "LogitBackward0", logit, logit_vjp, reads="i",
   call="unary", hint="logit(x) needs 0 < x < 1: clamp x into [eps, 1 - eps]", domain=(0.1, 0.9),
   emit={"torch": "torch.logit({0})", "jax": "jax.scipy.special.logit({0})"},
   spaces=('torch', 'Tensor', 'special'))

# rounding: slope 0 (PyTorch's zeros_like: no input kept), jumps where the value does
for _name, _fn, _at in (("floor", np.floor, at_integer), ("ceil", np.ceil, at_integer),
                        ("round", rint, at_half), ("trunc", np.trunc, at_integer)):
    op(_name, _name.capitalize() + "Backward0", _fn, zero_slope, saves=False,
       reads="", call="unary", domain=(0.1, 0.4),
       kink=(_at, f"{_name} jumps here: PyTorch takes the slope 0"),
       emit={"torch": f"torch.{_name}({{0}})", "jax": f"jnp.{_name}({{0}})"},
       spaces=("torch", "Tensor", "special") if _name == "round" else ("torch", "Tensor"))
op("frac", "FracBackward0", lambda a: a - np.trunc(a), lambda g, o, a: g, saves=False, reads="",
   call="unary", domain=(0.1, 0.9), kink=(at_integer, "frac jumps here: PyTorch takes the slope 1"),
   emit={"torch": "torch.frac({0})", "jax": "({0} - jnp.trunc({0}))"})

# --- activations (torch.nn.functional's; PyTorch's own grad_fn names: relu6 is a hardtanh) ---
_F = "torch.nn.functional."
# JAX's value, with PyTorch's float32 slope (SIXTH_F32) as its gradient
_JAX_HARDSIGMOID = ("(lambda v: jax.lax.stop_gradient(jax.nn.hard_sigmoid(v)) + (jax.nn.relu6(v + 3) "
                    f"- jax.lax.stop_gradient(jax.nn.relu6(v + 3))) * {SIXTH_F32!r})({{0}})")
op("silu", "SiluBackward0", silu, silu_vjp, reads="i", call="unary", method=False,
   emit={"torch": _F + "silu({0})", "jax": "jax.nn.silu({0})"}, spaces=('F',))
op("mish", "MishBackward0", mish, mish_vjp, reads="i", call="unary", method=False,
   emit={"torch": _F + "mish({0})", "jax": "jax.nn.mish({0})"}, spaces=('F',))
op("relu6", "HardtanhBackward0", lambda a: np.minimum(6, np.maximum(0, a)),
   lambda g, o, a: kept(g, (a > 0) & (a < 6)), reads="i", call="unary", method=False,
   kink=(at(0, 6), "at 0 and 6 PyTorch takes the slope 0"), domain=(0.5, 5.5),
   emit={"torch": _F + "relu6({0})", "jax": "jax.nn.relu6({0})"}, spaces=('F',))
op("hardtanh", "HardtanhBackward0",
   lambda a, min_val=-1.0, max_val=1.0: np.minimum(max_val, np.maximum(min_val, a)),
   lambda g, o, a, min_val=-1.0, max_val=1.0: kept(g, (a > min_val) & (a < max_val)),
   reads="i",
   call="unary", method=False, params={"min_val": -1.0, "max_val": 1.0},
   kink=(at_ends, "at min_val and max_val PyTorch takes the slope 0"), domain=_UNIT,
   emit={"torch": _F + "hardtanh({0}, {min_val!r}, {max_val!r})",
         "jax": "jnp.clip({0}, {min_val!r}, {max_val!r})"},
   example=("hardtanh(x, -0.5, max_val=0.75)", {}), spaces=('F',))
op("hardsigmoid", "HardsigmoidBackward0", lambda a: np.minimum(np.maximum(a + 3, 0), 6) / 6,
   lambda g, o, a: np.where((a > -3) & (a < 3), g * SIXTH_F32, 0.0), reads="i", call="unary",
   method=False, kink=(at(-3, 3), "at -3 and 3 PyTorch takes the slope 0"), domain=(-2.5, 2.5),
   emit={"torch": _F + "hardsigmoid({0})", "jax": _JAX_HARDSIGMOID}, spaces=('F',))
op("hardswish", "HardswishBackward0", lambda a: a * np.minimum(np.maximum(a + 3, 0), 6) / 6,
   hardswish_vjp, reads="i", call="unary", method=False, domain=(-2.5, 2.5),
   kink=(at(-3, 3), "PyTorch takes the slope 0 at -3 (the left one) and 1 at 3 (the right one)"),
   emit={"torch": _F + "hardswish({0})", "jax": "jax.nn.hard_swish({0})"}, spaces=('F',))
op("logsigmoid", "LogSigmoidBackward0", logsigmoid, logsigmoid_vjp, reads="i", call="unary",
   method=False, emit={"torch": _F + "logsigmoid({0})", "jax": "jax.nn.log_sigmoid({0})"},
   spaces=('F',))
op("elu", "EluBackward0", elu, elu_vjp, reads="i", call="unary", method=False,
   params={"alpha": 1.0}, emit={"torch": _F + "elu({0}, {alpha!r})",
                                "jax": "jax.nn.elu({0}, {alpha!r})"},
   example=("elu(x, alpha=1.5)", {}), spaces=('F',))
op("celu", "CeluBackward0", celu, celu_vjp, reads="i", call="unary", method=False,
   params={"alpha": 1.0}, emit={"torch": "torch.celu({0}, {alpha!r})",
                                "jax": "jax.nn.celu({0}, {alpha!r})"},
   example=("celu(x, 0.5)", {}), spaces=('torch', 'F'))
op("selu", "EluBackward0", lambda a: elu(a, SELU_ALPHA, SELU_SCALE),
   lambda g, o, a: elu_vjp(g, o, a, SELU_ALPHA, SELU_SCALE), reads="i", call="unary",
   method=False, kink=(at(0), "at 0 PyTorch takes the left slope, scale * alpha = 1.758"),
   emit={"torch": "torch.selu({0})", "jax": "jax.nn.selu({0})"}, spaces=('torch', 'F'))
op("gelu", "GeluBackward0", gelu, gelu_vjp, call="unary", method=False,
   emit={"torch": _F + "gelu({0})", "jax": "jax.nn.gelu({0}, approximate=False)"}, spaces=('F',))
op("leaky_relu", "LeakyReluBackward0",
   lambda a, negative_slope=0.01: np.where(a > 0, a, a * negative_slope),
   lambda g, o, a, negative_slope=0.01: np.where(a > 0, g, g * negative_slope), reads="i",
   call="unary", method=False, params={"negative_slope": 0.01},
   kink=(at_zero, "at 0 PyTorch takes the slope negative_slope (the left one)"),
   emit={"torch": _F + "leaky_relu({0}, {negative_slope!r})",
         "jax": "jax.nn.leaky_relu({0}, {negative_slope!r})"},
   example=("leaky_relu(x, negative_slope=0.2)", {}), spaces=('F',))

# --- binary functions of two tensors ------------------------------------------------------
op("hypot", "HypotBackward0", np.hypot, lambda g, o, a, b: g * a / o,
   lambda g, o, a, b: g * b / o, call="binary",
   hint="hypot is not differentiable at (0, 0): its gradient there is 0/0",
   emit={"torch": emit_tensors_only("hypot"), "jax": emit_tensors_only("hypot")})
op("atan2", "Atan2Backward0", atan2, lambda g, o, a, b: atan2_vjp(g, o, a, b, first=True),
   lambda g, o, a, b: atan2_vjp(g, o, a, b, first=False), reads="i", call="binary",
   names=("arctan2",), kink=(at_origin, "at (0, 0) PyTorch takes both slopes 0"),
   domain=(0.25, 2.0),
   emit={"torch": emit_tensors_only("atan2"), "jax": emit_tensors_only("arctan2")})
op("fmod", "FmodBackward1", np.fmod, lambda g, o, a, b: g,
   lambda g, o, a, b: -g * np.trunc(a / b), reads="i", call="binary", domain=(0.5, 2.0),
   kink=(at_integer_ratio, "fmod jumps where x/y is an integer: PyTorch takes the slopes 1 "
                           "and -trunc(x/y)"),
   emit={"torch": "torch.fmod({0}, {1})", "jax": "jnp.fmod({0}, {1})"})
op("remainder", "RemainderBackward1", aten_remainder, lambda g, o, a, b: g,
   lambda g, o, a, b: -g * floor_div(a, b), reads="i", call="binary", domain=(0.5, 2.0),
   kink=(at_integer_ratio, "remainder jumps where x/y is an integer: PyTorch takes the "
                           "slopes 1 and -floor(x/y)"),
   emit={"torch": "torch.remainder({0}, {1})", "jax": "jnp.remainder({0}, {1})"})

# --- products and shape ops ---------------------------------------------------------------
op("select", "SelectBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: scatter(g, a.shape, key),
   jvp=linear(lambda t, *, key: t[key]), saves=False, elementwise=False, symbol="[i]",
   emit={"torch": "{0}[{key}]", "jax": "{0}[{key}]"}, example=("x[1]", {"x": (3,)}))
op("slice", "SliceBackward0", lambda a, *, key: a[key],
   lambda g, o, a, *, key: scatter(g, a.shape, key),
   jvp=linear(lambda t, *, key: t[key]), saves=False, elementwise=False, symbol="[a:b]",
   emit={"torch": "{0}[{key}]", "jax": "{0}[{key}]"}, example=("x[1:]", {"x": (3,)}))


def stack_op(n: int) -> Op:
    """torch.stack of n inputs (vector literals with variables in them): one row per count."""
    name = f"stack{n}"
    if name not in OPS:
        op(name, "StackBackward0", stack, *(pick(i) for i in range(n)),
           jvp=lambda ts, o, *xs: stack(*[np.zeros(np.shape(x)) if t is None else t
                                           for t, x in zip(ts, xs)]),
           saves=False, elementwise=False, shown="stack",
           emit={"torch": "torch.stack([{all}])", "jax": "jnp.stack([{all}])"},
           example=("[" + ", ".join("xy"[i % 2] for i in range(n)) + "]", {}))
    return OPS[name]
