"""torch.nn.functional's layer_norm, group_norm, rms_norm and local_response_norm, and the
modules nn.LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (weight ones, bias zeros),
printed as PyTorch prints them. rms_norm and local_response_norm are the compositions ATen
and functional.py write (``x * rsqrt(mean(x ** 2) + eps)``; the average over a window of
channels added in the window's order, as avg_pool's CPU loop); layer_norm and group_norm are
their CPU kernels' values (RowwiseMoments' mean and variance, pymoments.py; layer_norm's
``(x - mean) * rstd`` then fmadd(y, gamma, beta), group_norm's fmadd(scale, x, bias)), named
NativeLayerNormBackward0/NativeGroupNormBackward0, with the composition's gradients."""

from __future__ import annotations

import numpy as np

from ..graph.tensor import Tensor
from ..graph.values import weak
from ..ops.rng_math import fma32, fma64
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, error, ints, num, renamed, tensor
from .pymodules import EXTRA, Native
from .pymoments import rowwise_moments
from .pynn import new_parameter
from .pynn6 import Module6


def _shape(v) -> tuple:
    if isinstance(v, (list, tuple)) or isinstance(v, Tensor) and not v.weak:
        return tuple(ints(v))
    return (int(num(v)),)


def _normalized(ev, node, x: Tensor, k: int, eps: float, exact: bool = False,
                wide: bool = False) -> Tensor:
    """(x - mean) * rsqrt(var + eps) over the last k dims; ``exact``: the mean and rstd
    replaced by ATen's (layer_norm's RowwiseMoments, 1 / sqrt(var + eps)) in place, so the
    values are its kernel's and the gradients those of the composition."""
    dims = tuple(weak(d) for d in range(x.value.ndim - k, x.value.ndim))
    mean = call(ev, node, "mean", x, dims, keepdim=True)
    exact = exact and x.value.dtype in (np.float32, np.float64) and x.value.size > 0
    if exact:
        rows = x.value.reshape(-1, int(np.prod(x.shape[x.value.ndim - k:])))
        m, var = rowwise_moments(np.ascontiguousarray(rows))
        d = x.value.dtype.type
        if wide:  # (group_norm: 1 / std::sqrt(std::max(var, 0) + eps) in double)
            rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(
                x.value.dtype)
        else:
            rstd = (d(1) / np.sqrt((var + d(eps)).astype(x.value.dtype))).astype(
                x.value.dtype)
        mean.value[...] = m.reshape(mean.shape)
    xc = call(ev, node, "sub", x, mean)
    var_t = call(ev, node, "mean", call(ev, node, "mul", xc, xc), dims, keepdim=True)
    r = call(ev, node, "rsqrt", call(ev, node, "add", var_t, weak(eps)))
    if exact:
        r.value[...] = rstd.reshape(r.shape)
    return call(ev, node, "mul", xc, r)


def _fma(a, b, c) -> np.ndarray:
    dt = np.result_type(a, b, c)
    return (fma32 if dt == np.float32 else fma64)(a, b, c).astype(dt)


def _check_shape(node, x: Tensor, shape: tuple) -> None:
    if tuple(x.shape[x.value.ndim - len(shape):]) != shape or len(shape) > x.value.ndim:
        raise error(f"Given normalized_shape={list(shape)}, expected input with shape "
                    f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                    f"{list(x.shape)}", node)


def layer_norm(ev, node, args, kw):
    g = bind("layer_norm", (("input", REQUIRED), ("normalized_shape", REQUIRED),
                            ("weight", None), ("bias", None), ("eps", 1e-5)), args, kw)
    x = tensor(node, g["input"], "input", "layer_norm")
    shape = _shape(g["normalized_shape"])
    _check_shape(node, x, shape)
    y = _normalized(ev, node, x, len(shape), float(num(g["eps"])), exact=True)
    w, b = g["weight"], g["bias"]
    if w is not None:
        scaled = call(ev, node, "mul", y, w)
        if b is not None:  # (the kernel's fmadd(y, gamma, beta))
            out = call(ev, node, "add", scaled, b)
            out.value[...] = np.broadcast_to(_fma(y.value, w.value, b.value), out.shape)
            return renamed(out, "NativeLayerNormBackward0")
        y = scaled
    elif b is not None:
        y = call(ev, node, "add", y, b)
    return renamed(y, "NativeLayerNormBackward0")


def group_norm(ev, node, args, kw):
    g = bind("group_norm", (("input", REQUIRED), ("num_groups", REQUIRED), ("weight", None),
                            ("bias", None), ("eps", 1e-5)), args, kw)
    x = tensor(node, g["input"], "input", "group_norm")
    groups = int(num(g["num_groups"]))
    if x.value.ndim < 2:
        raise error(f"Expected at least 2 dimensions for input tensor but received "
                    f"{x.value.ndim}", node)
    n, c = x.shape[0], x.shape[1]
    if c % groups:
        raise error(f"Expected number of channels in input to be divisible by num_groups, but "
                    f"got input of shape {list(x.shape)} and num_groups={groups}", node)
    grouped = call(ev, node, "reshape", x, (n, groups, -1))
    y = _normalized(ev, node, grouped, 1, float(num(g["eps"])), exact=True, wide=True)
    y = call(ev, node, "reshape", y, tuple(x.shape))
    shape = (1, c) + (1,) * (x.value.ndim - 2)
    w, b = g["weight"], g["bias"]
    if w is None and b is None or x.value.dtype not in (np.float32, np.float64):
        return renamed(y, "NativeGroupNormBackward0")
    if w is not None:
        y = call(ev, node, "mul", y, call(ev, node, "reshape", w, shape))
    if b is not None:
        y = call(ev, node, "add", y, call(ev, node, "reshape", b, shape))
    # (the kernel's affine form: scale = rstd * gamma, bias = fmadd(-scale, mean, beta),
    # y = fmadd(scale, x, bias), with the mean and rstd the normalisation used)
    dt = x.value.dtype
    rows = grouped.value.reshape(n * groups, -1)
    mean, var = rowwise_moments(np.ascontiguousarray(rows))
    rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + float(num(g["eps"])))).astype(dt)
    per = c // groups
    gamma = np.ones(c, dt) if w is None else w.value.reshape(c).astype(dt)
    beta = np.zeros(c, dt) if b is None else b.value.reshape(c).astype(dt)
    scale = (np.repeat(rstd.reshape(n, groups), per, axis=1) * gamma).astype(dt)  # (n, c)
    shift = _fma(-scale, np.repeat(mean.reshape(n, groups), per, axis=1), beta)
    flat = x.value.reshape(n, c, -1)
    y.value[...] = _fma(scale[:, :, None], flat, shift[:, :, None]).reshape(x.shape)
    return renamed(y, "NativeGroupNormBackward0")


def rms_norm(ev, node, args, kw):
    g = bind("rms_norm", (("input", REQUIRED), ("normalized_shape", REQUIRED),
                          ("weight", None), ("eps", None)), args, kw)
    x = tensor(node, g["input"], "input", "rms_norm")
    shape = _shape(g["normalized_shape"])
    _check_shape(node, x, shape)
    eps = float(np.finfo(x.value.dtype).eps) if g["eps"] is None else float(num(g["eps"]))
    dims = tuple(weak(d) for d in range(x.value.ndim - len(shape), x.value.ndim))
    ms = call(ev, node, "mean", call(ev, node, "pow", x, weak(2)), dims, keepdim=True)
    y = call(ev, node, "mul", x, call(ev, node, "rsqrt", call(ev, node, "add", ms, weak(eps))))
    if g["weight"] is not None:
        y = call(ev, node, "mul", y, g["weight"])
    return y


def normalize(ev, node, args, kw):
    """F.normalize: input / norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input),
    as functional.py writes it (DivBackward0)."""
    g = bind("normalize", (("input", REQUIRED), ("p", 2.0), ("dim", 1), ("eps", 1e-12),
                           ("out", None)), args, kw)
    x = tensor(node, g["input"], "input", "normalize")
    if g["out"] is not None:
        raise error("normalize(out=...) is not supported by ddx", node)
    p, dim = num(g["p"]), g["dim"]
    dims = dim if isinstance(dim, (list, tuple)) else int(num(dim))
    denom = call(ev, node, "norm", x, weak(p), dims, keepdim=True)
    denom = call(ev, node, "clamp_min", denom, weak(float(num(g["eps"]))))
    denom = call(ev, node, "expand_as", denom, x)
    return call(ev, node, "div", x, denom)


def local_response_norm(ev, node, args, kw):
    g = bind("local_response_norm", (("input", REQUIRED), ("size", REQUIRED),
                                     ("alpha", 1e-4), ("beta", 0.75), ("k", 1.0)), args, kw)
    x = tensor(node, g["input"], "input", "local_response_norm")
    if x.value.ndim < 3:
        raise PyException.error("ValueError", f"Expected 3D or higher dimensionality          "
                                f"                input (got {x.value.ndim} dimensions)")
    if x.value.size == 0:
        return x
    size = int(num(g["size"]))
    sq = call(ev, node, "mul", x, x)
    c = x.shape[1]
    padded = call(ev, node, "cat", [Tensor(np.zeros((x.shape[0], size // 2) + x.shape[2:],
                                                     dtype=x.value.dtype)), sq,
                                    Tensor(np.zeros((x.shape[0], (size - 1) // 2) + x.shape[2:],
                                                    dtype=x.value.dtype))], weak(1))
    total = None
    for j in range(size):  # (avg_pool's window, in order)
        piece = call(ev, node, "narrow", padded, weak(1), weak(j), weak(c))
        total = piece if total is None else call(ev, node, "add", total, piece)
    div = call(ev, node, "div", total, weak(size))
    div = call(ev, node, "pow", call(ev, node, "add", call(ev, node, "mul", div,
                                                           weak(float(num(g["alpha"])))),
                                     weak(float(num(g["k"])))), weak(float(num(g["beta"]))))
    return call(ev, node, "div", x, div)



def _affine(ev, m: Module6, shape: tuple, weight: bool, bias: bool) -> None:
    m.state["weight"] = new_parameter(np.ones(shape, dtype=ev.dtype)) if weight else None
    m.state["bias"] = new_parameter(np.zeros(shape, dtype=ev.dtype)) if bias else None


class Norm(Module6):
    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", f"{self.kind}.forward() takes 2 positional "
                                    f"arguments but {len(args) + 1} were given")
        s = self.state
        if self.kind == "LayerNorm":
            return layer_norm(ev, node, [args[0], s["shape"], s["weight"], s["bias"],
                                         weak(s["eps"])], {})
        if self.kind == "GroupNorm":
            return group_norm(ev, node, [args[0], weak(s["groups"]), s["weight"], s["bias"],
                                         weak(s["eps"])], {})
        eps = None if s["eps"] is None else weak(s["eps"])
        return rms_norm(ev, node, [args[0], s["shape"], s["weight"], eps], {})


def _layer(ev, g):
    shape = _shape(g["normalized_shape"])
    affine, bias = bool(num(g["elementwise_affine"])), bool(num(g["bias"]))
    eps = num(g["eps"])
    m = Norm("LayerNorm", None, {}, f"{shape}, eps={eps!r}, elementwise_affine={affine}, "
                                    f"bias={affine and bias}")
    m.state.update(shape=shape, eps=eps)
    _affine(ev, m, shape, affine, affine and bias)
    return m


def _group(ev, g):
    groups, channels = int(num(g["num_groups"])), int(num(g["num_channels"]))
    if channels % groups:
        raise PyException.error("ValueError", "num_channels must be divisible by num_groups")
    affine, eps = bool(num(g["affine"])), num(g["eps"])
    bias = affine and bool(num(g["bias"]))
    m = Norm("GroupNorm", None, {}, f"{groups}, {channels}, eps={eps!r}, affine={affine}, "
                                    f"bias={bias}")
    m.state.update(groups=groups, eps=eps)
    _affine(ev, m, (channels,), affine, bias)
    return m


def _rms(ev, g):
    shape = _shape(g["normalized_shape"])
    affine = bool(num(g["elementwise_affine"]))
    eps = None if g["eps"] is None else num(g["eps"])
    m = Norm("RMSNorm", None, {}, f"{shape}, eps={eps!r}, elementwise_affine={affine}")
    m.state.update(shape=shape, eps=eps)
    m.state["weight"] = new_parameter(np.ones(shape, dtype=ev.dtype)) if affine else None
    return m


def _lrn(ev, g):
    size, alpha, beta, k = (num(g[key]) for key in ("size", "alpha", "beta", "k"))
    return Module6("LocalResponseNorm", local_response_norm,
                   {"size": weak(size), "alpha": weak(alpha), "beta": weak(beta),
                    "k": weak(k)}, f"{size}, alpha={alpha!r}, beta={beta!r}, k={k!r}")


_DEV = (("device", None), ("dtype", None))
CLASSES = {
    "LayerNorm": ((("normalized_shape", REQUIRED), ("eps", 1e-5), ("elementwise_affine", True),
                   ("bias", True), *_DEV), _layer),
    "GroupNorm": ((("num_groups", REQUIRED), ("num_channels", REQUIRED), ("eps", 1e-5),
                   ("affine", True), ("bias", True), *_DEV), _group),
    "RMSNorm": ((("normalized_shape", REQUIRED), ("eps", None), ("elementwise_affine", True),
                 *_DEV), _rms),
    "LocalResponseNorm": ((("size", REQUIRED), ("alpha", 1e-4), ("beta", 0.75), ("k", 1.0)),
                          _lrn),
}
FUNCTIONS = {"layer_norm": layer_norm, "group_norm": group_norm, "rms_norm": rms_norm,
             "local_response_norm": local_response_norm, "normalize": normalize}


def register() -> None:
    nn, space = EXTRA["torch.nn"], EXTRA["torch.nn.functional"]
    for name, fn in FUNCTIONS.items():
        space[name] = Native(name, fn)
        if name not in ("local_response_norm", "normalize"):  # (no torch.X of these)
            EXTRA["torch"].setdefault(name, space[name])
    for kind, (params, build) in CLASSES.items():
        nn[kind] = Native(kind, lambda ev, node, args, kw, _k=kind, _p=params, _b=build: _b(
            ev, bind(f"{_k}.__init__", _p, list(args), kw)))


register()

__all__ = ["CLASSES", "FUNCTIONS"]
