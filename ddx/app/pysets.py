"""Python's sets in the REPL: ``set(iterable)``, ``{a, b}`` displays and comprehensions
(pyexpr), their methods and operators (``|``, ``&``, ``-``, ``^``, ``<=``, ``<``, ``==``).
A set holds Python values: ddx's numbers by their value (2 and 2.0 are one member, as in
Python), strings, tuples of those; a tensor is hashed by identity, as Python's."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from .pyerrors import PyException
from .pyvalues import iterate, number_of, type_label
from .values import DictView


def member(value: Any) -> Any:
    """A set item or dict key: a number by its value, a tuple by its members'."""
    n = number_of(value)
    if n is not None:
        return n
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(member(v) for v in value)
    if isinstance(value, (list, dict, set)):
        raise DdxTypeError(f"unhashable type: '{type_label(value)}'")
    return value


def make(ev, node, args: list, kw: dict) -> set:
    """The builtin set(iterable=())."""
    if kw:
        raise DdxTypeError("set() takes no keyword arguments")
    if len(args) > 1:
        raise DdxTypeError(f"set expected at most 1 argument, got {len(args)}")
    return {member(v) for v in iterate(ev, args[0], node)} if args else set()


def _others(ev, node, args: list) -> list[set]:
    return [a if isinstance(a, (set, frozenset)) else {member(v) for v in iterate(ev, a, node)}
            for a in args]


_RETURNING = {"union": set.union, "intersection": set.intersection,
              "difference": set.difference, "symmetric_difference": set.symmetric_difference}
_TESTS = {"issubset": set.issubset, "issuperset": set.issuperset,
          "isdisjoint": set.isdisjoint}
_UPDATING = {"update": set.update, "intersection_update": set.intersection_update,
             "difference_update": set.difference_update,
             "symmetric_difference_update": set.symmetric_difference_update}
NAMES = ("add", "discard", "remove", "pop", "clear", "copy", *_RETURNING, *_TESTS, *_UPDATING)


def method(ev, node, obj: set, name: str, args: list, kw: dict) -> Any:
    """s.name(...) for a set."""
    if name in _RETURNING:
        return _RETURNING[name](obj, *_others(ev, node, args))
    if name in _TESTS and len(args) == 1:
        return _TESTS[name](obj, _others(ev, node, args)[0])
    if name in _UPDATING:
        _journal(ev, obj)
        _UPDATING[name](obj, *_others(ev, node, args))
        return None
    if name == "copy" and not args:
        return set(obj)
    if name in ("add", "discard", "remove") and len(args) == 1:
        _journal(ev, obj)
        item = member(args[0])
        if name == "remove" and item not in obj:
            raise PyException.error("KeyError", ev.surface.show(ev, args[0]))
        obj.add(item) if name == "add" else obj.discard(item)
        return None
    if name in ("pop", "clear") and not args:
        _journal(ev, obj)
        if name == "clear":
            obj.clear()
            return None
        if not obj:
            raise PyException.error("KeyError", "'pop from an empty set'")
        return obj.pop()
    raise PyException.error("AttributeError", f"'set' object has no attribute '{name}'")


def update_in_place(ev, obj: set, op: str, other) -> None:
    """``s |= t``, ``s &= t``, ``s -= t``: Python's in-place set operators."""
    _journal(ev, obj)
    {"|": set.update, "&": set.intersection_update, "-": set.difference_update}[op](obj, other)


def _journal(ev, obj: set) -> None:
    """A set changed in place: undone with the statement if it fails (Ctrl-C)."""
    if ev.journal is not None:
        ev.journal.undo.append((_refill, obj, set(obj), None))


def _refill(obj: set, old: set, _: Any) -> None:
    obj.clear()
    obj.update(old)


_OPERATORS = {"|": set.__or__, "&": set.__and__, "-": set.__sub__, "^": set.__xor__,
              "<=": set.__le__, "<": set.__lt__, ">=": set.__ge__, ">": set.__gt__,
              "==": set.__eq__, "!=": set.__ne__}


def binary(op: str, a: Any, b: Any) -> Any:
    """An operator with a set on either side; NotImplemented where Python has none."""
    if isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)) and op in _OPERATORS:
        return _OPERATORS[op](a, b)
    if op in ("==", "!=") and not isinstance(a, DictView) and not isinstance(b, DictView):
        return op == "!="  # (a set equals no list, tuple or number; a dict's keys: pyvalues)
    return NotImplemented
