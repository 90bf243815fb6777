"""Forward-mode AD as PyTorch's torch.autograd.forward_ad runs it: eagerly, beside the forward
pass. Inside a dual level a tensor may carry a tangent (``make_dual``); every op recorded by
record.apply whose inputs carry one gives its result the tangent its op row's forward rule
(Op.tangent, the rule --forward and the Hessian use) computes from theirs. Leaving the level
takes every tangent made in it away again, as PyTorch destroys them.

The tangent is a Tensor of its own, kept in the Tensor's ``tangent`` slot (unset outside
forward AD, so the hot path pays one test of ``LEVEL.depth``). A tangent is computed on
numpy values: it carries no graph of its own (PyTorch records one when the primal requires
grad)."""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import DdxRuntimeError
from .tensor import Tensor


class _Level:
    """The dual level: 0 outside one, 1 inside (PyTorch has no nested levels). ``through``:
    ddx's own use (a second derivative through a custom Function, forward over reverse): a
    custom Function's tangents then come from its forward's ops, jvp or not."""

    depth = 0
    through = False


LEVEL = _Level()
_CARRIERS: list = []  # weak references to every tensor given a tangent in this level
_PRUNE = [4096]  # the length at which the dead ones are dropped next


def tangent_of(t: Tensor) -> Tensor | None:
    """t's tangent at the current level, or None."""
    return getattr(t, "tangent", None) if LEVEL.depth else None


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    t.tangent = tangent
    _CARRIERS.append(weakref.ref(t))
    if len(_CARRIERS) >= _PRUNE[0]:  # (a long loop in one level: drop the dead references)
        _CARRIERS[:] = [r for r in _CARRIERS if r() is not None]
        _PRUNE[0] = max(4096, 2 * len(_CARRIERS))


def carried() -> int:
    """How many references to tensors with tangents the level holds (dead ones included)."""
    return len(_CARRIERS)


def enter() -> int:
    if LEVEL.depth:
        raise DdxRuntimeError("Nested forward mode AD is not supported at the moment")
    LEVEL.depth = 1
    return 0


def leave() -> None:
    """The level's end: every tangent made in it is gone."""
    for ref in _CARRIERS:
        t = ref()
        if t is not None and hasattr(t, "tangent"):
            del t.tangent
    _CARRIERS.clear()
    _PRUNE[0] = 4096
    LEVEL.depth = 0


def push() -> tuple:
    """A level of ddx's own, inside the user's if there is one (whose tangents are kept
    aside and come back at pop)."""
    saved = (LEVEL.depth, LEVEL.through, list(_CARRIERS))
    _CARRIERS.clear()
    LEVEL.depth, LEVEL.through = 1, True
    return saved


def pop(saved: tuple) -> None:
    leave()
    LEVEL.depth, LEVEL.through, _CARRIERS[:] = saved[0], saved[1], saved[2]


def has_tangents(tensors) -> bool:
    return bool(LEVEL.depth) and any(isinstance(t, Tensor) and hasattr(t, "tangent")
                                     for t in tensors)


def refuse(tensors, what: str) -> None:
    """A node ddx computes outside the op table has no forward rule: one clear error rather
    than a result silently without its tangent."""
    if has_tangents(tensors):
        raise DdxRuntimeError(f"ddx's forward-mode AD (torch.autograd.forward_ad) does not "
                              f"cover {what}: use torch.autograd.functional.jvp")


def propagate(op, out: Tensor, inputs, args: list, kw: dict) -> None:
    """record.apply's step inside a dual level: out's tangent from its inputs' tangents."""
    if not op.differentiable or out.value.dtype.kind not in "fc":
        return
    ts = [getattr(t, "tangent", None) for t in inputs]
    given = [t.value for t in ts if t is not None]
    if not given:
        return
    r = op.tangent([None if t is None else t.value for t in ts], out.value, *args, **kw)
    if r is None:
        return
    r = np.asarray(r)
    # the dtype PyTorch's formula gives: the tangents' own (a float32 tangent of a float64
    # primal stays float32 through a linear op), widened where the rule mixed in the primal
    want = np.result_type(*given) if len(given) > 1 else given[0].dtype
    if r.dtype != want:
        want = np.result_type(want, out.value.dtype)
    if r.shape != out.value.shape or r.dtype != want:
        r = np.array(np.broadcast_to(r.astype(want, copy=False), out.value.shape))
    set_tangent(out, Tensor(r))


__all__ = ["LEVEL", "carried", "enter", "has_tangents", "leave", "pop", "propagate", "push", "refuse",
           "set_tangent", "tangent_of"]
