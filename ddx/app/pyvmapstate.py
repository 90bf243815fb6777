"""The vmaps running now (pyvmap.py runs its function once per sample) and what PyTorch's
vmap refuses inside them, which ddx's per-sample run would otherwise compute: a tensor that
depends on the mapped inputs (found in its recorded inputs) used in data-dependent control
flow (``if v > 0``, ``bool(v)``) or read as a number (``.item()``, ``float(v)``,
``.tolist()``), an op whose output size depends on the values (``nonzero``, ``unique``),
and an in-place op writing a mapped tensor into one that is not mapped (training batch norm's
running statistics too). PyTorch's words."""

from __future__ import annotations

from typing import Any

from ..errors import DdxRuntimeError
from ..graph import record
from ..graph.tensor import Tensor

FRAMES: list = []  # pyvmap.Frame of each running vmap, innermost last

CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please file an issue at "
                "https://github.com/pytorch/pytorch/issues .")
ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations. If error is occurring somewhere inside PyTorch internals, please file a "
        "bug report.")
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
DYNAMIC = ("vmap: We do not support batching operators that can output dynamic shape. "
           "Attempted to vmap over aten::{op}. Please file an issue at "
           "https://github.com/pytorch/pytorch/issues if you need this feature.")
IN_PLACE = ("vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try "
            "to use out-of-place operators instead of inplace arithmetic. If said operator is "
            "being called inside the PyTorch framework, please file a bug report instead.")
BATCH_NORM = ("Batch norm got a batched tensor as input while the running_mean or running_var, "
              "which will be updated in place, were not batched.\nIf you are using a module "
              "and do not need eval mode, please set `track_running_stats` to be False.If you "
              "are using a prebuilt module and do not need eval mode, please see the functorch "
              "website for resources on how to patch your module to work with vmap")
_DYNAMIC_OPS = {"nonzero": "nonzero", "unique": "_unique2", "argwhere": "nonzero"}
_NUMBERS = {"item": ITEM, "tolist": NO_STORAGE, "numpy": NO_STORAGE}


def mapped(value: Any, frames: list | None = None) -> bool:
    """Whether ``value`` is a tensor that depends on the slices of a running vmap (of one of
    ``frames``, all of them by default)."""
    frames = FRAMES if frames is None else frames
    if not frames or not isinstance(value, Tensor) or value.weak:
        return False
    slices = {id(g) for f in frames for g, d in zip(f.given, f.dims) if d is not None}
    return id(value) in slices or any(id(t) in slices for t in record.ancestors(value))


def slice_index(frame, value: Any) -> int | None:
    """Which of ``frame``'s mapped leaves ``value`` is this sample's slice of (the tensor
    itself), None for anything else."""
    for k, (g, d) in enumerate(zip(frame.given, frame.dims)):
        if g is value:
            return None if d is None else k
    return None


def note_copy(copy: Tensor, of: Tensor) -> None:
    """A transform's fresh leaf ``copy`` of ``of`` (torch.func's inputs): a sample still."""
    if FRAMES:
        FRAMES[-1].copies[id(copy)] = (copy, of)


def source_of(frame, value: Any) -> int | None:
    """Which of ``frame``'s mapped leaves ``value`` is this sample's slice of (through the
    fresh leaves transforms made of it); None for anything else."""
    for _ in range(64):  # (nested transforms: a copy of a copy)
        if not isinstance(value, Tensor):
            return None
        if any(g is value for g in frame.given):
            return slice_index(frame, value)
        got = frame.copies.get(id(value))
        if got is None or got[0] is not value:
            return None
        value = got[1]
    return None


def check_truth(value: Any) -> None:
    if mapped(value):
        raise DdxRuntimeError(CONTROL_FLOW)


def check_number(value: Any) -> None:
    if mapped(value):
        raise DdxRuntimeError(ITEM)


def check_batch_norm(x: Any, stats: tuple) -> None:
    """Training batch norm of a mapped input would update unmapped running stats in place."""
    if any(t is not None and not mapped(t) for t in stats) and mapped(x):
        raise DdxRuntimeError(BATCH_NORM)


def check_mask(key: Any) -> None:
    if isinstance(key, Tensor) and key.value.dtype.kind == "b" and mapped(key):
        raise DdxRuntimeError("vmap: We do not support batching operators that can support "
                              "dynamic shape. Attempting to batch over indexing with a boolean "
                              "mask.")


def check_method(name: str, t: Tensor, args: list) -> None:
    """A tensor method (or torch function of ``t``) called inside vmap."""
    if name in _NUMBERS or name in _DYNAMIC_OPS:
        if mapped(t):
            raise DdxRuntimeError(_NUMBERS.get(name) or DYNAMIC.format(op=_DYNAMIC_OPS[name]))
    elif name.endswith("_") and not name.endswith("__") and not mapped(t) and \
            any(mapped(a) for a in args):
        if name in ("add_", "sub_"):  # (their own check: the broadcast of the batch)
            other = next(a for a in args if mapped(a))
            size = FRAMES[-1].size
            pad = (1,) * max(0, t.value.ndim - other.value.ndim)  # (the batch dim in front)
            shape = _broadcast(t.value.shape, (size, *pad, *other.value.shape))
            raise DdxRuntimeError(f"output with shape {list(t.value.shape)} doesn't match the "
                                  f"broadcast shape {list(shape)}")
        raise DdxRuntimeError(IN_PLACE.format(name="inplace arithmetic"))


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


__all__ = ["FRAMES", "check_batch_norm", "check_mask", "check_method", "check_number",
           "check_truth", "mapped", "note_copy", "slice_index", "source_of"]
