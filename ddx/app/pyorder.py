"""Python's ordering of the REPL's values: ``<``/``<=``/``>``/``>=`` on strings, lists and
tuples (item by item, with Python's TypeError between kinds that do not compare), and the
builtins that order: ``sorted``, ``min``/``max`` (with ``key=`` and ``default=``), ``list.sort``,
and ``sum`` with a start value (``sum(lists, [])``)."""

from __future__ import annotations

import operator
from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from . import pycalls, pydunder, pyformat, pysets, pyvalues
from .pyerrors import PyException
from .pyvalues import Instance, iterate, number_of, type_label

ORDER_OPS = frozenset(("<", "<=", ">", ">="))


class _Key:
    """A value Python does not order (None, a tensor of many elements, a function): any
    ordering with it is Python's TypeError, worded with its type's name."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def _refuse(self, other: Any, op: str, mine_first: bool):
        theirs = other.label if isinstance(other, _Key) else type(other).__name__
        left, right = (self.label, theirs) if mine_first else (theirs, self.label)
        raise TypeError(f"'{op}' not supported between instances of '{left}' and '{right}'")

    def __lt__(self, other: Any):
        self._refuse(other, "<", True)

    def __gt__(self, other: Any):  # (other < self, reflected)
        self._refuse(other, "<", False)

    def __le__(self, other: Any):
        self._refuse(other, "<=", True)

    def __ge__(self, other: Any):
        self._refuse(other, "<=", False)


def plain(value: Any) -> Any:
    """``value`` as a Python value that orders as Python orders it: numbers as numbers,
    strings as str, lists and tuples as lists and tuples of these (explicit stack); anything
    else as a _Key that refuses to order."""
    if not isinstance(value, (list, tuple)):
        return _leaf(value)
    root: list = []
    stack = [(value, root)]
    fixups: list = []  # (parent list, index, tuple or list, items): built after the walk
    while stack:
        seq, dest = stack.pop()
        for item in seq:
            if isinstance(item, (list, tuple)):
                sub: list = []
                fixups.append((dest, len(dest), isinstance(item, list), sub))
                dest.append(None)
                stack.append((item, sub))
            else:
                dest.append(_leaf(item))
    for dest, i, is_list, sub in reversed(fixups):  # (innermost last made: first fixed)
        dest[i] = sub if is_list else tuple(sub)
    return root if isinstance(value, list) else tuple(root)


def _leaf(value: Any) -> Any:
    if isinstance(value, str):
        return str(value)
    n = number_of(value)
    if n is None and isinstance(value, Tensor) and value.value.size == 1:
        n = value.value.item()
    return n if n is not None else _Key(type_label(value))


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _python(fn, *args):
    try:
        return fn(*args)
    except TypeError as exc:
        raise DdxTypeError(str(exc)) from None
    except RecursionError:
        raise PyException.error("RecursionError", "maximum recursion depth exceeded in "
                                                  "comparison") from None


def compare(op: str, a: Any, b: Any) -> bool:
    """``a op b`` for an ordering op, as Python orders these values."""
    return _python(_OPS[op], plain(a), plain(b))


def _sort(ev, node, items: list, key: Any, reverse: bool) -> list:
    keys = [plain(k) for k in (items if key is None else
                               [pycalls.call_value(ev, node, key, [i], {}) for i in items])]
    order = _python(lambda: sorted(range(len(items)), key=keys.__getitem__, reverse=reverse))
    return [items[i] for i in order]


def _options(kw: dict, allowed: tuple, what: str) -> dict:
    for name in kw:
        if name not in allowed:
            raise DdxTypeError(f"'{name}' is an invalid keyword argument for {what}()")
    return {name: value for name, (value, _) in kw.items()}


def sorted_(ev, node, args: list, kw: dict) -> list:
    opts = _options(kw, ("key", "reverse"), "sort" if not args else "sorted")
    if len(args) != 1:
        raise DdxTypeError(f"sorted expected 1 argument, got {len(args)}")
    return _sort(ev, node, list(iterate(ev, args[0], node)), opts.get("key"),
                 pyvalues.python_truth(opts.get("reverse", False)))


def sort_list(ev, node, lst: list, args: list, kw: dict) -> None:
    """``xs.sort(key=..., reverse=...)``, in place."""
    if args:
        raise DdxTypeError("sort() takes no positional arguments")
    opts = _options(kw, ("key", "reverse"), "sort")
    lst[:] = _sort(ev, node, list(lst), opts.get("key"),
                   pyvalues.python_truth(opts.get("reverse", False)))


def extreme(pick: str):
    """Python's min/max: of one iterable or of the arguments, with key= and default=; the
    first of equal values wins, as Python's."""
    def call(ev, node, args: list, kw: dict) -> Any:
        opts = _options(kw, ("key", "default"), pick)
        if not args:
            raise DdxTypeError(f"{pick} expected at least 1 argument, got 0")
        items = list(iterate(ev, args[0], node)) if len(args) == 1 else list(args)
        if not items:
            if "default" in opts:
                return opts["default"]
            raise PyException.error("ValueError", f"{pick}() arg is an empty sequence")
        key = opts.get("key")
        keys = [plain(k) for k in (items if key is None else
                                   [pycalls.call_value(ev, node, key, [i], {}) for i in items])]
        best = 0
        for i in range(1, len(items)):
            if _python(operator.lt, keys[best], keys[i]) if pick == "max" else \
                    _python(operator.lt, keys[i], keys[best]):
                best = i
        return items[best]
    return call


def sum_(ev, node, args: list, kw: dict) -> Any:
    """Python's sum(iterable, start=0): ``+`` item by item (lists and tuples too); a string
    start is Python's TypeError."""
    opts = _options(kw, ("start",), "sum")
    start = args[1] if len(args) > 1 else opts.get("start", pyvalues.weak(0))
    if isinstance(start, str):
        raise DdxTypeError("sum() can't sum strings [use ''.join(seq) instead]")
    total = start
    for item in iterate(ev, args[0], node):
        total = pyvalues.binary(ev, node, "+", total, item)
    return total




def python_binary(ev, node, op: str, a: Any, b: Any) -> Any:
    """The surface's Python operators: ordering of strings, lists and tuples here, the rest
    as pyvalues.python_binary does them."""
    if isinstance(a, Instance) or isinstance(b, Instance):
        got = pydunder.binary(ev, node, op, a, b)  # (the user's __add__, __eq__, ...)
        if got is not NotImplemented:
            return got
    if op in ORDER_OPS and (isinstance(a, (str, list, tuple)) or isinstance(b, (str, list, tuple))) \
            and not (isinstance(a, Tensor) and not a.weak or isinstance(b, Tensor) and not b.weak):
        return compare(op, a, b)
    if op == "%" and isinstance(a, str) and isinstance(b, dict):
        return pyformat.percent_mapping(ev, a, b)  # "%(name)s" % {"name": ...}
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return list(a) + list(b)  # (a list literal and a list: a list, as Python's)
    if isinstance(a, (set, frozenset)) or isinstance(b, (set, frozenset)):
        got = pysets.binary(op, a, b)
        if got is not NotImplemented:
            return got
    return pyvalues.python_binary(ev, node, op, a, b)


__all__ = ["ORDER_OPS", "compare", "extreme", "plain", "python_binary", "sort_list", "sorted_",
           "sum_"]
