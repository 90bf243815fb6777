"""A finished output put in its target's place without ext4's flush: ``os.replace`` over an
existing file makes ext4 (its auto_da_alloc, on by default) write the new file's pages out
there and then, which took 0.56 s of a 10^7-row CSV job's 3 s (760 MB) and 20 ms of a 10^6-row
Parquet job's 0.35 s. Swapping the two names (Linux's renameat2 with RENAME_EXCHANGE) is as
atomic, for a reader the target is the old file or the new one at every moment, and takes no
flush; the old file, now under the temporary name, is then removed. For the outputs that are
not synced anyway (data jobs: they can be made again); elsewhere, or where the file system
cannot swap, os.replace."""

from __future__ import annotations

import os
import sys

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_swap = None  # renameat2, once looked up; False where there is none


def _renameat2():
    global _swap
    if _swap is None:
        _swap = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]
                fn.restype = ctypes.c_int
                _swap = fn
            except (OSError, AttributeError, ImportError):  # (an older C library)
                pass
    return _swap


def exchange(a: str, b: str) -> bool:
    """Swap the files named ``a`` and ``b`` in one step; False (nothing done) where the system
    or the file system cannot, or either is missing."""
    fn = _renameat2()
    if not fn:
        return False
    return fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def replace_unflushed(tmp: str, target: str) -> None:
    """``os.replace(tmp, target)``, by a swap and a removal where a target exists."""
    if os.path.isfile(target) and not os.path.islink(target) and exchange(tmp, target):
        os.unlink(tmp)  # (the old file)
        return
    os.replace(tmp, target)
