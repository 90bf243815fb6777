"""Forward-mode AD through a user's torch.autograd.Function: its static ``jvp(ctx,
*tangents)`` run after forward (which runs with no tangents, as PyTorch unpacks the duals
before it), one tangent per input (zeros for a tensor input without one, None for any other
argument), giving the outputs' tangents; PyTorch's error for a Function without jvp. Also the
backward of a Function that defines none."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError
from ..graph import dual, record
from ..graph.tensor import Tensor
from .pymodules import Native

NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
          "forward mode AD.")
NO_BACKWARD = ("You must implement either the backward or vjp method for your custom "
               "autograd.Function to use it with backward mode AD.")


def _no_backward(ev, node, args: list, kw: dict) -> Any:
    raise DdxRuntimeError(NO_BACKWARD)


MISSING_BACKWARD = Native("backward", _no_backward)


def with_tangents(ev, node, cls, ctx, args: list, result: Any) -> Any:
    """``result`` of Cls.apply(*args), its outputs given their tangents where an input has
    one (inside a dual level)."""
    if not dual.has_tangents(args) or dual.LEVEL.through:  # (through: forward's own tangents)
        return result
    from .pycalls import call_value

    jvp = cls.lookup("jvp")
    if jvp is None:
        raise DdxRuntimeError(NO_JVP)
    given = []
    for a in args:
        if not isinstance(a, Tensor) or a.weak:
            given.append(None)
            continue
        t = dual.tangent_of(a)
        given.append(t if t is not None else Tensor(np.zeros_like(a.value)))
    depth, dual.LEVEL.depth = dual.LEVEL.depth, 0
    before = record.GRAD_MODE.enabled
    try:
        got = call_value(ev, node, jvp, [ctx, *given], {})
    finally:
        dual.LEVEL.depth = depth
        record.GRAD_MODE.enabled = before
    outs = list(result) if isinstance(result, tuple) else [result]
    tangents = list(got) if isinstance(got, tuple) else [got]
    if len(tangents) != len(outs):
        raise DdxRuntimeError(f"function jvp returned an incorrect number of forward gradients "
                              f"(expected {len(outs)}, got {len(tangents)})")
    for out, t in zip(outs, tangents):
        if isinstance(out, Tensor) and isinstance(t, Tensor):
            dual.set_tangent(out, t)
    return result


__all__ = ["MISSING_BACKWARD", "NO_BACKWARD", "NO_JVP", "with_tangents"]
