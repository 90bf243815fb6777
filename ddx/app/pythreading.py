"""``import threading`` for the autograd notes' multithreading example: ``Thread(target=fn,
args=(), kwargs=None)`` whose ``start()`` runs ``fn`` at once, to its end, in the calling
thread (ddx interprets one statement at a time: the threads' work is done one after another,
in the order they are started, so a script's output is the same on every run), ``join()``
(nothing left to wait for), ``is_alive()``, and ``Lock()``/``RLock()`` usable as ``with``
blocks. Nothing else of the module is reachable."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from .pyerrors import PyException
from .pymodules import MODULES, Native, PyModule


class Thread:
    """A thread whose target runs when it is started."""

    def __init__(self, ev, target: Any, args: tuple, kwargs: dict, name: str) -> None:
        self.target, self.args, self.kwargs, self.name = target, args, kwargs, name
        self.started = False
        self.address = ev.addresses.of(self)

    def __repr__(self) -> str:
        state = "stopped" if self.started else "initial"
        return f"<Thread({self.name}, {state})>"

    def py_attr(self, ev, node, name):
        if name == "name":
            return self.name
        if name in ("start", "join", "is_alive", "run"):
            return Native(name, lambda ev, node, args, kw: self.py_method(ev, node, name,
                                                                          args, kw))
        raise PyException.error("AttributeError", f"'Thread' object has no attribute '{name}'")

    def py_method(self, ev, node, name, args, kw):
        from .pycalls import call_value

        if name in ("start", "run"):
            if name == "start" and self.started:
                raise PyException.error("RuntimeError", "threads can only be started once")
            self.started = True
            if self.target is not None:
                call_value(ev, node, self.target, list(self.args),
                           {k: (v, None) for k, v in self.kwargs.items()})
            return None
        if name == "join":
            if not self.started:
                raise PyException.error("RuntimeError", "cannot join thread before it is "
                                        "started")
            return None
        if name == "is_alive":
            return False
        return self.py_attr(ev, node, name)


_COUNT = [0]


def _thread(ev, node, args: list, kw: dict) -> Thread:
    if args:
        raise DdxTypeError("Thread() takes keyword arguments: Thread(target=fn, args=(...))")
    for name in kw:
        if name not in ("target", "args", "kwargs", "name", "daemon", "group"):
            raise DdxTypeError(f"Thread.__init__() got an unexpected keyword argument '{name}'")
    given = {k: v for k, (v, _) in kw.items()}
    _COUNT[0] += 1
    target = given.get("target")
    label = f" ({target.name})" if getattr(target, "name", None) else ""
    name = given.get("name") or f"Thread-{_COUNT[0]}{label}"
    extra = given.get("kwargs") or {}
    return Thread(ev, target, tuple(given.get("args") or ()), dict(extra), str(name))


class Lock:
    """Lock()/RLock(): ``with lock:`` and acquire()/release() (one thread runs at a time)."""

    def __repr__(self) -> str:
        return "<unlocked _thread.lock object>"

    def py_enter(self, ev) -> bool:
        return True

    def py_exit(self, ev) -> None:
        return None

    def py_method(self, ev, node, name, args, kw):
        if name == "acquire":
            return True
        if name == "release":
            return None
        raise PyException.error("AttributeError", f"'_thread.lock' object has no attribute "
                                f"'{name}'")


def register() -> None:
    MODULES.setdefault("threading", PyModule("threading", {
        "Thread": Native("Thread", _thread),
        "Lock": Native("Lock", lambda ev, node, args, kw: Lock()),
        "RLock": Native("RLock", lambda ev, node, args, kw: Lock())}))


register()

__all__ = ["Lock", "Thread"]
