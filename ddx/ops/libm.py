"""The C library's maths functions through ctypes, for the elements ATen's loops hand to it
(scalar tails, cpu_kernel's element-by-element functions): loaded on first use, so a
one-liner never imports ctypes for them; None where the library or the function is absent."""

from __future__ import annotations

import math

_LIB: list = []
_FNS: dict = {}


def function(name: str, single: bool = True, arity: int = 1):
    """The C library's ``name`` of ``arity`` float32 (``single``) or float64 arguments, or
    None."""
    key = (name, single, arity)
    if key not in _FNS:
        import ctypes

        if not _LIB:
            import ctypes.util

            path = ctypes.util.find_library("m")
            try:
                _LIB.append(ctypes.CDLL(path or "libm.so.6"))
            except OSError:
                _LIB.append(None)
        fn = getattr(_LIB[0], name, None) if _LIB[0] is not None else None
        if fn is not None:
            kind = ctypes.c_float if single else ctypes.c_double
            fn.restype, fn.argtypes = kind, (kind,) * arity
        _FNS[key] = fn
    return _FNS[key]


def c_pow(x: float, y: float) -> float:
    """The C library's pow(double, double) (math.pow, with C's answers where Python raises)."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if x < 0 and _odd(y) else math.inf
    except ValueError:
        if x == 0:
            return math.copysign(math.inf, x) if _odd(y) else math.inf
        return -math.nan  # (x86's default NaN, which the C library's 0/0 gives)


def _odd(y: float) -> bool:
    return math.isfinite(y) and y == int(y) and int(y) % 2 == 1
