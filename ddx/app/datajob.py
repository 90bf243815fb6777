"""ddx batch --expr over a data file: its format, the columns that bind the variables (``--map``,
``--keep``), and the path that runs it: Polars and Arrow when the ``data`` extra is installed
(ddx/app/columnar.py), else the plain reader (ddx/app/data.py), which reads CSV and JSON Lines."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import IO

import numpy as np

from ..errors import DdxUsageError
from .data import DataRun

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
           ".pq": "parquet"}
NAMES = ("csv", "jsonl", "parquet")
HEADER_BYTES = 1 << 20


def format_of(path: str | None, given: str | None, *, what: str) -> str | None:
    """A file's format: ``given`` (from --format), else its ending; None when neither says."""
    if given:
        return given
    if path in (None, "-"):
        return None
    ending = os.path.splitext(path)[1].lower()
    return FORMATS.get(ending)


def parse_format(spec: str | None) -> tuple[str | None, str | None]:
    """``--format csv`` (input and output) or ``--format parquet,csv`` (input, output)."""
    if not spec:
        return None, None
    parts = [p.strip().lower() for p in spec.split(",")]
    if len(parts) > 2 or any(p not in NAMES for p in parts):
        raise DdxUsageError(f"--format must be csv, jsonl or parquet (or IN,OUT), not {spec!r}")
    return parts[0], parts[-1]


def parse_map(specs: tuple[str, ...]) -> dict[str, str]:
    """``--map x=col_x`` (repeated, or comma-separated): variable -> column."""
    mapping: dict[str, str] = {}
    for spec in specs:
        for item in spec.split(","):
            var, eq, col = item.partition("=")
            var, col = var.strip(), col.strip()
            if not eq or not var.isidentifier() or not col:
                raise DdxUsageError(f"--map takes NAME=COLUMN, not {item!r}",
                                    hint="e.g. --map x=col_x,y=col_y")
            mapping[var] = col
    return mapping


def bind_columns(run: DataRun, columns: list[str], mapping: dict[str, str]) -> dict[str, str]:
    """Column -> variable for the variables the expression reads from the data."""
    for var, col in mapping.items():
        if col not in columns:
            raise DdxUsageError(f"--map {var}={col}: the data has no column '{col}'",
                                hint="columns: " + ", ".join(columns))
    mapped = set(mapping.values())
    visible = list(mapping) + [c for c in columns if c not in mapped and c not in mapping]
    names = run.variables(visible)
    return {mapping.get(v, v): v for v in names}


class DataJob:
    """One expression over one data file, written to one output."""

    def __init__(self, expr: str, bindings: dict[str, str], data: str, output: str | None, *,
                 fmt: str | None = None, mapping: tuple[str, ...] = (), keep: bool = False,
                 plain: bool = False, parts: bool = False) -> None:
        fmt_in, fmt_out = parse_format(fmt)
        self.data = data
        self.fmt_in = format_of(data, fmt_in, what="input")
        if self.fmt_in is None:
            raise DdxUsageError(f"cannot tell the format of {data}: name it with --format",
                                hint="--format csv, jsonl or parquet")
        if self.fmt_in == "parquet" and data == "-":
            raise DdxUsageError("Parquet is read from a file, not standard input")
        self.fmt_out = format_of(output, fmt_out, what="output") or (
            self.fmt_in if self.fmt_in != "parquet" or output not in (None, "-") or parts
            else None)
        if not parts and self.fmt_out == "parquet" and output in (None, "-"):
            raise DdxUsageError("Parquet is not written to standard output",
                                hint="-o FILE.parquet, or --format parquet,csv for CSV text")
        self.mapping = parse_map(mapping)
        self.keep = keep
        self.run = DataRun(expr, bindings, fmt=self.fmt_in)
        from .columnar import have_polars

        self.columnar = not plain and os.environ.get("DDX_DATA_ENGINE") != "plain" \
            and have_polars()
        if not self.columnar:
            why = ("reading Parquet" if self.fmt_in == "parquet" else
                   "writing Parquet" if self.fmt_out == "parquet" else
                   "--map" if self.mapping else "--keep" if keep else None)
            if why is not None:
                raise DdxUsageError(f"{why} needs Polars and PyArrow: pip install 'ddx[data]'")
            if self.fmt_out != self.fmt_in:
                raise DdxUsageError(f"{self.fmt_in} in, {self.fmt_out} out needs Polars: "
                                    "pip install 'ddx[data]'")
        if keep and self.fmt_in == "jsonl":
            raise DdxUsageError("--keep keeps the columns of CSV or Parquet input, not JSON Lines")

    def bind(self, columns: list[str]) -> dict[str, str]:
        """Column -> variable, for data with these columns."""
        return bind_columns(self.run, columns, self.mapping)

    @property
    def binary(self) -> bool:
        return self.columnar

    def execute(self, out: IO, report: Callable[[str], None],
                progress: Callable[[int], None] | None = None,
                started: Callable[[], None] | None = None) -> DataRun:
        """Run the job into ``out``; ``started()`` once the start-up is over (the first block's
        results computed, or the plain reader about to read)."""
        from ..replay import allocator

        # (every block's arrays are large: with glibc's thresholds raised from the first
        # block on, the memory one block frees is the next one's, not fresh pages; measured
        # on 10^6 Black-Scholes rows from Parquet: 45,000 page faults -> 27,000, 0.16 s of
        # system time -> 0.10)
        allocator.tune()
        if not self.columnar:
            from .data import open_text

            if started is not None:
                started()
            self.run.run(open_text(self.data), out, report, progress)
            return self.run
        source, names, kept = self.open()
        from . import colwrite
        from .columnar import polars

        pl = polars() if self.fmt_out != "parquet" or kept else None  # (Parquet: Arrow alone)
        writer = colwrite.WRITERS[self.fmt_out](pl, out, ["value"] + [f"d_{n}" for n in names],
                                                kept)
        from .overlap import GATHER_ROWS, WriteBehind

        run = self.run
        chunks = ahead(source.chunks())
        # (read, compute and write overlap, on three threads; a Parquet row group is a run)
        behind = WriteBehind(writer, gather=GATHER_ROWS)
        try:
            for chunk in chunks:
                with np.errstate(all="ignore"):
                    value, grads = run.compute(chunk)
                if started is not None:
                    started()
                    started = None
                for i, why in sorted(chunk.bad.items()):
                    report(f"row {chunk.first + i}: {why}")
                behind.write(chunk, [value] + [grads[n] for n in names])
                run.rows += chunk.n
                run.bad_rows += len(chunk.bad)
                if progress is not None:
                    progress(chunk.n)
            behind.close()
        finally:
            behind.drop()
            chunks.close()
        return run

    def open(self):
        """The source of chunks, the variables it binds, and the columns kept."""
        from . import columnar, csvio

        if self.fmt_in == "parquet":
            header, types = columnar.ParquetSource.header(self.data)
            wanted = bind_columns(self.run, header, self.mapping)
            columnar.ParquetSource.check_types(types, wanted)
            kept = self.kept(header)
            return columnar.ParquetSource(self.data, wanted, kept), list(wanted.values()), kept
        raw = self.open_bytes()
        if self.fmt_in == "jsonl":
            names = self.run.variables(None)
            if self.mapping:
                names = [self.mapping.get(n, n) for n in names]
                source = columnar.JsonlSource(raw, names)
                back = {self.mapping.get(v, v): v for v in self.run.variables(None)}
                return _Renamed(source, back), list(back.values()), []
            return columnar.JsonlSource(raw, names), names, []
        import io

        line = raw.readline(HEADER_BYTES)
        header = csvio.csv_header(io.StringIO(line.decode("utf-8", "surrogateescape")))
        if not header:
            raise DdxUsageError("the CSV is empty (no header line)")
        wanted = bind_columns(self.run, header, self.mapping)
        kept = self.kept(header)
        return columnar.CsvSource(raw, header, wanted, kept), list(wanted.values()), kept

    def kept(self, header: list[str]) -> list[str]:
        if not self.keep:
            return []
        taken = {"value"} | {f"d_{v}" for v in self.run.variables(None) if v}
        for c in header:
            if c in taken:
                raise DdxUsageError(f"--keep: the input's column '{c}' has the name of a result",
                                    hint="rename it in the input, or leave out --keep")
        if len(set(header)) != len(header):
            raise DdxUsageError("--keep: the input's header repeats a column name")
        return header

    def open_bytes(self) -> IO[bytes]:
        if self.data == "-":
            return sys.stdin.buffer
        try:
            raw = open(self.data, "rb")
        except OSError as exc:
            raise DdxUsageError(f"cannot read {self.data}: {exc.strerror}") from None
        from .progress import reading

        reading(self.data, raw)  # (a progress bar shows the share of its bytes read)
        return raw


def ahead(items: Iterator, depth: int = 2) -> Iterator:
    """``items``, made on a thread up to ``depth`` ahead: Polars parses the next block (on every
    core, without the GIL) while this one is computed and written."""
    import queue
    import threading

    box: queue.Queue = queue.Queue(depth)
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(done)
        except BaseException as exc:  # noqa: BLE001 - raised again on the reading side
            put(exc)

    thread = threading.Thread(target=work, name="ddx-read", daemon=True)
    thread.start()
    try:
        while True:
            item = box.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


class _Renamed:
    """A JSON Lines source whose fields are renamed to the variables they bind (--map)."""

    def __init__(self, source, back: dict[str, str]) -> None:
        self.source = source
        self.back = back

    def chunks(self):
        for chunk in self.source.chunks():
            chunk.columns = {self.back[k]: v for k, v in chunk.columns.items()}
            yield chunk


def data_mode(expr: str, bindings: dict[str, str], data: str, output: str | None, *,
              fmt: str | None, mapping: tuple[str, ...], keep: bool,
              say: Callable[[str], None], start: float, now: Callable[[], float],
              dask: str | None = None, started: Callable[[], None] | None = None) -> int:
    """The whole data mode of ``ddx batch``: run, report, and the exit code (``started``: for
    DataJob.execute)."""
    from ..out.outfile import Output
    from .data import progress

    if dask is not None:  # (a folder of parts: the format from --format, else the input's)
        job = DataJob(expr, bindings, data, output, fmt=fmt, mapping=mapping, keep=keep,
                      parts=True)
        from .dask_job import run_dask

        if started is not None:
            started()
        with progress(data) as advance:
            rows, bad, warnings = run_dask(job, dask or None, output, say, advance)
    else:
        job = DataJob(expr, bindings, data, output, fmt=fmt, mapping=mapping, keep=keep)
        # (no fsync: a data file's results can be made again, and syncing 775 MB took 0.28 s
        # of a 3.2 s job, as neither Polars nor DuckDB does; the rename still shows the old
        # file or the whole new one, whatever becomes of ddx)
        with Output(output, option="-o", inputs=(data,), binary=job.binary, sync=False) as out:
            with progress(data) as advance:  # (the output is checked before any read)
                run = job.execute(out, lambda msg: say(f"error: {msg}"), advance, started)
            out.flush()
        rows, bad, warnings = run.rows, run.bad_rows, run.warnings
    for message, count in list(warnings.items())[:5]:
        say(f"warning: {message}" + (f" ({count} chunks)" if count > 1 else ""))
    took = now() - start
    rate = f", {rows / took:,.0f} rows/s" if took > 0 and rows else ""
    say(f"batch: {rows} rows, {bad} bad, {took:.2f} s{rate}")
    return 1 if bad else 0


def data_command(file, bindings, *, expr=None, csv_file=None, jsonl_file=None, data_file=None,
                 fmt=None, mapping=(), keep=False, dask=None, output=None, started=None) -> int:
    """``ddx batch`` in data mode (--expr over --data, --csv or --jsonl): its exit code."""
    import time

    from ..textsafe import safe_text
    from .cli_base import binding, stderr_line

    now = time.perf_counter
    start = now()
    data = csv_file or jsonl_file or data_file
    if expr is None or not data or sum(map(bool, (csv_file, jsonl_file, data_file))) > 1:
        raise DdxUsageError("data mode needs --expr and one of --data, --csv or --jsonl")
    extra = dict(binding(b) for b in ((file,) if file else ()) + bindings)
    fmt = fmt or ("csv" if csv_file else "jsonl" if jsonl_file else None)
    return data_mode(expr, extra, data, output, fmt=fmt, mapping=mapping, keep=keep,
                     say=lambda text: stderr_line(safe_text(text)), start=start, now=now,
                     dask=dask, started=started)
