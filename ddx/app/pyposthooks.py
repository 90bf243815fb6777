"""Tensor.register_post_accumulate_grad_hook(hook): on a leaf, ``hook(leaf)`` runs once its
.grad holds what this backward accumulated (grad mode off, as PyTorch's engine runs it), in
the order the backward pass reached the leaves. A marker among the leaf's ordinary hooks notes
that the pass reached it; the hooks run when the backward call returns (ddx accumulates into
.grad as it goes, so each leaf's .grad is complete by then)."""

from __future__ import annotations

import itertools
import weakref

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from .methods import check_kw

_KEYS = itertools.count(1 << 40)
POST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # leaf -> {key: hook}
REACHED: list[list] = []  # per backward call running now: the leaves reached, in order


class PostHandle:
    """The RemovableHandle of a post-accumulate hook."""

    def __init__(self, ev, tensor: Tensor, key: int) -> None:
        self.ev, self.tensor, self.key = ev, weakref.ref(tensor), key

    def py_method(self, ev, node, name, args, kw):
        if name != "remove":
            raise DdxTypeError(f"'RemovableHandle' object has no attribute '{name}'")
        check_kw(node, kw, ())
        t = self.tensor()
        if t is not None and t in POST:
            POST[t].pop(self.key, None)
        return None

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {self.ev.addresses.of(self)}>"


def _marker(t: Tensor):
    ref = weakref.ref(t)

    def hook(g):
        if REACHED and ref() is not None:
            REACHED[-1].append(ref())
        return None
    return hook


def m_register_post_accumulate_grad_hook(ev, node, t: Tensor, args, kw):
    check_kw(node, kw, ("hook",))
    fn = args[0] if args else kw["hook"][0] if "hook" in kw else None
    if fn is None:
        raise DdxTypeError("register_post_accumulate_grad_hook() missing 1 required positional "
                           "argument: 'hook'")
    if not t.requires_grad:
        raise DdxRuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not t.is_leaf:
        raise DdxRuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                              "tensors")
    if t not in POST:
        POST[t] = {}
        if ev.journal is not None:
            ev.journal.keep(t, "hooks")
        t.hooks = {**(t.hooks or {}), next(_KEYS): _marker(t)}
        Tensor.hooked += 1
    key = next(_KEYS)
    POST[t][key] = fn
    return PostHandle(ev, t, key)


def _run_post(ev, node, reached: list) -> None:
    from .pycalls import call_value

    seen: set = set()
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        for t in reached:
            if id(t) in seen:
                continue
            seen.add(id(t))
            for fn in list(POST.get(t, {}).values()):
                call_value(ev, node, fn, [t], {})
    finally:
        record.GRAD_MODE.enabled = before


def with_post_hooks(method):
    """``method`` (x.backward or torch.autograd.backward), then the post-accumulate hooks of
    the leaves it reached."""
    def run(ev, node, *rest):
        if not POST:
            return method(ev, node, *rest)
        REACHED.append([])
        try:
            result = method(ev, node, *rest)
        finally:
            reached = REACHED.pop()
        _run_post(ev, node, reached)
        return result
    return run


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    TENSOR_METHODS.setdefault("register_post_accumulate_grad_hook",
                              m_register_post_accumulate_grad_hook)
    TENSOR_METHODS["backward"] = with_post_hooks(TENSOR_METHODS["backward"])
    autograd = EXTRA["torch.autograd"]
    if "backward" in autograd:
        autograd["backward"] = Native("backward", with_post_hooks(autograd["backward"].fn))


register()

__all__ = ["PostHandle", "m_register_post_accumulate_grad_hook"]
