"""Progress on standard error for long batch runs: jobs or rows done, percentage and ETA when the
size is known, the rate when it is not (standard input).

Shown only when standard error is a terminal, ``CI`` and ``DDX_NO_PROGRESS`` are unset, ``TERM``
is not ``dumb``, and the run has taken more than ``DELAY`` seconds (``DDX_PROGRESS_DELAY``
sets it); never on standard output, so ``--json`` and piped results are untouched. Rich is
imported only once a bar is due.

The API, for any reader of jobs or data (CSV, JSON Lines, columnar files)::

    with data_progress(path) as bar:      # or Progress("rows", total=N)
        reading(path, raw)                # the binary stream being read: % and ETA from it
        for chunk in chunks:
            ...
            bar.advance(chunk.n)          # n more rows (or jobs) done

``data_progress(path)`` estimates a data file's rows from its size and its first lines.
``total`` is what the percentage is of: a count of the same things ``advance`` counts, or,
with ``position``, a size that ``position()`` (a byte offset) runs up to; with neither (or
when no reader said where it is), the bar shows the count and the rate. ``advance`` costs a
counter and a clock read while no bar is shown, and nothing when progress is off
(``bar.on`` is False). ``file_total(path)`` is a regular file's size (None for stdin or a
pipe); ``line_total(path)`` counts its lines (job files)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

DELAY = 1.0  # seconds before a bar appears: short runs stay silent
REFRESH = 0.1  # seconds between updates of a shown bar


def wanted(stream=None, environ=os.environ) -> bool:
    """Whether progress may be shown on ``stream`` (standard error by default)."""
    stream = sys.stderr if stream is None else stream
    if environ.get("CI") or environ.get("TERM") == "dumb" or environ.get("DDX_NO_PROGRESS"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def file_total(path: str | None) -> int | None:
    """A regular file's size in bytes; None for standard input, a pipe or a device."""
    if path in (None, "-"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    import stat

    return st.st_size if stat.S_ISREG(st.st_mode) else None


def line_total(path: str | None, limit: int = 1 << 30) -> int | None:
    """How many lines a regular file has (read in blocks; None past ``limit`` bytes, or for
    standard input)."""
    size = file_total(path)
    if size is None or size > limit:
        return None
    lines = 0
    with open(path, "rb") as fh:
        block = fh.read(1 << 20)
        last = b"\n"
        while block:
            lines += block.count(b"\n")
            last = block[-1:]
            block = fh.read(1 << 20)
    return lines + (last != b"\n")


class Progress:
    """A progress bar on standard error that appears only for runs longer than ``DELAY``."""

    def __init__(self, unit: str = "rows", *, total: int | None = None,
                 position: Callable[[], int] | None = None, stream=None,
                 enabled: bool | None = None, delay: float | None = None) -> None:
        self.unit = unit
        self.total = total or None
        self.position = position
        self.stream = sys.stderr if stream is None else stream
        self.on = wanted(self.stream) if enabled is None else enabled
        self.count = 0
        self._bar = None
        self._task = None
        if delay is None:
            delay = float(os.environ.get("DDX_PROGRESS_DELAY", DELAY))
        self._due = time.monotonic() + delay  # first show, then the next refresh
        self._start = time.monotonic()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def advance(self, n: int = 1) -> None:
        """``n`` more jobs or rows done."""
        if not self.on:
            return
        self.count += n
        now = time.monotonic()
        if now < self._due:
            return
        self._due = now + REFRESH
        if self._bar is None:
            self._show()
        self._update()

    def set(self, count: int) -> None:
        """The count is now ``count`` (a job file's line number, say)."""
        if self.on:
            self.advance(count - self.count)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as RichProgress,
        )

        if self.position is not None and self.position() <= 0:
            self.total = self.position = None  # nobody said where the reader is: the rate
        unit = self.unit
        count = TextColumn("{task.fields[count]:,} " + unit)
        if self.total is None:
            columns = [TextColumn("[progress.description]{task.description}"), BarColumn(),
                       count, TextColumn("{task.fields[rate]}"), TimeElapsedColumn()]
        else:
            columns = [TextColumn("[progress.description]{task.description}"), BarColumn(),
                       count, TaskProgressColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        console = Console(file=self.stream, stderr=self.stream is sys.stderr)
        # stderr lines written meanwhile (a bad row's error) print above the bar; stdout is
        # never redirected: results must reach it untouched, whoever writes them
        self._bar = RichProgress(*columns, console=console, transient=True,
                                 refresh_per_second=10, redirect_stdout=False,
                                 redirect_stderr=self.stream is sys.stderr)
        self._task = self._bar.add_task("ddx batch", total=self.total, count=0, rate="")
        self._bar.start()

    def _update(self) -> None:
        done = self.position() if self.position is not None else self.count
        if self.position is None and self.total is not None and done > self.total:
            self.total = done  # (an estimate that fell short)
            self._bar.update(self._task, total=done)
        took = max(time.monotonic() - self._start, 1e-9)
        self._bar.update(self._task, completed=done, count=self.count,
                         rate=f"{self.count / took:,.0f} {self.unit}/s")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def counted(emit: Callable, bar: Progress) -> Callable:
    """A batch ``emit(line, result, error)`` that also moves ``bar`` to the job's line (the
    job file's line count is the bar's total); ``emit`` itself when progress is off."""
    if not bar.on:
        return emit

    def emit_counted(line: int, result, error) -> None:
        emit(line, result, error)
        bar.count = line - 1
        bar.advance(1)
    return emit_counted


def job_progress(path: str | None) -> Progress:
    """Progress for a job file (its lines are the total) or standard input (the rate)."""
    on = wanted()
    return Progress("lines", total=line_total(path) if on else None, enabled=on)


READING: dict = {}  # data file path -> the binary stream it is being read from


def reading(path: str, raw) -> None:
    """Say that ``path`` is being read from the binary stream ``raw``: a data bar opened for
    that path (``data_progress(path)``) shows the share of its bytes read, from ``raw.tell()``.
    A reader that opens its own file calls this once; ``data.open_text`` does."""
    READING[path] = raw


SAMPLE = 1 << 20  # bytes read from the start of a data file to estimate its rows


def row_estimate(path: str | None) -> int | None:
    """About how many lines a regular file has: exact for a file up to ``SAMPLE`` bytes, else
    its size over the mean line length of its first ``SAMPLE`` bytes. (The rows done, not the
    bytes read, then move the bar: a reader that reads ahead on a thread does not make it run
    ahead of the work.)"""
    size = file_total(path)
    if size is None:
        return None
    try:
        with open(path, "rb") as fh:
            sample = fh.read(SAMPLE)
    except OSError:
        return None
    lines = sample.count(b"\n") + (bool(sample) and not sample.endswith(b"\n"))
    if len(sample) >= size or not lines:
        return lines or None
    return max(1, round(size * lines / len(sample)))


def data_progress(path: str | None, raw=None) -> Progress:
    """Progress for a data file: rows done, and the percentage and ETA of the rows the file
    holds (estimated from its size and its first lines); the rate on standard input. Failing an
    estimate, the share of the file's bytes read, from ``raw.tell()`` (``raw`` the binary stream,
    or a function that returns it once open, or what ``reading(path, raw)`` said)."""
    on = wanted()
    estimate = row_estimate(path) if on else None
    if estimate is not None:
        return Progress("rows", total=estimate, enabled=on)
    total = file_total(path) if on else None
    if raw is None and path is not None:
        raw = lambda: READING.get(path)  # noqa: E731 - opened later, by the reader

    def position() -> int:
        stream = raw() if callable(raw) else raw
        try:
            return stream.tell() if stream is not None else 0
        except (OSError, ValueError):  # (closed, or not seekable)
            return 0
    known = total is not None and raw is not None
    return Progress("rows", total=total if known else None,
                    position=position if known else None, enabled=on)
