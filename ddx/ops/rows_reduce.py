"""The op table's reduction rows (one op(...) call per op; see ddx/ops/table.py for a row's
fields): sum mean prod max min amax amin var std norm logsumexp, cumsum cumprod, and the
ones without a gradient, argmax argmin all any. Their callers (dim, keepdim, correction, p)
are in ddx/graph/calls_reduce.py."""

from __future__ import annotations

from functools import partial

import numpy as np

from .emit_reduce import (
    at_reduced_tie,
    emit_cumulative,
    emit_extreme,
    emit_index,
    emit_logsumexp,
    emit_norm,
    emit_reduction,
    emit_var,
)
from .kernels_extreme import amax, amin, ext_share_jvp, ext_share_vjp, extreme_jvp, extreme_vjp
from .kernels_reduce import (
    argmax,
    argmin,
    average,
    average_vjp,
    cumprod,
    cumprod_jvp,
    cumprod_vjp,
    cumsum,
    cumsum_vjp,
    every,
    logsumexp,
    logsumexp_jvp,
    logsumexp_vjp,
    no_gradient,
    no_tangent,
    norm_jvp,
    norm_vjp,
    product,
    product_jvp,
    product_vjp,
    reduce_linear,
    some,
    total,
    total_vjp,
    vector_norm,
)
from .kernels_sum import mean_of
from .kernels_var import (
    deviation,
    deviation_jvp,
    deviation_vjp,
    variance,
    variance_jvp,
    variance_vjp,
)
from .table import op

_MATRIX = {"x": (2, 3)}

# --- reductions: called with the tensor alone, they reduce everything (dim=None) ------------
op("sum", "SumBackward0", total, total_vjp, jvp=reduce_linear(total), saves=False,
   elementwise=False, reads="", call="reduction", variants={"dim": "SumBackward1"},
   emit={"torch": emit_reduction("torch.sum", "jnp.sum"),
         "jax": emit_reduction("torch.sum", "jnp.sum")},
   example=("sum(x, 1, keepdim=True)", _MATRIX),  # (VJPs may always read their inputs' shapes)
   of_sum=lambda total, count: total)
op("mean", "MeanBackward0", average, average_vjp, jvp=reduce_linear(average), saves=False,
   elementwise=False, reads="", call="reduction", variants={"dim": "MeanBackward1"},
   emit={"torch": emit_reduction("torch.mean", "jnp.mean"),
         "jax": emit_reduction("torch.mean", "jnp.mean")},
   example=("mean(x, dim=-1)", _MATRIX), of_sum=mean_of)
op("prod", "ProdBackward0", product, product_vjp, jvp=product_jvp, elementwise=False,
   call="reduction", variants={"dim": "ProdBackward1"},
   hint="a product with a zero in it: its gradient is the product of the others",
   emit={"torch": emit_reduction("torch.prod", "jnp.prod"),
         "jax": emit_reduction("torch.prod", "jnp.prod")},
   example=("prod(x, 1)", _MATRIX))
op("max", "MaxBackward1", amax, partial(extreme_vjp, argfn=np.argmax),
   jvp=partial(extreme_jvp, argfn=np.argmax), elementwise=False, call="reduction",
   variants={"dim": "MaxBackward0"},
   kink=(at_reduced_tie, "tied maxima share the gradient evenly (max() of everything); "
                         "max(x, dim) gives it to the first"),
   emit={"torch": emit_extreme("max"), "jax": emit_extreme("max")},
   example=("max(x)", _MATRIX))
op("min", "MinBackward1", amin, partial(extreme_vjp, argfn=np.argmin),
   jvp=partial(extreme_jvp, argfn=np.argmin), elementwise=False, call="reduction",
   variants={"dim": "MinBackward0"},
   kink=(at_reduced_tie, "tied minima share the gradient evenly (min() of everything); "
                         "min(x, dim) gives it to the first"),
   emit={"torch": emit_extreme("min"), "jax": emit_extreme("min")},
   example=("min(x)", _MATRIX))
op("amax", "AmaxBackward0", amax, ext_share_vjp, jvp=ext_share_jvp, elementwise=False,
   call="reduction", kink=(at_reduced_tie, "tied maxima share the gradient evenly"),
   emit={"torch": emit_reduction("torch.amax", "jnp.max"),
         "jax": emit_reduction("torch.amax", "jnp.max")},
   example=("amax(x, 1, keepdim=True)", _MATRIX))
op("amin", "AminBackward0", amin, ext_share_vjp, jvp=ext_share_jvp, elementwise=False,
   call="reduction", kink=(at_reduced_tie, "tied minima share the gradient evenly"),
   emit={"torch": emit_reduction("torch.amin", "jnp.min"),
         "jax": emit_reduction("torch.amin", "jnp.min")},
   example=("amin(x, 0)", _MATRIX))
op("var", "VarBackward0", variance, variance_vjp, jvp=variance_jvp, elementwise=False,
   call="reduction", hint="var needs more elements than its correction (N - correction > 0)",
   emit={"torch": emit_var("var"), "jax": emit_var("var")},
   example=("var(x, 1, correction=0)", _MATRIX))
op("std", "StdBackward0", deviation, deviation_vjp, jvp=deviation_jvp, elementwise=False,
   call="reduction", hint="std is not differentiable where it is 0 (PyTorch takes 0 there)",
   emit={"torch": emit_var("std"), "jax": emit_var("std")},
   example=("std(x, dim=1)", _MATRIX))
op("norm", "LinalgVectorNormBackward0", vector_norm, norm_vjp, jvp=norm_jvp,
   elementwise=False, call="reduction", hint="norm is not differentiable at the zero vector",
   spaces=("torch", "Tensor", "linalg"),
   emit={"torch": emit_norm, "jax": emit_norm},
   example=("norm(x, 3, dim=1)", _MATRIX))
op("logsumexp", "LogsumexpBackward0", logsumexp, logsumexp_vjp, jvp=logsumexp_jvp,
   elementwise=False, call="reduction", spaces=("torch", "Tensor", "special"),
   emit={"torch": emit_logsumexp, "jax": emit_logsumexp},
   example=("logsumexp(x, 1, keepdim=True)", _MATRIX))

# --- cumulative: the same shape, along one dim ---------------------------------------------
op("cumsum", "CumsumBackward0", cumsum, cumsum_vjp, jvp=reduce_linear(cumsum), saves=False,
   elementwise=False, reads="", call="cumulative",
   emit={"torch": emit_cumulative("cumsum"), "jax": emit_cumulative("cumsum")},
   example=("cumsum(x, 1)", _MATRIX))
op("cumprod", "CumprodBackward0", cumprod, cumprod_vjp, jvp=cumprod_jvp, elementwise=False,
   call="cumulative", emit={"torch": emit_cumulative("cumprod"), "jax": emit_cumulative("cumprod")},
   example=("cumprod(x, dim=1)", _MATRIX))

# --- no gradient: integer and bool results --------------------------------------------------
op("argmax", "", argmax, no_gradient, jvp=no_tangent, saves=False, elementwise=False, reads="", call="index",
   dtype="int64", differentiable=False,
   emit={"torch": emit_index("argmax"), "jax": emit_index("argmax")},
   example=("argmax(x, 1)", _MATRIX))
op("argmin", "", argmin, no_gradient, jvp=no_tangent, saves=False, elementwise=False, reads="", call="index",
   dtype="int64", differentiable=False,
   emit={"torch": emit_index("argmin"), "jax": emit_index("argmin")},
   example=("argmin(x, dim=0, keepdim=True)", _MATRIX))
op("all", "", every, no_gradient, jvp=no_tangent, saves=False, elementwise=False, reads="", call="truth",
   dtype="bool", differentiable=False,
   emit={"torch": emit_reduction("torch.all", "jnp.all"),
         "jax": emit_reduction("torch.all", "jnp.all")},
   example=("all(x > 0, 1)", _MATRIX))
op("any", "", some, no_gradient, jvp=no_tangent, saves=False, elementwise=False, reads="", call="truth",
   dtype="bool", differentiable=False,
   emit={"torch": emit_reduction("torch.any", "jnp.any"),
         "jax": emit_reduction("torch.any", "jnp.any")},
   example=("any(x > 0.5, dim=0, keepdim=True)", _MATRIX))
