"""``import functorch`` (the forward-AD tutorial's functional section): its transforms are
torch.func's, each call with PyTorch's FutureWarning that functorch's name is deprecated, and
``make_functional(model)`` / ``make_functional_with_buffers(model)``: ``(func, params)`` /
``(func, params, buffers)``, where ``func(params, [buffers,] *args)`` runs the module with
those tensors in place of its own (torch.func.functional_call)."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from . import pynn
from .pymodules import MODULES, Native, PyModule

_WARNING = ("We've integrated functorch into PyTorch. As the final step of the integration, "
            "`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
            "version of PyTorch >= 2.3. Please use `{instead}` instead; see the PyTorch 2.0 "
            "release notes and/or the `torch.func` migration guide for more details "
            "https://pytorch.org/docs/main/func.migrating.html")
TRANSFORMS = ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "jvp", "vjp", "vmap")


def _deprecated(name: str):
    def call(ev, node, args: list, kw: dict) -> Any:
        ev.warnings.append(_WARNING.format(name=name, instead=f"torch.func.{name}"))
        target = MODULES["torch.func"].members[name]
        return target.fn(ev, node, args, kw)
    return Native(name, call)


class FunctionalModule:
    """make_functional's ``func``: the module called with the given parameters (and
    buffers) in place of its own."""

    def __init__(self, model: Any, names: list, buffer_names: list | None) -> None:
        self.model, self.names, self.buffer_names = model, names, buffer_names

    def __repr__(self) -> str:
        kind = "FunctionalModuleWithBuffers" if self.buffer_names is not None else \
            "FunctionalModule"
        return f"{kind}(\n  (stateless_model): {self.model!r}\n)"

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        given = 2 if self.buffer_names is not None else 1
        if len(args) < given:
            raise DdxTypeError(f"forward() missing {given - len(args)} required positional "
                               "argument(s)")
        tensors = dict(zip(self.names, args[0]))
        if self.buffer_names is not None:
            tensors.update(zip(self.buffer_names, args[1]))
        call = MODULES["torch.func"].members["functional_call"]
        return call.fn(ev, node, [self.model, tensors, tuple(args[given:])], kw)


def _make(with_buffers: bool):
    name = "make_functional_with_buffers" if with_buffers else "make_functional"

    def make(ev, node, args: list, kw: dict) -> tuple:
        if len(args) != 1 or not pynn.is_module(args[0]):
            raise DdxTypeError(f"{name}() takes an nn.Module")
        ev.warnings.append(_WARNING.format(name=name, instead="torch.func.functional_call"))
        model = args[0]
        params = pynn.named_parameters(model)
        names = [str(k) for k, _ in params]
        buffers = _buffers(ev, node, model) if with_buffers else []
        func = FunctionalModule(model, names, [str(k) for k, _ in buffers]
                                if with_buffers else None)
        values = tuple(p for _, p in params)
        return (func, values, tuple(b for _, b in buffers)) if with_buffers else (func, values)
    return Native(name, make)


def _buffers(ev, node, model: Any) -> list:
    got = pynn.module_method(ev, node, model, "named_buffers", [], {})
    return list(got) if got is not NotImplemented else []


def register() -> None:
    members = {name: _deprecated(name) for name in TRANSFORMS}
    members["make_functional"] = _make(False)
    members["make_functional_with_buffers"] = _make(True)
    MODULES.setdefault("functorch", PyModule("functorch", members))


register()

__all__ = ["FunctionalModule"]
