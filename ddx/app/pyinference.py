"""torch.inference_mode(mode=True) as a ``with`` (grad mode off in its body, as no_grad; a
decorator too, through no_grad's path) and torch.is_inference_mode_enabled(); x._version, the
tensor's version counter (graph/tensor.py's VERSIONS: how many times it was changed in
place)."""

from __future__ import annotations

from ..errors import DdxTypeError
from ..graph import record
from ..graph.tensor import VERSIONS, Tensor
from ..graph.values import NoGrad, truth
from .pymodules import EXTRA, Native

STACK: list[bool] = []  # inference_mode's flags, innermost last


class InferenceMode(NoGrad):
    """inference_mode(mode): ``with`` it, grad mode is off (when ``mode``) and
    is_inference_mode_enabled() is ``mode``."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.grad_enabled = not mode if mode else None
        self.saved: list = []

    def __repr__(self) -> str:
        return "<torch.autograd.grad_mode.inference_mode object>"

    def py_enter(self, ev) -> None:
        self.saved.append(record.GRAD_MODE.enabled)
        if self.mode:
            record.GRAD_MODE.enabled = False
        STACK.append(self.mode)

    def py_exit(self, ev) -> None:
        STACK.pop()
        record.GRAD_MODE.enabled = self.saved.pop()


def fn_inference_mode(ev, node, args, kw):
    if len(args) > 1 or any(k != "mode" for k in kw):
        raise DdxTypeError("inference_mode() takes one argument, mode")
    mode = args[0] if args else kw["mode"][0] if "mode" in kw else True
    return InferenceMode(truth(mode))


def fn_is_inference_mode_enabled(ev, node, args, kw):
    if args or kw:
        raise DdxTypeError("is_inference_mode_enabled() takes no arguments")
    return bool(STACK and STACK[-1])


def version(t: Tensor) -> int:
    """x._version."""
    return int(VERSIONS.get(t, 0))


def register() -> None:
    EXTRA["torch"]["inference_mode"] = Native("inference_mode", fn_inference_mode)
    EXTRA["torch"]["is_inference_mode_enabled"] = Native("is_inference_mode_enabled",
                                                         fn_is_inference_mode_enabled)


register()

__all__ = ["InferenceMode", "version"]
