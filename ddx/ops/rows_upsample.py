"""The op table's rows for nearest-neighbour upsampling in 1, 2 and 3 dims
(UpsampleNearest1D/2D/3DBackward0), linear (UpsampleLinear1DBackward0) and bilinear upsampling
(UpsampleBilinear2DBackward0); the
kernels are in ddx/ops/kernels_upsample.py, the
caller (F.interpolate, nn.Upsample) in ddx/graph/calls_interp.py."""

from __future__ import annotations

from .kernels_upsample import (
    bilinear_terms,
    linear_terms,
    sources,
    upsample_bilinear,
    upsample_bilinear_jvp,
    upsample_bilinear_vjp,
    upsample_linear,
    upsample_linear_jvp,
    upsample_linear_vjp,
    upsample_nearest,
    upsample_nearest_jvp,
    upsample_nearest_vjp,
)
from .table import op


def _torch(args, t, lib) -> str:
    kw = t.kw
    if all(s is not None for s in kw["scales"]):
        return (f"torch.nn.functional.interpolate({args[0]}, scale_factor="
                f"{tuple(kw['scales'])}, mode='nearest')")
    return f"torch.nn.functional.interpolate({args[0]}, size={tuple(kw['output_size'])})"


def _jax(args, t, lib) -> str:
    kw = t.kw
    x = t.inputs[0].value
    n = len(kw["output_size"])
    out = args[0]
    for k, idx in enumerate(sources(x.shape, kw["output_size"], kw["scales"])):
        out = f"jnp.take({out}, jnp.array({idx}), axis={x.ndim - n + k})"
    return out


for _n in (1, 2, 3):
    op(f"upsample_nearest{_n}d", f"UpsampleNearest{_n}DBackward0", upsample_nearest,
       upsample_nearest_vjp, jvp=upsample_nearest_jvp, elementwise=False, reads="i",
       shown="interpolate", spaces=("F",), emit={"torch": _torch, "jax": _jax},
       example=("interpolate(x, scale_factor=2)" if _n == 2 else
                f"interpolate(x, size={[5] * _n})", {"x": (1, 2) + (3,) * _n}))


def _torch_interpolating(mode: str):
    """The emitted torch call of an interpolating mode (linear, bilinear)."""
    def emit(args, t, lib) -> str:
        kw = t.kw
        return (f"torch.nn.functional.interpolate({args[0]}, size={tuple(kw['output_size'])}, "
                f"mode={mode!r}, align_corners={bool(kw['align_corners'])})")
    return emit


def _jax_bilinear(args, t, lib) -> str:
    kw = t.kw
    terms = bilinear_terms(t.inputs[0].value.shape, kw["output_size"], kw["align_corners"],
                           kw["scales"], t.inputs[0].value.dtype)
    return "(" + " + ".join(
        f"jnp.take(jnp.take({args[0]}, jnp.array({rows}), axis=-2), jnp.array({cols}), "
        f"axis=-1) * jnp.array({weights})" for rows, cols, weights in terms) + ")"


op("upsample_bilinear2d", "UpsampleBilinear2DBackward0", upsample_bilinear,
   upsample_bilinear_vjp, jvp=upsample_bilinear_jvp, elementwise=False, reads="i",
   shown="interpolate", spaces=("F",), emit={"torch": _torch_interpolating("bilinear"), "jax": _jax_bilinear},
   example=("interpolate(x, size=[4, 5], mode='bilinear')", {"x": (1, 2, 3, 3)}))


def _jax_linear(args, t, lib) -> str:
    kw = t.kw
    terms = linear_terms(t.inputs[0].value.shape, kw["output_size"], kw["align_corners"],
                         kw["scales"], t.inputs[0].value.dtype)
    return "(" + " + ".join(f"jnp.take({args[0]}, jnp.array({idx}), axis=-1) * "
                            f"jnp.array({w})" for idx, w in terms) + ")"


op("upsample_linear1d", "UpsampleLinear1DBackward0", upsample_linear, upsample_linear_vjp,
   jvp=upsample_linear_jvp, elementwise=False, reads="i", shown="interpolate", spaces=("F",),
   emit={"torch": _torch_interpolating("linear"), "jax": _jax_linear},
   example=("interpolate(x, size=[5], mode='linear', align_corners=True)", {"x": (1, 2, 3)}))
