"""The op table's rows for convolution (conv1d/2d/3d: ConvolutionBackward0) and max and
average pooling in 2 and 3 dimensions (1-d pooling is the 2-d row on an unsqueezed input, as
ATen does it). Their callers, which check the arguments and normalise them to tuples, are in
ddx/graph/calls_conv.py; the kernels in ddx/ops/kernels_conv.py."""

from __future__ import annotations

from .kernels_adaptive import adaptive_avg_pool, adaptive_avg_pool_jvp, adaptive_avg_pool_vjp
from .kernels_adaptive import windows as adaptive_windows
from .kernels_conv import (
    avg_pool,
    avg_pool_jvp,
    avg_pool_vjp,
    conv_jvp,
    conv_vjp_bias,
    conv_vjp_input,
    conv_vjp_weight,
    convolve,
    convolve_transposed,
    divisors,
    max_pool,
    max_pool_jvp,
    max_pool_vjp,
    pool_geometry,
    pool_pads,
    transposed_jvp,
    transposed_vjp_input,
    transposed_vjp_weight,
)
from .table import op


def _jax_pads(pad) -> str:
    return "[" + ", ".join(f"({p}, {p})" for p in pad) + "]"


def _torch_conv(args, t, lib) -> str:
    n = len(t.kw["stride"])
    kw = t.kw
    return (f"torch.nn.functional.conv{n}d({args[0]}, {args[1]}, {args[2]}, "
            f"{tuple(kw['stride'])}, {tuple(kw['padding'])}, {tuple(kw['dilation'])}, "
            f"{kw['groups']})")


def _jax_conv(args, t, lib) -> str:
    kw = t.kw
    n = len(kw["stride"])
    return (f"(jax.lax.conv_general_dilated({args[0]}, {args[1]}, {tuple(kw['stride'])}, "
            f"{_jax_pads(kw['padding'])}, rhs_dilation={tuple(kw['dilation'])}, "
            f"feature_group_count={kw['groups']}) + "
            f"jnp.reshape({args[2]}, (-1,{' 1,' * n})))")


op("convolution", "ConvolutionBackward0", convolve, conv_vjp_input, conv_vjp_weight,
   conv_vjp_bias, jvp=conv_jvp, elementwise=False, reads="i", shown="conv", symbol="conv",
   emit={"torch": _torch_conv, "jax": _jax_conv},
   example=("conv2d(x, y, y[:, 0, 0, 0], 2, 1)", {"x": (1, 2, 5, 4), "y": (3, 2, 2, 2)}))


def _torch_transposed(args, t, lib) -> str:
    kw = t.kw
    return (f"torch.nn.functional.conv_transpose{len(kw['stride'])}d({args[0]}, {args[1]}, "
            f"{args[2]}, {tuple(kw['stride'])}, {tuple(kw['padding'])}, "
            f"{tuple(kw['output_padding'])}, {kw['groups']}, {tuple(kw['dilation'])})")


def _jax_transposed(args, t, lib) -> str:
    """The gradient of a convolution as JAX writes it: conv_general_dilated with the input
    dilated by the stride, the kernel flipped and its in/out channels swapped per group."""
    kw = t.kw
    w = t.inputs[1].value
    n, g = w.ndim - 2, kw["groups"]
    pads = [(kw["dilation"][i] * (w.shape[2 + i] - 1) - kw["padding"][i],
             kw["dilation"][i] * (w.shape[2 + i] - 1) - kw["padding"][i] +
             kw["output_padding"][i]) for i in range(n)]
    c_in, c_out = w.shape[0], w.shape[1]
    flip = f"jnp.flip({args[1]}, axis={tuple(range(2, 2 + n))})"
    # (C_in, C_out/g, k) -> (g, C_in/g, C_out/g, k) -> (g, C_out/g, C_in/g, k) -> (C_out, C_in/g, k)
    rhs = (f"jnp.reshape(jnp.swapaxes(jnp.reshape({flip}, ({g}, {c_in // g}, {c_out}) + "
           f"{tuple(w.shape[2:])}), 1, 2), ({g * c_out}, {c_in // g}) + {tuple(w.shape[2:])})")
    return (f"(jax.lax.conv_general_dilated({args[0]}, {rhs}, {(1,) * n}, {pads}, "
            f"lhs_dilation={tuple(kw['stride'])}, rhs_dilation={tuple(kw['dilation'])}, "
            f"feature_group_count={g}) + jnp.reshape({args[2]}, (-1,{' 1,' * n})))")


op("conv_transpose", "ConvolutionBackward0", convolve_transposed, transposed_vjp_input,
   transposed_vjp_weight, conv_vjp_bias, jvp=transposed_jvp, elementwise=False, reads="i",
   shown="conv_transpose", symbol="conv_transpose",
   emit={"torch": _torch_transposed, "jax": _jax_transposed},
   example=("conv_transpose2d(x, y, y[0, :, 0, 0], 2, 1, 1)",
            {"x": (1, 2, 3, 3), "y": (2, 3, 2, 2)}))


def _pool_tail(args, t) -> str:
    kw = t.kw
    return (f"{args[0]}, {tuple(kw['kernel_size'])}, {tuple(kw['stride'] or ())}, "
            f"{tuple(kw['padding'])}")


def _torch_max(args, t, lib) -> str:
    kw = t.kw
    return (f"torch.nn.functional.max_pool{len(kw['kernel_size'])}d({_pool_tail(args, t)}, "
            f"{tuple(kw['dilation'])}, {bool(kw['ceil_mode'])})")


def _torch_avg(args, t, lib) -> str:
    kw = t.kw
    return (f"torch.nn.functional.avg_pool{len(kw['kernel_size'])}d({_pool_tail(args, t)}, "
            f"{bool(kw['ceil_mode'])}, {bool(kw['count_include_pad'])}, "
            f"{kw.get('divisor_override')})")


def _jax_window(args, t, init: str, fn: str) -> str:
    kw = t.kw
    lead = t.inputs[0].value.ndim - len(kw["kernel_size"])
    one = (1,) * lead
    shape = t.inputs[0].value.shape
    k, stride, _, dilation, _ = pool_geometry(shape, kw, len(kw["kernel_size"]))
    pads = [(0, 0)] * lead + pool_pads(shape, len(kw["kernel_size"]), kw)
    return (f"jax.lax.reduce_window({args[0]}, {init}, {fn}, {one + k}, {one + stride}, "
            f"{pads}, window_dilation={one + dilation})")


def _jax_max(args, t, lib) -> str:
    return _jax_window(args, t, "-jnp.inf", "jax.lax.max")


def _jax_avg(args, t, lib) -> str:
    kw = t.kw
    shape = t.inputs[0].value.shape
    n = len(kw["kernel_size"])
    div = divisors(shape, n, kw, pool_geometry(shape, kw, n))
    return f"({_jax_window(args, t, '0.0', 'jax.lax.add')} / jnp.array({div.tolist()!r}))"


for _n, _name in ((2, "2D"), (3, "3D")):
    op(f"max_pool{_n}d", f"MaxPool{_name}WithIndicesBackward0", max_pool, max_pool_vjp,
       jvp=max_pool_jvp, elementwise=False, reads="i", shown=f"max_pool{_n}d",
       emit={"torch": _torch_max, "jax": _jax_max},
       hint=f"max_pool{_n}d sends each window's gradient to its first maximum",
       example=(f"max_pool{_n}d(x, 2, 1)", {"x": (1, 2) + (3,) * _n}))
    op(f"avg_pool{_n}d", f"AvgPool{_name}Backward0", avg_pool, avg_pool_vjp,
       jvp=avg_pool_jvp, elementwise=False, reads="i", shown=f"avg_pool{_n}d",
       emit={"torch": _torch_avg, "jax": _jax_avg},
       example=(f"avg_pool{_n}d(x, 2, 1, 1)", {"x": (1, 2) + (3,) * _n}))


def _torch_adaptive(args, t, lib) -> str:
    return f"torch.nn.functional.adaptive_avg_pool2d({args[0]}, {tuple(t.kw['output_size'])})"


def _jax_adaptive(args, t, lib) -> str:
    rows = adaptive_windows(t.inputs[0].value.shape, t.kw["output_size"])
    cells = ["jnp.stack([" + ", ".join(
        f"jnp.mean({args[0]}[..., {h0}:{h1}, {w0}:{w1}], axis=(-2, -1))"
        for h0, h1, w0, w1 in row) + "], axis=-1)" for row in rows]
    return "jnp.stack([" + ", ".join(cells) + "], axis=-2)"


op("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", adaptive_avg_pool,
   adaptive_avg_pool_vjp, jvp=adaptive_avg_pool_jvp, elementwise=False, reads="i",
   shown="adaptive_avg_pool2d", emit={"torch": _torch_adaptive, "jax": _jax_adaptive},
   spaces=("F",), example=("adaptive_avg_pool2d(x, [2, 3])", {"x": (1, 2, 3, 5)}))
