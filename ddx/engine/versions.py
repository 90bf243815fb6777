"""PyTorch's check of saved tensors at backward: a tensor a node saved, changed in place since
(its version counter moved), stops the backward with PyTorch's "modified by an inplace
operation" message."""

from __future__ import annotations

import re

from ..errors import DdxRuntimeError
from ..graph.tensor import SUCCESSORS, VERSIONS, Function, Tensor

# ops whose VJPs read an input's shape only (PyTorch saves the sizes, not the tensor)
_SHAPE_ONLY = frozenset(("select", "slice"))
_BACKWARD = re.compile(r"Backward\d*$")  # (SigmoidBackward0 -> Sigmoid, the forward op)
_TYPES = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
          "bool": "Bool", "float16": "Half"}


def check_saved(fn: Function) -> None:
    """PyTorch's SavedVariable check: a tensor ``fn`` saved for its backward (an input its
    formulas read for another input's gradient, or its own output) changed in place since
    ("one of the variables needed for gradient computation has been modified by an inplace
    operation"). An input with no other input requiring grad is saved only by a one-input op."""
    ins, out_version = fn.versions or ((0,) * len(fn.inputs), 0)
    op = fn.op
    if "i" in op.reads and op.name not in _SHAPE_ONLY:
        inputs = fn.inputs
        grads = [t.requires_grad for t in inputs]
        for j, t in enumerate(inputs):
            if t.weak or not (len(inputs) == 1 or any(grads[:j] + grads[j + 1:])):
                continue
            now = VERSIONS.get(t, 0)
            if now != ins[j]:
                latest = t
                while latest in SUCCESSORS:
                    latest = SUCCESSORS[latest]
                made = latest.grad_fn.name if latest.grad_fn is not None else None
                raise DdxRuntimeError(_modified(t, made, now, ins[j]))
    if "o" in op.reads:
        out = fn.output
        if out is not None and VERSIONS.get(out, 0) != out_version:
            raise DdxRuntimeError(_modified(out, fn.name, VERSIONS.get(out, 0), out_version))


def _modified(t: Tensor, made: str | None, now: int, then: int) -> str:
    kind = _TYPES.get(t.value.dtype.name, t.value.dtype.name.capitalize())
    forward = None if made is None else \
        "torch::autograd::CopySlices" if made == "CopySlices" else _BACKWARD.sub("", made)
    which = "" if made is None else f", which is output 0 of {forward},"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{kind}Tensor {list(t.value.shape)}]{which} is at "
            f"version {now}; expected version {then} instead. Hint: enable anomaly detection "
            "to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")
