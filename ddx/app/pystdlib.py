"""The bits of the standard library tutorials' scripts use around their autograd code:
``time`` and ``timeit`` (the clocks, to time a loop), ``__name__`` (``"__main__"``, so the
``if __name__ == "__main__":`` of a script runs), ``id(x)`` (to show that an in-place op
keeps the object), ``from __future__ import print_function`` (nothing to do in Python 3), and
``matplotlib``: its import succeeds (a tutorial imports pyplot at the top and may never draw)
and any call of it fails in one clear line, since ddx does not draw with matplotlib."""

from __future__ import annotations

import time

from ..errors import DdxRuntimeError
from .pybuiltins import BUILTINS
from .pyerrors import PyException
from .pymodules import MODULES, Native, PyModule
from .pyvalues import iterate, number_of, type_label
from .values import Str

MAX_SLEEP = 10.0  # seconds: a script's time.sleep is honoured up to this


def _clock(fn, name: str) -> Native:
    def call(ev, node, args, kw):
        if args or kw:
            raise DdxRuntimeError(f"{name}() takes no arguments ({len(args) + len(kw)} given)")
        got = fn()
        return got if isinstance(got, int) else float(got)
    return Native(name, call)


def _sleep(ev, node, args, kw):
    seconds = number_of(args[0]) if len(args) == 1 and not kw else None
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise DdxRuntimeError("sleep() takes one non-negative number of seconds")
    time.sleep(min(float(seconds), MAX_SLEEP))
    return None


def _id(ev, node, args, kw):
    if len(args) != 1 or kw:
        raise DdxRuntimeError(f"id() takes exactly one argument ({len(args)} given)")
    return id(args[0])


class _DictType(Native):
    """``dict``: called, a dict; ``dict.fromkeys(keys, value=None)``."""

    def py_attr(self, ev, node, name: str):
        if name != "fromkeys":
            raise DdxRuntimeError(f"type object 'dict' has no attribute '{name}'")
        return Native("fromkeys", lambda ev, node, args, kw: dict.fromkeys(
            [_key(k) for k in iterate(ev, args[0], node)], args[1] if len(args) > 1 else None))

    def py_method(self, ev, node, name: str, args: list, kw: dict):
        return self.py_attr(ev, node, name).fn(ev, node, args, kw)


def _key(k):
    return Str(k) if isinstance(k, str) and not isinstance(k, Str) else k


def _char(fn, name: str) -> Native:
    """chr, ord, bin, oct, hex: Python's, on ints and one-character strings."""
    def call(ev, node, args, kw):
        if len(args) != 1 or kw:
            raise DdxRuntimeError(f"{name}() takes exactly one argument ({len(args)} given)")
        value = args[0] if name == "ord" else number_of(args[0])
        if name == "ord" and not (isinstance(value, str) and len(value) == 1):
            raise PyException.error("TypeError", "ord() expected a character")
        if name != "ord" and (not isinstance(value, int) or isinstance(value, bool)):
            raise PyException.error("TypeError", f"'{type_label(args[0])}' object cannot be "
                                    "interpreted as an integer")
        got = fn(str(value) if name == "ord" else value)
        return Str(got) if isinstance(got, str) else got
    return Native(name, call)


class _Feature:
    """A __future__ feature (Python 3 has them all)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"_Feature({self.name})"


class _Drawing(dict):
    """A matplotlib module's members: every name is there, and calling it is ddx's error."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and not name.startswith("__")

    def __missing__(self, name: str) -> Native:
        shown = {"matplotlib.pyplot": "plt", "matplotlib.ticker": "ticker"}.get(self.path,
                                                                                self.path)

        def call(ev, node, args, kw):
            raise DdxRuntimeError(f"ddx does not draw with matplotlib: {shown}.{name}(...) is "
                                  "not available (ddx plot draws a function's curves)")
        return Native(f"{self.path}.{name}", call)


def register() -> None:
    clocks = {name: _clock(getattr(time, name), name)
              for name in ("time", "perf_counter", "monotonic", "process_time", "time_ns",
                           "perf_counter_ns")}
    MODULES.setdefault("time", PyModule("time", {**clocks, "sleep": Native("sleep", _sleep)}))
    MODULES.setdefault("timeit", PyModule("timeit", {
        "default_timer": _clock(time.perf_counter, "default_timer")}))
    pyplot = PyModule("matplotlib.pyplot", _Drawing("matplotlib.pyplot"))
    ticker = PyModule("matplotlib.ticker", _Drawing("matplotlib.ticker"))
    MODULES.setdefault("matplotlib", PyModule("matplotlib", {"pyplot": pyplot, "ticker": ticker}))
    MODULES.setdefault("matplotlib.pyplot", pyplot)
    MODULES.setdefault("matplotlib.ticker", ticker)
    BUILTINS.setdefault("__name__", Str("__main__"))
    BUILTINS.setdefault("id", Native("id", _id))
    BUILTINS["dict"] = _DictType("dict", BUILTINS["dict"] if not isinstance(
        BUILTINS["dict"], Native) else BUILTINS["dict"].fn)
    for fn in (chr, ord, bin, oct, hex):
        BUILTINS.setdefault(fn.__name__, _char(fn, fn.__name__))
    MODULES.setdefault("__future__", PyModule("__future__", {
        name: _Feature(name) for name in ("print_function", "division", "absolute_import",
                                          "unicode_literals", "with_statement", "generators",
                                          "nested_scopes", "annotations")}))


register()

__all__ = ["MAX_SLEEP"]
