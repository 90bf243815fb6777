"""torch.autograd.forward_ad in the REPL's Python: ``with fwAD.dual_level():``,
``make_dual(primal, tangent)``, ``unpack_dual(t)`` (an UnpackedDualTensor(primal, tangent)),
``enter_dual_level()`` / ``exit_dual_level()``. The tangents flow through every op of the
table eagerly, beside the values (ddx/graph/dual.py); custom Functions use their ``jvp``
(pycustom.py). PyTorch's words for its errors."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import dual, record
from ..graph.tensor import Tensor
from ..graph.values import NamedTuple
from ..ops import OPS
from ..out.torchfmt import dtype_repr
from .pyerrors import PyException
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pyvalues import type_label


class DualLevel:
    """``fwAD.dual_level()``: a level entered at the block's start and left at its end."""

    def __init__(self, ev) -> None:
        self.address = ev.addresses.of(self)

    def __repr__(self) -> str:
        return f"<torch.autograd.forward_ad.dual_level object at {self.address}>"

    def py_enter(self, ev) -> int:
        return dual.enter()

    def py_exit(self, ev) -> None:
        dual.leave()


def _options(kw: dict, what: str) -> None:
    for name in kw:
        if name != "level":
            raise DdxTypeError(f"{what}() got an unexpected keyword argument '{name}'")


def _floating(t: Any, what: str) -> Tensor:
    if not isinstance(t, Tensor) or t.weak:
        raise PyException.error("AttributeError", f"'{type_label(t)}' object has no "
                                "attribute 'is_floating_point'")
    if t.value.dtype.kind not in "fc":
        raise PyException.error("ValueError", f"Expected {what} to be floating point or "
                                f"complex, but got: {dtype_repr(t.value.dtype)}")
    return t


def _alias(t: Tensor, grad_fn: str) -> Tensor:
    """A view of t: recorded (as ``grad_fn``) where t requires grad, else its values shared."""
    if t.requires_grad and record.GRAD_MODE.enabled:
        return record.apply(OPS["alias"], [t], grad_fn=grad_fn)
    return Tensor(t.value)


def make_dual(ev, node, args: list, kw: dict) -> Tensor:
    _options(kw, "make_dual")
    if len(args) != 2:
        raise DdxTypeError(f"make_dual() takes 2 positional arguments but {len(args)} were "
                           "given")
    primal = _floating(args[0], "primal")
    tangent = _floating(args[1], "tangent")
    if not dual.LEVEL.depth:
        raise DdxRuntimeError("Trying to create a dual Tensor for forward AD but no level "
                              "exists, make sure to enter_dual_level() first.")
    if dual.tangent_of(primal) is not None:
        raise DdxRuntimeError("Making a dual Tensor based on a Tensor that already has a "
                              "forward gradient at the same level 0 is not supported.")
    if tangent.value.shape != primal.value.shape:
        raise DdxRuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(primal.value.shape)} while the given forward gradient is of size "
            f"{list(tangent.value.shape)}.")
    if tangent.value.strides != primal.value.strides and primal.value.size > 1:
        # (another layout: the values copied into the primal's)
        tangent = Tensor(np.ascontiguousarray(tangent.value))
    result = _alias(primal, "ViewBackward0")
    dual.set_tangent(result, tangent)
    return result


def unpack_dual(ev, node, args: list, kw: dict) -> NamedTuple:
    _options(kw, "unpack_dual")
    if len(args) != 1 or not isinstance(args[0], Tensor) or args[0].weak:
        got = type_label(args[0]) if args else "nothing"
        raise DdxTypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                           f"{got}")
    t = args[0]
    tangent = dual.tangent_of(t)
    depth, dual.LEVEL.depth = dual.LEVEL.depth, 0  # (the primal: a view without the tangent)
    try:
        primal = _alias(t, "Identity")
    finally:
        dual.LEVEL.depth = depth
    return NamedTuple("UnpackedDualTensor", ("primal", "tangent"), (primal, tangent))


def forward_jacobian(ev, node, call, inputs: list, i: int, n_out: int) -> list:
    """d(output o)/d(input i) by forward AD, as gradcheck's check_forward_ad builds it: one
    dual pass per element of input i (a one-hot tangent), a (numel_i, numel_o) array per
    output; ``call(inputs)`` runs the function, giving its output tensors."""
    x = inputs[i]
    cols: list = [[] for _ in range(n_out)]
    entered = not dual.LEVEL.depth
    if entered:
        dual.enter()
    try:
        for j in range(x.value.size):
            onehot = np.zeros(x.value.shape, dtype=x.value.dtype)
            onehot.reshape(-1)[j] = 1
            moved = list(inputs)
            moved[i] = make_dual(ev, node, [Tensor(x.value), Tensor(onehot)], {})
            for o, out in enumerate(call(moved)):
                t = dual.tangent_of(out)
                cols[o].append(np.zeros(out.value.size, dtype=out.value.dtype) if t is None
                               else np.asarray(t.value).reshape(-1))
    finally:
        if entered:
            dual.leave()
    return [np.stack(c) if c else np.zeros((0, 0)) for c in cols]


def _enter(ev, node, args: list, kw: dict) -> int:
    return dual.enter()


def _exit(ev, node, args: list, kw: dict) -> None:
    _options(kw, "exit_dual_level")
    dual.leave()


def register() -> None:
    module = PyModule("torch.autograd.forward_ad", {
        "dual_level": Native("dual_level", lambda ev, node, args, kw: DualLevel(ev)),
        "make_dual": Native("make_dual", make_dual),
        "unpack_dual": Native("unpack_dual", unpack_dual),
        "enter_dual_level": Native("enter_dual_level", _enter),
        "exit_dual_level": Native("exit_dual_level", _exit)})
    MODULES["torch.autograd.forward_ad"] = module
    EXTRA["torch.autograd"]["forward_ad"] = module


register()

__all__ = ["DualLevel", "make_dual", "unpack_dual"]
