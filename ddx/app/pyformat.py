"""str.format as Python's: ``{}``, ``{0}``, ``{name}``, items and attributes in the field
(``{0[1]}``, ``{p[name]}``, ``{t.shape}``; no dunder attributes), conversions, and specs
that hold fields themselves (``{:>{width}}``, one level deep, as Python allows); and ``%``
with a mapping (``"%(name)s" % {"name": ...}``)."""

from __future__ import annotations

import string
from typing import Any

from ..errors import DdxTypeError, DdxValueError
from ..lang.tree import Ast
from . import pypercent, pyvalues
from .pyerrors import PyException
from .pyvalues import number_of, to_str
from .values import Str

_FORMATTER = string.Formatter()


def _field(ev, node, field: str, args: list, kw: dict, auto: list) -> Any:
    """The value a replacement field names. ``auto`` counts the automatic fields ({})."""
    first, rest = _split(field)
    if first == "":
        if auto[1]:
            raise PyException.error("ValueError", "cannot switch from manual field "
                                                  "specification to automatic field numbering")
        first, auto[0] = auto[0], auto[0] + 1
    elif isinstance(first, int):
        auto[1] = True
    if isinstance(first, int):
        if first >= len(args):
            raise PyException.error("IndexError", f"Replacement index {first} out of range for "
                                                  f"positional args tuple")
        value = args[first]
    else:
        if first not in kw:
            exc = PyException.error("KeyError", f"KeyError: {first!r}")
            raise exc
        value = kw[first][0]
    for is_attr, key in rest:
        if is_attr:
            if key.startswith("__"):
                raise DdxTypeError(f"'{key}' is not available in ddx (no dunder attributes)")
            value = ev.surface.get_attr(ev, Ast("attr", key, (), (), node.start, node.end,
                                                node.pos), value)
        else:
            value = _item(value, key)
    return value


def _split(field: str) -> tuple:
    """A field name's first part (an int for digits) and its [key]/.attr steps, as Python
    splits them (a [key] of digits is an int, any other a str)."""
    cut = len(field)
    for c in ".[":
        at = field.find(c)
        if at != -1:
            cut = min(cut, at)
    first: Any = field[:cut]
    first = int(first) if first.isdigit() else first
    rest, i = [], cut
    while i < len(field):
        if field[i] == ".":
            j = i + 1
            while j < len(field) and field[j] not in ".[":
                j += 1
            if j == i + 1:
                raise PyException.error("ValueError", "Empty attribute in format string")
            rest.append((True, field[i + 1:j]))
        elif field[i] == "[":
            j = field.find("]", i)
            if j == -1:
                raise PyException.error("ValueError", "Missing ']' in format string")
            key = field[i + 1:j]
            rest.append((False, int(key) if key.isdigit() else key))
            j += 1
        else:
            raise PyException.error("ValueError", "Only '.' or '[' may follow ']' in format "
                                                  "field specifier")
        i = j
    return first, rest


def _item(value: Any, key: Any) -> Any:
    if isinstance(value, dict):
        if key not in value:
            raise PyException.error("KeyError", f"KeyError: {key!r}")
        return value[key]
    if isinstance(value, (list, tuple, str)) and isinstance(key, int):
        if not -len(value) <= key < len(value):
            kind = "string" if isinstance(value, str) else pyvalues.type_label(value)
            raise PyException.error("IndexError", f"{kind} index out of range")
        got = value[key]
        return Str(got) if isinstance(got, str) else got
    raise DdxTypeError(f"'{pyvalues.type_label(value)}' object is not subscriptable with "
                       f"{key!r} in a format field")


def str_format(ev, node, text: str, args: list, kw: dict, auto: list | None = None,
               depth: int = 0) -> str:
    """``text.format(*args, **kw)`` as Python formats it."""
    auto = [0, False] if auto is None else auto
    if depth > 1:
        raise PyException.error("ValueError", "Max string recursion exceeded")
    out = []
    try:
        parts = list(_FORMATTER.parse(text))
    except ValueError as exc:
        raise PyException.error("ValueError", str(exc)) from None
    for literal, field, spec, conv in parts:
        out.append(literal)
        if field is None:
            continue
        value = _field(ev, node, field, args, kw, auto)
        if spec and "{" in spec:
            spec = str_format(ev, node, spec, args, kw, auto, depth + 1)
        if conv not in (None, "r", "s", "a"):
            raise PyException.error("ValueError", f"Unknown conversion specifier {conv}")
        out.append(pyvalues.format_value(ev, value, conv, spec or ""))
    return "".join(out)


def percent_mapping(ev, text: str, mapping: dict) -> Str:
    """``"%(name)s ..." % {...}``: the values as Python's numbers and strings."""
    plain = {k: pypercent.arg(v, number_of(v), lambda t: to_str(ev, t))
             for k, v in mapping.items()}
    try:
        return Str(text % plain)
    except KeyError as exc:
        raise PyException.error("KeyError", f"KeyError: {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise DdxValueError(str(exc)) from None


__all__ = ["percent_mapping", "str_format"]
