"""Tensor.register_hook in the REPL's Python: the hook runs during backward with the gradient
arriving at the tensor (a leaf's: the sum of all its uses) and may return a replacement, in
registration order; the returned handle's remove() takes it off (engine/reverse.py runs them)."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from ..out.torchfmt import dtype_repr
from .methods import check_kw

_KEYS = itertools.count()
_IDS = itertools.count()  # RemovableHandle.id: PyTorch counts its handles from 0
ACTIVE: list = []  # the evaluators running backward now (a hook prints through the current one)
_TENSOR_TYPES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                 "float16": "torch.HalfTensor"}


def _type_name(dtype: np.dtype) -> str:
    return _TENSOR_TYPES.get(np.dtype(dtype).name, dtype_repr(dtype))


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: remove() takes the hook off (twice is harmless)."""

    def __init__(self, ev, remove) -> None:
        self.ev, self.remove = ev, remove
        self.id = next(_IDS)

    def py_method(self, ev, node, name, args, kw):
        if name != "remove":
            raise DdxTypeError(f"'RemovableHandle' object has no attribute '{name}'")
        check_kw(node, kw, ())
        self.remove(ev)
        return None

    def py_attr(self, ev, node, name):
        if name == "id":
            return self.id
        raise DdxTypeError(f"'RemovableHandle' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {self.ev.addresses.of(self)}>"


def hook_name(fn) -> str:
    return str(getattr(fn, "name", None) or type(fn).__name__)


def current(ev):
    """The evaluator a hook runs under: the one running backward now, else ``ev``."""
    return ACTIVE[-1] if ACTIVE else ev


def grad_tensor(g: np.ndarray) -> Tensor:
    """A gradient as the tensor a hook is handed."""
    grad = Tensor(g)
    grad.label = "grad"
    return grad


def checked_value(fn, value: np.ndarray, g: np.ndarray) -> np.ndarray:
    """What a hook returned in place of ``g``, with PyTorch's size and type checks."""
    if value.shape != g.shape:
        raise DdxRuntimeError(f"hook '{hook_name(fn)}' has changed the size of value")
    if value.dtype != g.dtype:
        raise DdxRuntimeError(
            f"hook '{hook_name(fn)}' has changed the type of value (was "
            f"{_type_name(g.dtype)} got {_type_name(value.dtype)})")
    return value


def wrap(ev, node, fn):
    """The user's hook as the engine calls it: numpy gradient in, numpy gradient (or None)
    out, with PyTorch's checks on what the hook returned."""
    from .pycalls import call_value

    def hook(g: np.ndarray):
        got = call_value(current(ev), node, fn, [grad_tensor(g)], {})
        if got is None:
            return None
        if not isinstance(got, Tensor) or got.weak:
            kind = "float" if isinstance(got, Tensor) and got.value.dtype.kind == "f" else \
                "int" if isinstance(got, (int, Tensor)) else type(got).__name__
            raise DdxTypeError(f"expected Variable, but hook returned '{kind}'")
        return checked_value(fn, got.value, g)
    return hook


def add_hook(ev, t: Tensor, hook):
    """``hook(grad)`` among t's tensor hooks; returns remove(ev), which takes it off."""
    key = next(_KEYS)
    if ev.journal is not None:
        ev.journal.keep(t, "hooks")
    t.hooks = {**(t.hooks or {}), key: hook}  # a new dict: the journal keeps the old
    Tensor.hooked += 1

    def remove(ev) -> None:
        if t.hooks and key in t.hooks:
            if ev.journal is not None:
                ev.journal.keep(t, "hooks")
            t.hooks = {k: v for k, v in t.hooks.items() if k != key} or None
    return remove


def m_register_hook(ev, node, t: Tensor, args, kw):
    check_kw(node, kw, ("hook",))
    fn = args[0] if args else kw["hook"][0] if "hook" in kw else None
    if fn is None:
        raise DdxTypeError("register_hook() missing 1 required positional argument: 'hook'")
    if not t.requires_grad:
        raise DdxRuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return RemovableHandle(ev, add_hook(ev, t, wrap(ev, node, fn)))


@contextlib.contextmanager
def running(ev):
    """Backward runs under ``ev``: the hooks it calls print and warn through it."""
    ACTIVE.append(ev)
    try:
        yield
    finally:
        ACTIVE.pop()


def _with_hooks(method):
    def run(ev, node, t, args, kw):
        with running(ev):
            return method(ev, node, t, args, kw)
    return run


def register() -> None:
    from .methods import TENSOR_METHODS

    TENSOR_METHODS.setdefault("register_hook", m_register_hook)
    TENSOR_METHODS["backward"] = _with_hooks(TENSOR_METHODS["backward"])


register()

__all__ = ["RemovableHandle", "add_hook", "checked_value", "current", "grad_tensor",
           "hook_name", "m_register_hook"]
