"""Large elementwise numpy calls split over threads, as PyTorch's intra-op threads do.

numpy releases the GIL inside its loops, so a call over 10^7 elements can run as blocks on
every core. Only elementwise calls are split, at block edges that are multiples of 64
elements (SIMD loops see the same elements side by side), so every element is computed by
the same code as in one call: the results are the same bits. Each block runs in a copy of
the caller's context, so numpy's errstate (ddx's floating-point event hook) applies there too.

``DDX_NUM_THREADS`` sets the number of threads (1: never split); by default, the CPUs this
process may run on, at most 8.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable

import numpy as np

# elements: below this, handing a block to a thread costs what it saves (measured here: a
# multiply of 2^19 elements split in two took 260 µs against 208 whole; of 10^6, 564 vs 844)
MIN_SIZE = 750_000
_EDGE = 64

_threads: int | None = None
_pool = None
_pool_pid = 0  # the process that made the pool: a forked child makes its own


def threads() -> int:
    global _threads
    if _threads is None:
        text = os.environ.get("DDX_NUM_THREADS", "").strip()
        try:
            n = int(text) if text else len(os.sched_getaffinity(0))
        except (ValueError, AttributeError):  # (no sched_getaffinity outside Linux)
            n = os.cpu_count() or 1
        _threads = max(1, min(n, 8))
    return _threads


def set_threads(n: int) -> None:
    """Use ``n`` threads from now on (tests compare 1 with several)."""
    global _threads, _pool
    if _pool is not None:
        _pool.shutdown()
        _pool = None
    _threads = max(1, int(n))


def run_all(tasks: list[Callable]) -> list:
    """Every task's result, in order: the first on this thread, the others on the pool."""
    global _pool, _pool_pid
    if len(tasks) == 1 or threads() == 1:  # (one thread: in order, on this one; a caller
        return [task() for task in tasks]  # may make more tasks than ddx has threads)
    if _pool is None or _pool_pid != os.getpid():  # (a fork copies the pool, not its threads)
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(threads() - 1, thread_name_prefix="ddx")
        _pool_pid = os.getpid()
    futures = [_pool.submit(contextvars.copy_context().run, task) for task in tasks[1:]]
    first = tasks[0]()
    return [first] + [f.result() for f in futures]


def _flat(a, shape: tuple):
    """``a`` as one row of its elements when it is a whole array of ``shape`` (C-contiguous,
    or one number repeated), a plain number or 0-d array as it is, else None."""
    if type(a) is not np.ndarray or a.ndim == 0:
        return a
    if a.shape != shape or not (a.flags.c_contiguous or not any(a.strides)):
        return None
    return a.reshape(-1)  # (a view for both kinds)


def elementwise(call: Callable, args: list, out: np.ndarray) -> bool:
    """``call(*args, out)`` block by block on threads, when ``out`` is large and every
    argument is ``out``-shaped or a number; False (nothing done) otherwise. ``call`` must be
    elementwise and write its block into the array it is given last."""
    n = threads()
    if n < 2 or out.size < MIN_SIZE or not out.flags.c_contiguous or any(
            type(a) is np.ndarray and a.dtype != out.dtype for a in args):
        return False  # (one dtype throughout: no cast on the way into ``out``)
    flat = [_flat(a, out.shape) for a in args]
    if any(f is None and a is not None for f, a in zip(flat, args)):
        return False
    dest = out.reshape(-1)
    size = dest.size
    step = -(-size // n // _EDGE) * _EDGE
    cuts = list(range(0, size, step)) + [size]

    def block(lo: int, hi: int) -> Callable:
        part = [f[lo:hi] if type(f) is np.ndarray and f.ndim else f for f in flat]
        return lambda: call(*part, dest[lo:hi])
    run_all([block(lo, hi) for lo, hi in zip(cuts, cuts[1:])])
    return True
