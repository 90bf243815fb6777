"""nn.Module's forward hooks: ``m.register_forward_pre_hook(hook)`` (``hook(module, args)``,
which may return new args) and ``m.register_forward_hook(hook)`` (``hook(module, args,
output)``, which may return a new output), run in the order registered (``prepend=True``
first) around every call of the module, each removable through its handle."""

from __future__ import annotations

import itertools
from typing import Any

from ..errors import DdxTypeError
from . import pycalls, pynn
from .pyhooks import RemovableHandle

_KEYS = itertools.count()


class Hooks:
    """A module's forward hooks, in the order they run."""

    def __init__(self) -> None:
        self.pre: dict = {}
        self.post: dict = {}

    def run(self, ev, node, m: Any, args: list, kw: dict, forward) -> Any:
        for hook in list(self.pre.values()):
            got = pycalls.call_value(ev, node, hook, [m, tuple(args)], {})
            if got is not None:
                args = list(got) if isinstance(got, tuple) else [got]
        out = forward(ev, node, m, args, kw)
        for hook in list(self.post.values()):
            got = pycalls.call_value(ev, node, hook, [m, tuple(args), out], {})
            if got is not None:
                out = got
        return out


def _register(kind: str):
    def method(ev, node, m: Any, args: list, kw: dict) -> RemovableHandle:
        if len(args) != 1:
            raise DdxTypeError(f"register_forward{'_pre' if kind == 'pre' else ''}_hook() takes "
                               "the hook")
        hooks = pynn.FORWARD_HOOKS.setdefault(m, Hooks())
        table = hooks.pre if kind == "pre" else hooks.post
        key = next(_KEYS)
        prepend = kw.get("prepend", (False,))[0]
        if prepend is True or getattr(prepend, "value", None) is not None and bool(prepend.value):
            items = list(table.items())
            table.clear()
            table[key] = args[0]
            table.update(items)
        else:
            table[key] = args[0]
        return RemovableHandle(ev, lambda ev: table.pop(key, None))
    return method


def register() -> None:
    pynn.MORE_METHODS["register_forward_pre_hook"] = _register("pre")
    pynn.MORE_METHODS["register_forward_hook"] = _register("post")


register()

__all__ = ["Hooks"]
