"""A data job's writer on a thread of its own: the results of one block are encoded and written
(by Polars or Arrow, which let go of the GIL) while the next block is read and computed. The
blocks are written one at a time in the order given, so the output's bytes are the same; they
are first gathered into runs of ``gather`` rows (Polars writes 65,536 rows at a time 1.6 times
slower than 262,144: each call has its own cost), which writes the same bytes in a text format
and one row group a run in Parquet."""

from __future__ import annotations

import queue
import threading

import numpy as np

_STOP = object()
GATHER_ROWS = 1 << 18  # rows written at a time (Polars' own row group for Parquet)


class Gathered:
    """Consecutive blocks as one: rows [first, first + n), their bad rows and kept columns."""

    __slots__ = ("first", "n", "bad", "kept")

    def __init__(self, blocks: list) -> None:
        self.first = blocks[0].first
        self.n = 0
        self.bad: dict[int, str] = {}
        for block in blocks:
            self.bad.update({self.n + i: why for i, why in block.bad.items()})
            self.n += block.n
        kept = [block.kept for block in blocks if getattr(block, "kept", None) is not None]
        self.kept = kept[0] if len(kept) == 1 else None
        if len(kept) > 1:
            import polars as pl  # (kept columns come from Polars: it is loaded)

            self.kept = pl.concat(kept, rechunk=False)


def gathered(items: list) -> tuple:
    """One (block, columns) for a run of them."""
    if len(items) == 1:
        return items[0]
    columns = [np.concatenate(cs) for cs in zip(*(c for _, c in items))]
    return Gathered([b for b, _ in items]), columns


class WriteBehind:
    """``writer.write(block, columns)`` done on a thread, at most ``depth`` blocks behind."""

    def __init__(self, writer, depth: int = 2, gather: int = 0) -> None:
        self.writer = writer
        self.gather = gather
        self.box: queue.Queue = queue.Queue(depth)
        self.error: BaseException | None = None
        self.dropped = False
        self.thread = threading.Thread(target=self._work, name="ddx-write", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        run: list = []  # (blocks gathered, not yet written)
        rows = 0
        while True:
            item = self.box.get()
            if item is _STOP:
                if run:
                    self._put(gathered(run))
                return
            if not self.gather:
                self._put(item)
                continue
            run.append(item)
            rows += item[0].n
            if rows >= self.gather:
                self._put(gathered(run))
                run, rows = [], 0

    def _put(self, item) -> None:
        if self.error is not None or self.dropped:
            return  # (the rest is let go: the job is failing)
        try:
            self.writer.write(*item)
        except BaseException as exc:  # noqa: BLE001 - raised again on the job's thread
            self.error = exc

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            self.dropped = True
            raise error

    def write(self, block, columns) -> None:
        self._raise()
        self.box.put((block, columns))

    def close(self) -> None:
        """Wait for every block to be written, then close the writer (its error, if any)."""
        self.box.put(_STOP)
        self.thread.join()
        self._raise()
        self.writer.close()

    def drop(self) -> None:
        """The job failed: let the blocks not yet written go, and end the thread."""
        self.dropped = True
        if self.thread.is_alive():
            self.box.put(_STOP)
            self.thread.join()
