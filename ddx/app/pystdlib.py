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
from .pymodules import MODULES, Native, PyModule
from .pyvalues import number_of
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
    MODULES.setdefault("__future__", PyModule("__future__", {
        name: _Feature(name) for name in ("print_function", "division", "absolute_import",
                                          "unicode_literals", "with_statement", "generators",
                                          "nested_scopes", "annotations")}))


register()

__all__ = ["MAX_SLEEP"]
