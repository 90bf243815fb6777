"""torch.nn.utils.weight_norm and spectral_norm (the hook-based forms of
torch/nn/utils/weight_norm.py and spectral_norm.py) on the modules ddx provides: the weight
parameter replaced by ``weight_g``/``weight_v`` (``weight_orig`` and the buffers ``weight_u``,
``weight_v``, drawn from N(0, 1) by the seeded generator and normalised), and the weight
recomputed before each forward (``g * v / ||v||``; spectral_norm's power iteration under
no_grad in training mode, then ``weight / dot(u, W v)``)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from ..graph.values import weak
from ..ops.rng import GENERATOR
from . import pybuffers
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, num, renamed
from .pymodules import MODULES, Native
from .pynn import PARAMETERS, Builtin


def param(t: Tensor) -> Tensor:
    p = Tensor(t.value, True)
    PARAMETERS.add(p)
    return p


def target(m, name: str, what: str) -> Tensor:
    if not isinstance(m, Builtin):
        raise DdxTypeError(f"ddx's {what} takes a module ddx provides (nn.Linear, ...), not "
                           f"{type(m).__name__}")
    w = m.state.get(name)
    if not isinstance(w, Tensor) or w not in PARAMETERS:
        raise PyException.error("AttributeError", f"'{m.kind}' object has no attribute "
                                f"'{name}'")
    return w


def norm_except(ev, node, v: Tensor, dim) -> Tensor:
    if dim is None or dim == -1 and v.value.ndim == 0:
        return call(ev, node, "norm", v)
    d = dim % v.value.ndim
    others = tuple(weak(i) for i in range(v.value.ndim) if i != d)
    return call(ev, node, "norm", v, weak(2), dim=others, keepdim=True)


def before_forward(m: Builtin, fn) -> None:
    forward = m.forward

    def hooked(ev, node, args, kw):
        fn(ev, node)
        return forward(ev, node, args, kw)
    m.forward = hooked


def weight_norm(ev, node, args, kw):
    g = bind("weight_norm", (("module", REQUIRED), ("name", "weight"), ("dim", 0)), args, kw)
    m, name = g["module"], str(g["name"])
    dim = None if g["dim"] is None else int(num(g["dim"]))
    w = target(m, name, "weight_norm")
    ev.warnings.append("`torch.nn.utils.weight_norm` is deprecated in favor of "
                       "`torch.nn.utils.parametrizations.weight_norm`.")
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        norm = norm_except(ev, node, Tensor(w.value), dim)
    finally:
        record.GRAD_MODE.enabled = before
    del m.state[name]
    m.state[name + "_g"] = param(Tensor(np.array(norm.value)))
    m.state[name + "_v"] = param(w)

    def compute(ev, node) -> None:
        v, gain = m.state[name + "_v"], m.state[name + "_g"]
        out = call(ev, node, "mul", v, call(ev, node, "div", gain,
                                            norm_except(ev, node, v, dim)))
        m.state[name] = renamed(out, "WeightNormInterfaceBackward0")

    compute(ev, node)
    before_forward(m, compute)
    return m


def _normalize(ev, node, x: Tensor, eps: float) -> Tensor:
    n = call(ev, node, "clamp_min", call(ev, node, "norm", x, weak(2), dim=weak(0),
                                         keepdim=True), weak(eps))
    return call(ev, node, "div", x, n)


def spectral_norm(ev, node, args, kw):
    g = bind("spectral_norm", (("module", REQUIRED), ("name", "weight"),
                               ("n_power_iterations", 1), ("eps", 1e-12), ("dim", None)),
             args, kw)
    m, name = g["module"], str(g["name"])
    iterations, eps = int(num(g["n_power_iterations"])), float(num(g["eps"]))
    if iterations <= 0:
        raise PyException.error("ValueError", "Expected n_power_iterations to be positive, but "
                                f"got n_power_iterations={iterations}")
    w = target(m, name, "spectral_norm")
    dim = 0 if g["dim"] is None else int(num(g["dim"]))
    mat = np.moveaxis(w.value, dim, 0).reshape(w.shape[dim], -1)
    h, cols = mat.shape
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        u = _normalize(ev, node, Tensor(GENERATOR.normal(h, w.value.dtype, 0.0, 1.0)), eps)
        v = _normalize(ev, node, Tensor(GENERATOR.normal(cols, w.value.dtype, 0.0, 1.0)), eps)
    finally:
        record.GRAD_MODE.enabled = before
    del m.state[name]
    m.state[name + "_orig"] = w
    m.state[name] = Tensor(w.value)
    for key, value in (("_u", u), ("_v", v)):
        pybuffers.register_buffer(ev, node, m, [name + key, Tensor(value.value)], {})

    def compute(ev, node) -> None:
        weight = m.state[name + "_orig"]
        matrix = weight if dim == 0 and weight.value.ndim == 2 else call(
            ev, node, "reshape", call(ev, node, "movedim", weight, weak(dim), weak(0)),
            (weight.shape[dim], -1))
        u, v = m.state[name + "_u"], m.state[name + "_v"]
        if m.state["training"]:
            was = record.GRAD_MODE.enabled
            record.GRAD_MODE.enabled = False
            try:
                for _ in range(iterations):
                    v = _normalize(ev, node, call(ev, node, "mv", call(ev, node, "t", matrix),
                                                  u), eps)
                    u = _normalize(ev, node, call(ev, node, "mv", matrix, v), eps)
            finally:
                record.GRAD_MODE.enabled = was
            m.state[name + "_u"].value[...] = u.value
            m.state[name + "_v"].value[...] = v.value
            u, v = Tensor(np.array(u.value)), Tensor(np.array(v.value))
        sigma = call(ev, node, "dot", u, call(ev, node, "mv", matrix, v))
        m.state[name] = call(ev, node, "div", weight, sigma)

    before_forward(m, compute)
    return m


def register() -> None:
    utils = MODULES["torch.nn.utils"]
    utils.members["weight_norm"] = Native("weight_norm", weight_norm)
    utils.members["spectral_norm"] = Native("spectral_norm", spectral_norm)


register()

__all__ = ["before_forward", "norm_except", "param", "spectral_norm", "target", "weight_norm"]
