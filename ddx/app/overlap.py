"""A data job's writer on a thread of its own: the results of one block are encoded and written
(by Polars or Arrow, which let go of the GIL) while the next block is read and computed. The
blocks are written one at a time in the order given, so the output's bytes are the same."""

from __future__ import annotations

import queue
import threading

_STOP = object()


class WriteBehind:
    """``writer.write(block, columns)`` done on a thread, at most ``depth`` blocks behind."""

    def __init__(self, writer, depth: int = 2) -> None:
        self.writer = writer
        self.box: queue.Queue = queue.Queue(depth)
        self.error: BaseException | None = None
        self.dropped = False
        self.thread = threading.Thread(target=self._work, name="ddx-write", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while True:
            item = self.box.get()
            if item is _STOP:
                return
            if self.error is not None or self.dropped:
                continue  # (the rest is let go: the job is failing)
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
