"""torch.nn.functional.batch_norm and nn.BatchNorm1d/2d/3d, as PyTorch runs them on a CPU:
one NativeBatchNormBackward0 node whose value and gradients are ATen's kernels'
(ddx/ops/kernels_batchnorm.py), the running statistics updated in place in training mode
(momentum, or the cumulative average when momentum is None, counted by
num_batches_tracked), the batch's statistics in training and the running ones in
evaluation, with PyTorch's messages."""

from __future__ import annotations

import numpy as np

from ..graph.tensor import Tensor
from ..graph.values import weak
from ..ops import kernels_batchnorm as bn
from . import pybuffers
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, error, num, tensor
from .pyfused import fused
from .pymodules import EXTRA, Native
from .pynn import named_modules, new_parameter
from .pynn6 import Module6
from .pyvmapstate import FRAMES, check_batch_norm

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _value(t) -> np.ndarray | None:
    return None if t is None else np.ascontiguousarray(t.value)


def _check_param(node, what: str, t, c: int) -> None:
    if t is not None and (not isinstance(t, Tensor) or t.value.size != c):
        size = t.value.size if isinstance(t, Tensor) else 0
        raise error(f"{what} should contain {c} elements not {size}", node)


def batch_norm(ev, node, args, kw):
    g = bind("batch_norm", (("input", REQUIRED), ("running_mean", REQUIRED),
                            ("running_var", REQUIRED), ("weight", None), ("bias", None),
                            ("training", False), ("momentum", 0.1), ("eps", 1e-5)), args, kw)
    x = tensor(node, g["input"], "input", "batch_norm")
    rm, rv, w, b = g["running_mean"], g["running_var"], g["weight"], g["bias"]
    training = bool(num(g["training"]))
    eps = float(num(g["eps"]))
    if x.value.ndim < 2:
        raise error("batch_norm(): expected input to have at least 2 dimensions, but got "
                    f"{x.value.ndim}", node)
    if x.value.dtype not in _FLOATS:
        raise error(f'"batch_norm" not implemented for '
                    f"'{'Long' if x.value.dtype.kind in 'iu' else str(x.value.dtype)}'", node)
    n, c = x.shape[0], x.shape[1]
    if training and n * int(np.prod(x.shape[2:], dtype=np.int64)) == 1:
        raise PyException.error("ValueError", "Expected more than 1 value per channel when "
                                f"training, got input size torch.Size({list(x.shape)})")
    for what, t in (("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv)):
        _check_param(node, what, t, c)
    if not training and (rm is None or rv is None):
        raise error("running_mean and running_var must be defined in evaluation mode", node)
    xv = np.ascontiguousarray(x.value)
    dt = xv.dtype
    wv = None if w is None else _value(w).reshape(c).astype(dt)
    bv = None if b is None else _value(b).reshape(c).astype(dt)
    if training:
        if FRAMES:
            check_batch_norm(x, (rm, rv))
        mean, var_sum, count = bn.stats(xv)
        invstd = bn.invstd_of(var_sum, count, eps)
        if rm is not None or rv is not None:
            new_mean, new_var = bn.update_running(
                mean, var_sum, count, float(num(g["momentum"])),
                None if rm is None else _value(rm).reshape(c).astype(dt),
                None if rv is None else _value(rv).reshape(c).astype(dt))
            for buf, new in ((rm, new_mean), (rv, new_var)):
                if buf is not None:
                    buf.value[...] = new.reshape(buf.value.shape)
        running_var = None
    else:
        mean = _value(rm).reshape(c).astype(dt)
        running_var = _value(rv).reshape(c).astype(dt)
        invstd = bn.running_invstd(running_var, eps)
    y = bn.transform(xv, wv, bv, mean, invstd)
    inputs = [t for t in (x, w, b) if isinstance(t, Tensor)]
    last: list = [None, None]  # (the gradient seen last, and the three it gives)

    def part(k: int):
        def vjp(gy: np.ndarray) -> np.ndarray:
            if last[0] is not gy:  # (one backward call gives all three, as ATen's)
                last[:] = [gy, bn.backward(np.asarray(gy, dt), xv, wv, mean, invstd, training,
                                           running_var, eps)]
            got = last[1][k]
            return got if k == 0 else got.reshape(inputs[k].value.shape)
        return vjp

    return fused(ev, node, "NativeBatchNormBackward0", y, inputs,
                 tuple(part(k) for k in range(len(inputs))))


class BatchNorm(Module6):
    """nn.BatchNorm1d/2d/3d: _BatchNorm.forward's choice of statistics and momentum."""

    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", f"{self.kind}.forward() takes 2 positional "
                                    f"arguments but {len(args) + 1} were given")
        x = args[0]
        s = self.state
        dims = self.dims
        if isinstance(x, Tensor) and not x.weak and x.value.ndim not in dims:
            want = " or ".join(f"{d}D" for d in dims)
            raise PyException.error("ValueError", f"expected {want} input (got "
                                    f"{x.value.ndim}D input)")
        factor = 0.0 if s["momentum"] is None else s["momentum"]
        training, track = s["training"], s["track_running_stats"]
        if training and track and s.get("num_batches_tracked") is not None:
            counter = s["num_batches_tracked"]
            counter.value[...] = counter.value + 1
            if s["momentum"] is None:
                factor = 1.0 / float(counter.value)
        use_batch = training or (s.get("running_mean") is None and s.get("running_var") is None)
        keep = not training or track
        return batch_norm(ev, node, [x, s.get("running_mean") if keep else None,
                                     s.get("running_var") if keep else None, s["weight"],
                                     s["bias"], weak(use_batch), weak(factor), weak(s["eps"])],
                          {})


def _build(kind: str, dims: tuple):
    def build(ev, g):
        c = int(num(g["num_features"]))
        eps, momentum = num(g["eps"]), None if g["momentum"] is None else num(g["momentum"])
        affine, track = bool(num(g["affine"])), bool(num(g["track_running_stats"]))
        bias = affine and bool(num(g["bias"]))
        m = BatchNorm(kind, None, {}, f"{c}, eps={eps!r}, momentum={momentum!r}, "
                                      f"affine={affine}, bias={bias}, "
                                      f"track_running_stats={track}")
        m.dims = dims
        m.state.update(eps=eps, momentum=momentum, track_running_stats=track,
                       num_features=c)
        dt = np.dtype(ev.dtype)
        m.state["weight"] = new_parameter(np.ones(c, dt)) if affine else None
        m.state["bias"] = new_parameter(np.zeros(c, dt)) if bias else None
        if track:
            for name, value in (("running_mean", np.zeros(c, dt)),
                                ("running_var", np.ones(c, dt)),
                                ("num_batches_tracked", np.asarray(0, np.int64))):
                pybuffers.register_buffer(ev, None, m, [name, Tensor(value)], {})
        else:
            m.state.update(running_mean=None, running_var=None, num_batches_tracked=None)
        return m
    return build


def replace_all_batch_norm_modules_(ev, node, args, kw):
    """torch.func.replace_all_batch_norm_modules_(root): every BatchNorm in ``root`` stops
    tracking running statistics (its running_mean, running_var and num_batches_tracked are
    None), so that vmap can run it; ``root`` back."""
    if len(args) != 1 or kw:
        raise PyException.error("TypeError", "replace_all_batch_norm_modules_() takes 1 "
                                "positional argument: root")
    for _, m in named_modules(args[0]):
        if isinstance(m, BatchNorm):
            m.state.update(running_mean=None, running_var=None, num_batches_tracked=None,
                           track_running_stats=False)
            m.shown = m.shown.replace("track_running_stats=True", "track_running_stats=False")
    return args[0]


_PARAMS = (("num_features", REQUIRED), ("eps", 1e-5), ("momentum", 0.1), ("affine", True),
           ("track_running_stats", True), ("device", None), ("dtype", None), ("bias", True))
CLASSES = {"BatchNorm1d": (2, 3), "BatchNorm2d": (4,), "BatchNorm3d": (5,)}


def register() -> None:
    nn, space = EXTRA["torch.nn"], EXTRA["torch.nn.functional"]
    space["batch_norm"] = Native("batch_norm", batch_norm)
    for kind, dims in CLASSES.items():
        build = _build(kind, dims)
        nn[kind] = Native(kind, lambda ev, node, args, kw, _k=kind, _b=build: _b(
            ev, bind(f"{_k}.__init__", _PARAMS, list(args), kw)))


register()
