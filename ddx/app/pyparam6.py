"""torch.nn.utils.parametrizations.weight_norm on the modules ddx provides, as
torch/nn/utils/parametrize.py registers it: the module becomes ``Parametrized<Kind>``, its
weight's parameters ``parametrizations.weight.original0`` (g) and ``original1`` (v) live in a
ParametrizationList holding ``_WeightNorm()`` inside a ModuleDict, printed as PyTorch
prints them; the weight is ``g * v / ||v||`` (WeightNormInterfaceBackward0), recomputed
before each forward. The other parametrizations (orthogonal, spectral_norm) and
``parametrize.register_parametrization`` are one-line errors."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph import record
from ..graph.tensor import Tensor
from .pycontainers import ModuleDict
from .pyfunc6 import REQUIRED, bind, call, num, renamed
from .pymodules import MODULES, Native, PyModule
from .pynn import Builtin, module_repr
from .pyweightnorm6 import before_forward, norm_except, param, target


class Part(Builtin):
    """ParametrizationList and _WeightNorm: modules that only hold and print."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind


def _indented(text: str) -> list:
    return ["  " + line for line in text.split("\n")]


def weight_norm(ev, node, args, kw):
    g = bind("weight_norm", (("module", REQUIRED), ("name", "weight"), ("dim", 0)), args, kw)
    m, name = g["module"], str(g["name"])
    dim = None if g["dim"] is None else int(num(g["dim"]))
    w = target(m, name, "parametrizations.weight_norm")
    if "parametrizations" in m.state:
        raise DdxRuntimeError("ddx registers one parametrization per module")
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        norm = norm_except(ev, node, Tensor(w.value), dim)
    finally:
        record.GRAD_MODE.enabled = before
    plist = Part("ParametrizationList")
    plist.state["original0"] = param(Tensor(np.array(norm.value)))
    plist.state["original1"] = param(w)
    plist.state["0"] = Part("_WeightNorm")
    holder = ModuleDict(None)
    holder.state[name] = plist
    del m.state[name]
    m.state["parametrizations"] = holder
    extra = m.extra()
    m.kind = "Parametrized" + m.kind

    def own_repr() -> str:
        lines = [f"{m.kind}("] + ([f"  {extra}"] if extra else [])
        lines += _indented("(parametrizations): " + module_repr(holder))
        return "\n".join(lines + [")"])

    m.own_repr = own_repr

    def compute(ev, node) -> None:
        v, gain = plist.state["original1"], plist.state["original0"]
        out = call(ev, node, "mul", v, call(ev, node, "div", gain,
                                            norm_except(ev, node, v, dim)))
        m.state[name] = renamed(out, "WeightNormInterfaceBackward0")

    compute(ev, node)
    before_forward(m, compute)
    return m


def _missing(name: str):
    def fn(ev, node, args, kw):
        raise DdxRuntimeError(f"torch.nn.utils.{name} is not supported by ddx",
                              start=node.pos, end=node.end)
    return Native(name.rsplit(".", 1)[-1], fn)


def register() -> None:
    members = {"weight_norm": Native("weight_norm", weight_norm),
               "orthogonal": _missing("parametrizations.orthogonal"),
               "spectral_norm": _missing("parametrizations.spectral_norm")}
    module = PyModule("torch.nn.utils.parametrizations", members)
    parametrize = PyModule("torch.nn.utils.parametrize", {
        "register_parametrization": _missing("parametrize.register_parametrization"),
        "remove_parametrizations": _missing("parametrize.remove_parametrizations"),
        "is_parametrized": Native("is_parametrized", lambda ev, node, args, kw: isinstance(
            args[0], Builtin) and "parametrizations" in args[0].state)})
    utils = MODULES["torch.nn.utils"]
    utils.members["parametrizations"] = module
    utils.members["parametrize"] = parametrize
    MODULES["torch.nn.utils.parametrizations"] = module
    MODULES["torch.nn.utils.parametrize"] = parametrize


register()

__all__ = ["Part", "weight_norm"]
