"""torch.autograd.gradgradcheck in the REPL, as PyTorch builds it: gradcheck run on the
function inputs -> autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True), so
that its numerical Jacobian (differences of first gradients) is compared with the second
derivatives ddx's create_graph gives. grad_outputs not given are drawn as PyTorch's
make_tensor(low=-1, high=1) draws them (uniform_(-1, 1) from the seeded generator, so the
generator moves as torch's does). ddx checks the second derivatives with respect to the
inputs; the gradient's (linear) dependence on grad_outputs is the Jacobian that gradcheck
itself checks, and is not checked again."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR
from .pyautograd import differentiable, gradients, tensors_of
from .pygradcheck import OPTIONS, gradcheck
from .pymodules import EXTRA, Native


def _outputs(ev, node, func: Any, inputs: list) -> list:
    value = ev.surface.call_value(ev, node, func, list(inputs), {})
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [t for t in items if isinstance(t, Tensor) and not t.weak and t.requires_grad]


def _draw(ev, like: Tensor) -> Tensor:
    """make_tensor(like.shape, low=-1, high=1): uniform_(-1, 1) in like's dtype."""
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    dtype = like.value.dtype if like.value.dtype.kind in "fc" else np.dtype(np.float64)
    n = math.prod(like.value.shape)
    return Tensor(GENERATOR.uniform(n, dtype, -1.0, 1.0).reshape(like.value.shape))


def gradgradcheck(ev, node, args: list, kw: dict) -> bool:
    """torch.autograd.gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5,
    rtol=1e-3, raise_exception=True, ...)."""
    for name in kw:
        if name not in (*OPTIONS, "func", "inputs", "grad_outputs", "gen_non_contig_grad_outputs",
                        "check_fwd_over_rev", "check_rev_over_rev"):
            raise DdxTypeError(f"gradgradcheck() got an unexpected keyword argument '{name}'")
    given = dict(zip(("func", "inputs", "grad_outputs"), args))
    given.update({k: v for k, (v, _) in kw.items()})
    if "func" not in given or "inputs" not in given:
        raise DdxTypeError("gradgradcheck() missing a required argument: 'func' or 'inputs'")
    func, inputs = given["func"], given["inputs"]
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    wanted = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    saved = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = True
    try:
        if given.get("grad_outputs") is None:
            gos = [_draw(ev, o) for o in _outputs(ev, node, func, inputs)]
        else:
            gos = tensors_of(given["grad_outputs"], "grad_outputs")
    finally:
        record.GRAD_MODE.enabled = saved

    def first_gradients(ev, inner, xs: list, _kw: dict) -> tuple:
        xs = list(xs)
        for k in wanted:  # (a perturbed copy, in the numerical pass: a leaf again)
            if not xs[k].requires_grad:
                xs[k] = Tensor(np.array(xs[k].value), True)
        was = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = True
        try:
            outs = _outputs(ev, inner, func, xs)
            leaves = [xs[k] for k in wanted]
            grads = gradients(ev, outs, leaves, gos, True) if outs else []
            result = []
            for x, g in zip(leaves, grads):
                if g is None:
                    continue
                out = Tensor(g)
                differentiable(out, outs, gos, leaves, x)
                result.append(out)
        finally:
            record.GRAD_MODE.enabled = was
        return tuple(result)

    rest = {k: v for k, v in kw.items() if k in OPTIONS}
    return gradcheck(ev, node, [Native("new_func", first_gradients), inputs], rest)


def register() -> None:
    EXTRA["torch.autograd"]["gradgradcheck"] = Native("gradgradcheck", gradgradcheck)


register()

__all__ = ["gradgradcheck"]
