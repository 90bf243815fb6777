"""Python's method resolution order for the user's classes: the C3 linearization, worked out
with an explicit stack (no recursion over a class hierarchy), once per class. A class of the
user's has ``bases``; a builtin base (nn.Module, Function, an exception type) has none of its
own and is its own linearization. super() walks this order from the class after the one
whose method is running, as Python does."""

from __future__ import annotations

from typing import Any


class MroError(TypeError):
    """Bases that no order can keep: Python's TypeError at the class statement."""


def _bases(cls: Any) -> list:
    return list(getattr(cls, "bases", ()) or ()) if hasattr(cls, "scope") else []


def mro(cls: Any) -> list:
    """``cls.__mro__`` as a list (cached on the class: its bases never change)."""
    cached = getattr(cls, "_mro", None)
    if cached is not None:
        return cached
    stack = [(cls, False)]
    while stack:
        c, ready = stack.pop()
        if getattr(c, "_mro", None) is not None or not hasattr(c, "scope"):
            continue
        bases = _bases(c)
        if not ready:
            stack.append((c, True))
            stack.extend((b, False) for b in bases)
            continue
        c._mro = _merge(c, [list(mro_of(b)) for b in bases] + [bases])
    return cls._mro


def mro_of(cls: Any) -> list:
    return cls._mro if hasattr(cls, "scope") else [cls]


def _merge(cls: Any, seqs: list) -> list:
    out = [cls]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return out
        for s in seqs:
            head = s[0]
            if not any(x is head for t in seqs for x in t[1:]):
                break
        else:
            names = ", ".join(getattr(b, "name", str(b)) for b in _bases(cls))
            raise MroError("Cannot create a consistent method resolution\norder (MRO) for "  # (sic)
                           f"bases {names}")
        out.append(head)
        for s in seqs:
            if s[0] is head:
                del s[0]


def after(cls: Any, owner: Any) -> list:
    """The classes super() searches inside a method of ``owner`` called on a ``cls`` object."""
    order = mro(cls)
    for i, c in enumerate(order):
        if c is owner:
            return order[i + 1:]
    return order[1:]


def attr_in(classes: list, name: str) -> Any:
    """The first of these classes that has ``name``: its attribute (None: none has it)."""
    for cls in classes:
        if hasattr(cls, "scope"):
            if name in cls.scope:
                return cls.scope[name]
        elif hasattr(cls, "class_attr"):
            got = cls.class_attr(name)
            if got is not None:
                return got
    return None
