"""nn.Module's hooks, as torch/nn/modules/module.py's _call_impl runs them around every call
of the module:

- ``m.register_forward_pre_hook(hook)`` (``hook(module, args)``, which may return new args)
  and ``m.register_forward_hook(hook)`` (``hook(module, args, output)``, which may return a
  new output), in the order registered (``prepend=True`` first);
- ``m.register_full_backward_pre_hook(hook)`` (``hook(module, grad_output)``) and
  ``m.register_full_backward_hook(hook)`` (``hook(module, grad_input, grad_output)``), each
  of which may return a replacement, run during backward (ddx/app/pymodhooks2.py), the hooks
  taken as they were when the module was called;
- ``torch.nn.modules.module.register_module_forward_pre_hook`` / ``_forward_hook`` /
  ``_full_backward_pre_hook`` / ``_full_backward_hook``: the same for every module, run before
  the module's own.

Each is removable through its handle."""

from __future__ import annotations

import itertools
import weakref
from typing import Any

from ..errors import DdxTypeError
from . import pycalls, pymodhooks2, pynn
from .pyhooks import RemovableHandle
from .pymodules import EXTRA, MODULES, Native, PyModule

_KEYS = itertools.count()
_KINDS = ("pre", "post", "bw", "bw_pre")


class Hooks:
    """A module's hooks (or every module's), each kind in the order they run."""

    def __init__(self) -> None:
        self.pre: dict = {}
        self.post: dict = {}
        self.bw: dict = {}  # full backward hooks
        self.bw_pre: dict = {}  # full backward pre-hooks

    def present(self) -> bool:
        return bool(self.pre or self.post or self.bw or self.bw_pre)

    def run(self, ev, node, m: Any, args: list, kw: dict, forward) -> Any:
        every = EVERY
        bw = pymodhooks2.setup(ev, node, m, [*every.bw.values(), *self.bw.values()],
                               [*every.bw_pre.values(), *self.bw_pre.values()])
        for hook in [*every.pre.values(), *self.pre.values()]:
            got = pycalls.call_value(ev, node, hook, [m, tuple(args)], {})
            if got is not None:
                args = list(got) if isinstance(got, tuple) else [got]
        if bw is not None:
            args = bw.setup_input(args)
        out = forward(ev, node, m, args, kw)
        for hook in [*every.post.values(), *self.post.values()]:
            got = pycalls.call_value(ev, node, hook, [m, tuple(args), out], {})
            if got is not None:
                out = got
        if bw is not None:
            out = bw.setup_output(out)
        return out


EVERY = Hooks()  # register_module_*_hook's: every module's
_NONE = Hooks()  # (a module with no hooks of its own, while EVERY has some)


class _Table(weakref.WeakKeyDictionary):
    """pynn.FORWARD_HOOKS: module -> its Hooks; while some hook is every module's, every
    module has hooks (pynn.call_module asks ``FORWARD_HOOKS.get(m) if FORWARD_HOOKS``)."""

    def __bool__(self) -> bool:
        return EVERY.present() or len(self) > 0

    def get(self, key, default=None):
        got = super().get(key, default)
        return _NONE if got is None and EVERY.present() else got


def _add(ev, table: dict, fn, prepend) -> RemovableHandle:
    key = next(_KEYS)
    if prepend is True or getattr(prepend, "value", None) is not None and bool(prepend.value):
        items = list(table.items())
        table.clear()
        table[key] = fn
        table.update(items)
    else:
        table[key] = fn
    return RemovableHandle(ev, lambda ev: table.pop(key, None))


_NAMES = {"pre": "register_forward_pre_hook", "post": "register_forward_hook",
          "bw": "register_full_backward_hook", "bw_pre": "register_full_backward_pre_hook"}


def _register(kind: str):
    backward = kind.startswith("bw")

    def method(ev, node, m: Any, args: list, kw: dict) -> RemovableHandle:
        fn = args[0] if args else kw["hook"][0] if "hook" in kw else None
        prepend = args[1] if backward and len(args) == 2 else kw.get("prepend", (False,))[0]
        if fn is None or len(args) > (2 if backward else 1):
            raise DdxTypeError(f"{_NAMES[kind]}() takes the hook")
        hooks = pynn.FORWARD_HOOKS.setdefault(m, Hooks())
        return _add(ev, getattr(hooks, kind), fn, prepend)
    return method


def _register_every(kind: str):
    name = _NAMES[kind].replace("register_", "register_module_")

    def call(ev, node, args: list, kw: dict) -> RemovableHandle:
        fn = args[0] if args else kw["hook"][0] if "hook" in kw else None
        if fn is None or len(args) > 1:
            raise DdxTypeError(f"{name}() missing 1 required positional argument: 'hook'")
        return _add(ev, getattr(EVERY, kind), fn, False)
    return name, Native(name, call)


def register() -> None:
    if not isinstance(pynn.FORWARD_HOOKS, _Table):
        table = _Table()
        table.update(pynn.FORWARD_HOOKS)
        pynn.FORWARD_HOOKS = table
    for kind in _KINDS:
        pynn.MORE_METHODS[_NAMES[kind]] = _register(kind)
    module = PyModule("torch.nn.modules.module", dict(_register_every(k) for k in _KINDS))
    modules = MODULES.get("torch.nn.modules") or PyModule("torch.nn.modules", {})
    modules.members["module"] = module
    MODULES["torch.nn.modules"] = modules
    MODULES["torch.nn.modules.module"] = module
    EXTRA["torch.nn"].setdefault("modules", modules)


register()

__all__ = ["EVERY", "Hooks"]
