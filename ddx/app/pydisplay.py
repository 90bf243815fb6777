"""Two Python expressions with effects of their own: a dict display with ``**`` mappings
merged in their place (``{**defaults, "lr": 0.1}``) and the walrus ``(name := value)``,
which binds where the expression runs, in a comprehension the scope around it (PEP 572)."""

from __future__ import annotations

from typing import Any

from ..graph.values import Starred
from . import pysets
from .pyerrors import PyException
from .pyvalues import Scope, type_label


def dict_display(values: list) -> dict:
    """{k: v, **m, ...} from its values in order: key and value, or one Starred mapping."""
    out: dict = {}
    i = 0
    while i < len(values):
        if type(values[i]) is Starred:
            mapping = values[i].value
            if not isinstance(mapping, dict):
                raise PyException.error("TypeError", f"'{type_label(mapping)}' object is not "
                                        "a mapping")
            out.update(mapping)
            i += 1
        else:
            out[pysets.member(values[i])] = values[i + 1]
            i += 2
    return out


def walrus(ev, name: str, value: Any) -> Any:
    env = ev.env
    while getattr(env, "comprehension", False):
        env = env.outer
    if ev.journal is not None and not isinstance(env, Scope):
        ev.journal.bind(env, name, value)
    else:
        env[name] = value
    return value


__all__ = ["dict_display", "walrus"]
