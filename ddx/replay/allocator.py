"""glibc's allocator kept from mapping fresh memory for every large array (DDX_MALLOC).

glibc gives an allocation over its mmap threshold (128 KiB at first, rising to at most 32 MiB
as such blocks are freed) pages of its own, and unmaps them when it is freed; it also gives
back the top of its heap once more than the trim threshold is free there. A replay of arrays
of 10^5 elements and more allocates its gradients afresh on every call (the caller keeps
them), so each call faults in and zeroes new pages: 358 page faults per call at 10^5 and
2,252 at 10^6 for ``sum((w*x+b)^2)``, most of the time of the call. With both thresholds
raised, memory freed by one call is reused by the next, as it is for small arrays.

``tune()`` raises them once per process, at the first replay of arrays that large (or of
arrays that together pass the trim threshold: ``worth_it``): never for a one-liner of
numbers, and never when the user tuned the allocator (any ``MALLOC_*`` or
``GLIBC_TUNABLES`` variable set) or set ``DDX_MALLOC=default``; only on glibc. The cost: up to
TRIM bytes freed at the top of the heap stay with the process for the next call instead of
going back to the system (bench/RESULTS.md has the measurements, both ways)."""

from __future__ import annotations

import os
import sys

MMAP = 1 << 30  # bytes: allocations up to 1 GiB come from the heap
TRIM = 1 << 30  # bytes free at the heap's top before any is returned to the system

DEFAULT_TRIM = 128 << 10  # glibc's trim threshold until something moves it
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (malloc.h)
_done: list[bool] = []


def worth_it(shapes: list) -> bool:
    """Whether a replay's arrays (``(shape, dtype)`` per node) together pass glibc's default
    trim threshold: then each call would give the heap's top back and fault it in again
    (85 page faults a call for ``sum((w*x+b)^2)`` at 10^4 elements, 4x its time)."""
    total = 0
    for shape, dtype in shapes:
        size = dtype.itemsize
        for d in shape:
            size *= d
        total += size
        if total >= DEFAULT_TRIM:
            return True
    return False


def wanted(environ=os.environ) -> bool:
    """Whether this process should tune the allocator (see the module's docstring)."""
    if environ.get("DDX_MALLOC", "").strip().lower() == "default":
        return False
    if "GLIBC_TUNABLES" in environ or any(k.startswith("MALLOC_") for k in environ):
        return False
    return sys.platform.startswith("linux")


def tune() -> bool:
    """Raise glibc's mmap and trim thresholds, once; whether they are raised."""
    if _done:
        return _done[0]
    ok = False
    if wanted():
        try:
            if os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
                import ctypes

                libc = ctypes.CDLL(None)
                # (setting either also stops glibc moving the mmap threshold itself)
                ok = bool(libc.mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(TRIM))) and \
                    bool(libc.mallopt(_M_MMAP_THRESHOLD, ctypes.c_int(MMAP)))
        except (OSError, AttributeError, ValueError, TypeError):
            ok = False
    _done.append(ok)
    return ok
