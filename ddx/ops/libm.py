"""The C library's maths functions through ctypes, for the elements ATen's loops hand to it
(scalar tails, cpu_kernel's element-by-element functions): loaded on first use, so a
one-liner never imports ctypes for them; None where the library or the function is absent."""

from __future__ import annotations

_LIB: list = []
_FNS: dict = {}


def function(name: str, single: bool = True):
    """The C library's ``name`` of one float32 (``single``) or float64 argument, or None."""
    key = (name, single)
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
            fn.restype, fn.argtypes = kind, (kind,)
        _FNS[key] = fn
    return _FNS[key]
