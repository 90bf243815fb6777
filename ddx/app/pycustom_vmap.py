"""A custom torch.autograd.Function under torch.func's transforms (the notes "Extending
torch.func with autograd.Function"): inside a transform, a Function must have PyTorch 2's
``setup_context``; inside vmap it needs a ``vmap`` staticmethod or ``generate_vmap_rule =
True``, with PyTorch's errors otherwise.

ddx's vmap runs its function once per sample (pyvmap.py). A vmap staticmethod
``vmap(info, in_dims, *args)`` is run as PyTorch runs it, once, on the whole batch, when the
Function is applied to the samples' slices themselves (``numpy_sort(x)`` inside ``vmap``):
the first sample runs the rule on the batched tensors and each sample takes its slice of the
rule's outputs along their ``out_dims``. Applied to a tensor computed from a slice (found
in its recorded inputs), the rule runs per sample on a batch of one (that tensor with a new
dim 0; ``info.batch_size`` is 1 there). Arguments that do not depend on the vmapped inputs
are not mapped (in_dim None); with none mapped, the Function is applied as outside vmap.
``generate_vmap_rule``: forward per sample, which is what vmapping the forward computes."""

from __future__ import annotations

from typing import Any

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from . import pycalls, pytree
from .pyfunc_jac import DEPTH
from .pyvalues import number_of
from .pyvmapstate import FRAMES, mapped, slice_index

PLAIN = object()  # (apply as outside any transform)
_SEE = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
SETUP = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
         "jacrev, ...), it must override the setup_context staticmethod. " + _SEE)


class VmapInfo:
    """The ``info`` of a vmap staticmethod."""

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size, self.randomness = batch_size, randomness

    def __repr__(self) -> str:
        return f"VmapInfo(batch_size={self.batch_size}, randomness='{self.randomness}')"

    def py_attr(self, ev, node, name: str) -> Any:
        if name in ("batch_size", "randomness"):
            return getattr(self, name)
        raise DdxRuntimeError(f"'VmapInfo' object has no attribute '{name}'")


def under_transforms(ev, node, cls, args: list) -> Any:
    """``cls.apply(*args)`` inside torch.func's transforms: the rule's result, or PLAIN."""
    if not FRAMES and not DEPTH[0]:
        return PLAIN
    if cls.lookup("setup_context") is None:
        raise DdxRuntimeError(SETUP)
    if not FRAMES:
        return PLAIN
    rule = cls.lookup("vmap")
    if rule is None:
        if cls.lookup("generate_vmap_rule") is True:
            return PLAIN
        raise DdxRuntimeError(f"You tried to vmap over {cls.name}, but it does not have vmap "
                              "support. Please override and implement the vmap staticmethod "
                              "or set generate_vmap_rule=True. " + _SEE)
    frame = FRAMES[-1]
    frame.calls += 1
    places = [_place(frame, a) for a in args]
    if all(p is None for p in places):
        return PLAIN  # (nothing of this vmap's in the arguments: PyTorch runs no rule)
    key = (frame.calls, id(cls), tuple(places))
    if "?" in places:  # (a tensor made from a slice: the rule on a batch of one)
        ones = [_unsqueezed(ev, node, a) if p is not None else a for a, p in zip(args, places)]
        out, dims = _rule(ev, node, rule, VmapInfo(1, frame.randomness),
                          [None if p is None else 0 for p in places], ones)
        return _sample_of(ev, node, out, dims, 0, None)
    if frame.index == 0 or key not in frame.rules:
        whole = [a if p is None else frame.flat[p] for a, p in zip(args, places)]
        in_dims = [None if p is None else frame.dims[p] % frame.flat[p].value.ndim
                   for p in places]
        frame.rules[key] = _rule(ev, node, rule, VmapInfo(frame.size, frame.randomness),
                                 in_dims, whole)
    out, dims = frame.rules[key]
    return _sample_of(ev, node, out, dims, frame.index, frame)


def _place(frame, value: Any) -> Any:
    """Which mapped leaf ``value`` is the slice of (its index); "?" for a tensor computed
    from a slice; None for a value that does not depend on one (a number, a leaf passed with
    in_dim None, a tensor made inside the function)."""
    if not isinstance(value, Tensor) or value.weak:
        return None
    k = slice_index(frame, value)
    if k is not None:
        return k
    return "?" if mapped(value, [frame]) else None


def _rule(ev, node, rule, info: VmapInfo, in_dims: list, args: list) -> tuple:
    """The user's vmap staticmethod, run below this vmap (its applies are plain ones)."""
    frame = FRAMES.pop()
    try:
        got = pycalls.call_value(ev, node, rule, [info, tuple(in_dims), *args], {})
    finally:
        FRAMES.append(frame)
    if not isinstance(got, tuple) or len(got) != 2:
        kind = "torch.Tensor" if isinstance(got, Tensor) else type(got).__name__
        raise DdxRuntimeError("Expected the vmap staticmethod to have two returns, an output "
                              "and out_dims with pytree structure compatible with the output. "
                              f"Got a <class '{kind}'> instead")
    return got


def _unsqueezed(ev, node, t: Tensor) -> Tensor:
    return ev.op("select", node, [t], {"key": (None,)})


def _sample_of(ev, node, out: Any, dims: Any, i: int, frame) -> Any:
    """Sample ``i`` of a rule's outputs: each output's index ``i`` along its out_dim (an int
    for all of them, or one per output; None: the output as it is), noted in the ``frame``
    of a whole-batch rule (vmap gives back that output, not a stack of its samples)."""
    leaves, spec = pytree.flatten(out)
    dims = number_of(dims) if isinstance(dims, Tensor) else dims
    per = [dims] * len(leaves) if dims is None or isinstance(dims, int) else \
        [number_of(d) if isinstance(d, Tensor) else d for d in pytree.flatten(dims)[0]]
    if len(per) != len(leaves):
        raise DdxRuntimeError("The vmap staticmethod returned out_dims with a structure that "
                              "does not match its output")
    got = []
    for leaf, d in zip(leaves, per):
        if d is None or not isinstance(leaf, Tensor):
            got.append(leaf)
            continue
        d %= leaf.value.ndim
        got.append(ev.op("select", node, [leaf], {"key": (slice(None),) * d + (i,)}))
        if frame is not None:
            frame.samples[id(got[-1])] = (got[-1], leaf, d, i)
    return pytree.unflatten(got, spec)


__all__ = ["PLAIN", "SETUP", "VmapInfo", "under_transforms"]
