"""The undo log of one REPL statement: every change it makes to lasting state, so a failure undoes them."""

from __future__ import annotations

from typing import Any

import numpy as np

_MISSING = object()


def _set(obj: Any, attr: str, old: Any) -> None:
    setattr(obj, attr, old)


def _bind(env: dict, name: str, old: Any) -> None:
    if old is _MISSING:
        env.pop(name, None)
    else:
        env[name] = old


def _refill(arr: np.ndarray, old: np.ndarray, _: Any) -> None:
    arr[...] = old


class Journal:
    """What a statement changed, in order; ``rollback`` undoes it all, newest first.

    Only the few places that change lasting state write to it (a binding, ``.grad``,
    ``requires_grad``, a Function's freed flag, an in-place op on a value), each O(1) per
    change (an in-place op also keeps a copy of what it overwrites); a statement that
    succeeds just drops it."""

    __slots__ = ("undo",)

    def __init__(self) -> None:
        self.undo: list[tuple] = []

    def set(self, obj: Any, attr: str, value: Any) -> None:
        """``obj.attr = value``, remembering the old value."""
        self.undo.append((_set, obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    def keep(self, obj: Any, attr: str) -> None:
        """Remember ``obj.attr`` as it is now (before code elsewhere changes it)."""
        self.undo.append((_set, obj, attr, getattr(obj, attr)))

    def bind(self, env: dict, name: str, value: Any) -> None:
        """``env[name] = value``, remembering what the name meant before (or that it was free)."""
        self.undo.append((_bind, env, name, env.get(name, _MISSING)))
        env[name] = value

    def overwrite(self, arr: np.ndarray) -> None:
        """About to change ``arr`` in place: keep a copy of its contents."""
        self.undo.append((_refill, arr, arr.copy(), None))

    def rollback(self) -> None:
        undo = self.undo
        while undo:
            fn, a, b, c = undo.pop()
            fn(a, b, c)
