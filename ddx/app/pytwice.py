"""What ddx differentiates through with dual numbers (create_graph's second derivative,
torch.autograd.functional.hessian/hvp, forward mode): the op table's rows. A node made
another way (a kernel of pyfused.py: GluBackward0, MultiMarginLossBackward0,
CtcLossBackward0, ...) has a first derivative only; reaching one there is one clear error,
not an internal one. A custom autograd.Function's node has rules for dual numbers
(pycustom_twice.py): its forward and backward run again on dual tensors."""

from __future__ import annotations

from ..errors import DdxRuntimeError
from ..ops import OPS


def check_rows(order: list, what: str) -> None:
    for t in order:
        if t.inputs and t.op not in OPS and t.grad_fn is not None and t.grad_fn.op.jvp is None:
            raise DdxRuntimeError(f"ddx computes the first derivative of {t.grad_fn.name} "
                                  f"only: {what} through it is not supported")


__all__ = ["check_rows"]
