"""Pause the cyclic garbage collector while building large graphs (full passes are O(live objects))."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
