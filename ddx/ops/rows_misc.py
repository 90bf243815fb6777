"""The op table's rows for nansum, logaddexp, deg2rad, rad2deg, rot90, take, cross, scatter,
dist and floor_divide (one op(...) call per op; see ddx/ops/table.py for a row's fields).
Their callers, and the functions made of other rows (nanmean, diff, hstack, vstack, tile,
unflatten, repeat_interleave, meshgrid, kron, positive), are in ddx/graph/calls_misc.py."""

from __future__ import annotations

import math

import numpy as np

from .emit_reduce import emit_reduction
from .kernels_misc import (
    baddbmm_jvp,
    baddbmm_vjp_b1,
    baddbmm_vjp_b2,
    baddbmm_vjp_input,
    batched_add,
    cross_jvp,
    cross_vjp_a,
    cross_vjp_b,
    crossed,
    dist_jvp,
    dist_vjp_a,
    dist_vjp_b,
    distance,
    nansum,
    nansum_jvp,
    nansum_vjp,
    pairwise,
    pairwise_jvp,
    pairwise_vjp_a,
    pairwise_vjp_b,
    rotated,
    rotated_back,
    rotated_jvp,
    scaled_vjp,
    scatter_back_self,
    scatter_back_src,
    scatter_jvp,
    scattered,
    scattered_value,
    taken,
    taken_back,
    taken_jvp,
    times,
)
from .kernels_more import no_gradient_of, no_tangent
from .kernels_special import digamma, digamma_jvp, digamma_vjp, erfinv, lgamma, lgamma_jvp, lgamma_vjp
from .table import op

_MATRIX = {"x": (2, 3)}

op("nansum", "NansumBackward0", nansum, nansum_vjp, jvp=nansum_jvp, elementwise=False,
   reads="i", emit={"torch": emit_reduction("torch.nansum", "jnp.nansum"),
                    "jax": emit_reduction("torch.nansum", "jnp.nansum")},
   example=("nansum(x, 1, keepdim=True)", _MATRIX))
op("logaddexp", "LogaddexpBackward0", np.logaddexp,
   lambda g, o, a, b: g / (1 + np.exp(b - a)), lambda g, o, a, b: g / (1 + np.exp(a - b)),
   call="binary", emit={"torch": "torch.logaddexp({0}, {1})", "jax": "jnp.logaddexp({0}, {1})"},
   example=("logaddexp(x, y)", {}))
for _name, _c in (("deg2rad", math.pi / 180), ("rad2deg", 180 / math.pi)):
    op(_name, f"{_name.capitalize().replace('2r', '2R').replace('2d', '2D')}Backward0",
       times(_c), scaled_vjp(_c), saves=False, reads="", call="unary",
       emit={"torch": f"torch.{_name}({{0}})", "jax": f"jnp.{_name}({{0}})"},
       example=(f"{_name}(x)", {}))
op("rot90", "Rot90Backward0", rotated, rotated_back, jvp=rotated_jvp, saves=False,
   elementwise=False, reads="",
   emit={"torch": "torch.rot90({0}, {k}, {dims!r})", "jax": "jnp.rot90({0}, {k}, {dims!r})"},
   example=("rot90(x, 3, [1, 0])", _MATRIX))
op("take", "TakeBackward0", taken, taken_back, jvp=taken_jvp, saves=False, elementwise=False,
   reads="", emit={"torch": "torch.take({0}, torch.tensor({index!r}))",
                   "jax": "jnp.take(jnp.ravel({0}), jnp.array({index!r}))"},
   example=("take(x, [[0, 5], [5, 2]])", _MATRIX))
op("cross", "LinalgCrossBackward0", crossed, cross_vjp_a, cross_vjp_b, jvp=cross_jvp,
   elementwise=False,
   emit={"torch": "torch.linalg.cross({0}, {1}, dim={dim})",
         "jax": "jnp.cross({0}, {1}, axis={dim})"},
   example=("cross(x, y, dim=1)", {"x": (2, 3), "y": (2, 3)}))
op("scatter", "ScatterBackward0", scattered, scatter_back_self, scatter_back_src,
   jvp=scatter_jvp, saves=False, elementwise=False, reads="",
   emit={"torch": "torch.scatter({0}, {dim}, torch.tensor({index!r}), {1})",
         "jax": lambda args, t, lib: _jax_scatter(args[0], t, args[1])},
   example=("scatter(x, 1, [[2, 0], [1, 2]], y)", {"x": (2, 3), "y": (2, 2)}))
op("scatter_value", "ScatterBackward1", scattered_value, scatter_back_self, jvp=scatter_jvp,
   saves=False, elementwise=False, reads="", shown="scatter",
   emit={"torch": "torch.scatter({0}, {dim}, torch.tensor({index!r}), {value!r})",
         "jax": lambda args, t, lib: _jax_scatter(args[0], t, repr(t.kw["value"]))},
   example=("scatter(x, 0, [[1, 0, 1]], 0.5)", _MATRIX))
op("dist", "DistBackward0", distance, dist_vjp_a, dist_vjp_b, jvp=dist_jvp,
   elementwise=False, hint="dist is not differentiable where the two are equal",
   emit={"torch": "torch.dist({0}, {1}, {p!r})",
         "jax": lambda args, t, lib: _jax_dist(args, t.kw.get("p", 2.0))},
   example=("dist(x, y, 3)", {"x": (2, 3), "y": (3,)}))
# a // b: PyTorch's floor_divide has no derivative (its grad_fn is NotImplemented); ddx gives
# the values, and a result that does not require grad
op("floor_divide", "", np.floor_divide, no_gradient_of(0), no_gradient_of(1), jvp=no_tangent,
   saves=False, elementwise=False, reads="", differentiable=False, text="{0} // {1}", prec=2,
   symbol="//",
   emit={"torch": "torch.floor_divide({0}, {1})", "jax": "jnp.floor_divide({0}, {1})"},
   example=("x // y", {}))


def _jax_scatter(a: str, t, values: str) -> str:
    index = np.asarray(t.kw["index"])
    grid = [f"jnp.arange({n}).reshape({tuple(-1 if i == d else 1 for i in range(index.ndim))})"
            for d, n in enumerate(index.shape)]
    grid[t.kw["dim"]] = f"jnp.array({t.kw['index']!r})"
    if values[:1].isalpha() or values.startswith("("):  # (src: its leading part)
        values = f"{values}[{', '.join(f':{n}' for n in index.shape)}]"
    return f"{a}.at[{', '.join(grid)}].set({values})"


def _jax_dist(args, p: float) -> str:
    d = f"jnp.ravel({args[0]} - {args[1]})"
    if p == 2:
        return f"jnp.sqrt(jnp.sum({d} * {d}))"
    return f"(jnp.sum(jnp.abs({d}) ** {p!r}) ** {1 / p!r})"


# --- special functions: element by element as ATen (kernels_special.py); their rules call
# digamma/trigamma, which no formula writes, so they are not elementwise rows for formulas --
_SQRT_PI_HALF = 0.5 * math.sqrt(math.pi)


def _jax_digamma(args, t, lib) -> str:
    """jax's digamma, with ATen's trigamma as its derivative (ATen's series, six steps up from
    x, is ~1e-10 from the exact value that jax's polygamma(1, x) gives; past 1/2)."""
    x = args[0]
    f = f"jax.lax.stop_gradient({x})"
    up = f"({f} + 6.0)"
    ixx = f"(1 / {up} ** 2)"
    steps = " + ".join(f"1 / ({f} + {i}.0) ** 2" for i in range(6))
    trigamma = (f"({steps} + (1 + 1 / (2 * {up}) + {ixx} * (1 / 6 - {ixx} * (1 / 30 - {ixx} / "
                f"42))) / {up})")
    slope = f"jnp.where({f} < 0.5, jax.scipy.special.polygamma(1, {f}), {trigamma})"
    return (f"(jax.scipy.special.digamma({x}) + ({x} - {f}) * "
            f"({slope} - jax.scipy.special.polygamma(1, {f})))")


op("lgamma", "LgammaBackward0", lgamma, lgamma_vjp, jvp=lgamma_jvp, elementwise=False,
   reads="i", call="unary", domain=(0.5, 3.0),
   hint="lgamma has poles at 0 and the negative integers",
   emit={"torch": "torch.lgamma({0})", "jax": "jax.scipy.special.gammaln({0})"},
   example=("lgamma(x)", {}))
op("digamma", "DigammaBackward0", digamma, digamma_vjp, jvp=digamma_jvp, elementwise=False,
   reads="i", call="unary", domain=(0.5, 3.0), spaces=("torch", "Tensor", "special"),
   hint="digamma has poles at 0 and the negative integers",
   emit={"torch": "torch.digamma({0})", "jax": _jax_digamma},
   example=("digamma(x)", {}))
op("erfinv", "ErfinvBackward0", erfinv, lambda g, o, a: _SQRT_PI_HALF * np.exp(o * o) * g,
   reads="o", call="unary", domain=(-0.9, 0.9), spaces=("torch", "Tensor", "special"),
   hint="erfinv is infinite at -1 and 1 and nan outside them",
   emit={"torch": "torch.erfinv({0})", "jax": "jax.scipy.special.erfinv({0})"},
   example=("erfinv(x)", {}))


def _jax_cdist(args, t, lib) -> str:
    p = t.kw.get("p", 2.0)
    d = f"(jnp.expand_dims({args[0]}, -2) - jnp.expand_dims({args[1]}, -3))"
    if p == 2:
        return f"jnp.sqrt(jnp.sum({d} * {d}, axis=-1))"
    if p == 1:
        return f"jnp.sum(jnp.abs({d}), axis=-1)"
    return f"(jnp.sum(jnp.abs({d}) ** {p!r}, axis=-1) ** {1 / p!r})"


op("cdist", "CdistBackward0", pairwise, pairwise_vjp_a, pairwise_vjp_b, jvp=pairwise_jvp,
   elementwise=False, hint="cdist is not differentiable where two rows are equal",
   emit={"torch": "torch.cdist({0}, {1}, {p!r})", "jax": _jax_cdist},
   example=("cdist(x, y, 3)", {"x": (2, 3), "y": (4, 3)}))
op("baddbmm", "BaddbmmBackward0", batched_add, baddbmm_vjp_input, baddbmm_vjp_b1,
   baddbmm_vjp_b2, jvp=baddbmm_jvp, elementwise=False,
   emit={"torch": "torch.baddbmm({0}, {1}, {2}, beta={beta!r}, alpha={alpha!r})",
         "jax": "({beta!r} * {0} + {alpha!r} * jnp.matmul({1}, {2}))"},
   example=("baddbmm(x, y, transpose(y, 1, 2), beta=0.5, alpha=2)",
            {"x": (2, 2, 2), "y": (2, 2, 4)}))
