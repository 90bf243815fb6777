"""A module's extra_repr(), the line its print puts inside the parentheses (or the lines
above its children): ddx's own modules', or a user class's own method's, called as Python
calls it."""

from __future__ import annotations

from typing import Any

from ..lang.tree import Ast
from .pyvalues import BoundMethod, Instance


def extra_repr(ev, mod: Any) -> str:
    """A module's extra_repr(): ddx's own modules', or a user class's own method's."""
    if not isinstance(mod, Instance):
        return mod.extra()
    method = mod.cls.lookup("extra_repr")
    if ev is None or method is None:
        return ""
    from .pycalls import call_value
    from .pyvalues import to_str

    spot = Ast("name", "extra_repr", (), (), 0, 0)
    return to_str(ev, call_value(ev, spot, BoundMethod(method, mod), [], {}))


__all__ = ["extra_repr"]
