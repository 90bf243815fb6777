"""torch.nn's activation modules beyond pynn.py's: SiLU, Mish, Softplus, ELU, SELU, CELU,
LogSigmoid, and GELU with its ``approximate``. Each calls its F.* row (ops/kernels_act.py:
PyTorch's bits) with the module's parameters, and prints as PyTorch's repr does: every
parameter, defaults included (``Softplus(beta=1.0, threshold=20.0)``)."""

from __future__ import annotations

from ..graph.tensor import Tensor
from .pymodules import EXTRA, Native
from .pynn import Activation

# kind: (the F.* function, its parameters in order with PyTorch's defaults)
MODULES = {
    "SiLU": ("silu", ()), "Mish": ("mish", ()), "LogSigmoid": ("logsigmoid", ()),
    "SELU": ("selu", ()), "Softplus": ("softplus", (("beta", 1.0), ("threshold", 20.0))),
    "ELU": ("elu", (("alpha", 1.0),)), "CELU": ("celu", (("alpha", 1.0),)),
    "GELU": ("gelu", (("approximate", "none"),)),
}


def _shown(v) -> str:
    if isinstance(v, Tensor):
        v = v.value.item()
    return repr(v if isinstance(v, (bool, int, float)) else str(v))


def _module(kind: str, fn: str, params: tuple):
    names = [name for name, _ in params]

    def make(ev, node, args, kw):
        given = dict(zip(names, args))
        given.update({k: v[0] for k, v in kw.items() if k != "inplace"})
        shown = ", ".join(f"{name}={_shown(given.get(name, default))}" for name, default in params)
        return Activation(kind, fn, {k: (v, node.pos) for k, v in given.items()}, shown)
    return Native(kind, make)


def register() -> None:
    nn = EXTRA["torch.nn"]
    for kind, (fn, params) in MODULES.items():
        nn[kind] = _module(kind, fn, params)


register()
