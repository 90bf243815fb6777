"""Results written by Polars and Arrow (the ``data`` extra): CSV and JSON Lines with the very bytes
the plain writer (ddx/app/csvio.py) writes, and Parquet.

Both CSV writers write a float64 as Polars does: the shortest text that reads back as it, which
is Python's ``repr`` except nan and from 1e-9 to 1e-4 (``NaN``, ``0.00001``, ``1.5e-7``; the
plain writer turns repr into that, csvio.short_text). JSON Lines has json.dumps' numbers, as
the plain writer's: there Polars' text is mended where it differs."""

from __future__ import annotations

import csv
import io
import json
from typing import IO

import numpy as np

from . import csvio


def json_column(pl, name: str, arr: np.ndarray):
    """A result column's numbers as json.dumps writes them: Polars' text, with repr's where
    Polars' differs, and a non-finite number as the string of its repr."""
    arr = np.asarray(arr, dtype=np.float64)
    fix = np.flatnonzero(csvio.repr_differs(arr) | np.isinf(arr))
    series = pl.Series(name, arr).cast(pl.String)
    if fix.size:
        texts = [repr(v) for v in arr[fix].tolist()]
        texts = [t if t not in ("nan", "inf", "-inf") else f'"{t}"' for t in texts]
        series = series.scatter(fix, texts)
    return series


class Through:
    """Where Polars writes a run's text: on to the output, piece by piece as Polars hands it over
    (about 2 MB at a time), with no copy of the whole run in a buffer of ddx's (a quarter of
    the C library's copying in a 10^7-row job). A write error is kept and raised by the writer
    once Polars returns: raised through Polars, it would come back as Polars' bare OSError
    instead of ddx's message naming the file."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.error: BaseException | None = None

    def write(self, data) -> int:
        try:
            self.out.write(data)
        except BaseException as exc:
            self.error = exc
            raise
        return len(data)

    def flush(self) -> None:
        pass

    def csv(self, frame) -> None:
        """``frame``'s rows written as CSV (no header; a null an empty field)."""
        try:
            frame.write_csv(self, include_header=False, null_value="", quote_style="necessary",
                            line_terminator="\n")
        except Exception:
            if self.error is None:
                raise
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class CsvWriter:
    """CSV: the kept input columns, then ``value`` and ``d_<name>``; a bad row's results empty."""

    def __init__(self, pl, out: IO[bytes], names: list[str], kept: list[str]) -> None:
        self.pl = pl
        self.out = out
        self.names = names
        self.kept = kept
        self.text = Through(out)
        if kept:
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerow(kept + names)
            out.write(text.getvalue().encode("utf-8", "surrogateescape"))
        else:
            out.write((",".join(names) + "\n").encode("utf-8", "surrogateescape"))

    def write(self, block, columns: list[np.ndarray]) -> None:
        pl = self.pl
        series = [pl.Series(n, np.asarray(c, dtype=np.float64))
                  for n, c in zip(self.names, columns)]
        if block.bad:
            bad = sorted(block.bad)
            series = [s.scatter(bad, None) for s in series]  # (empty fields)
        frame = pl.DataFrame(series)
        if self.kept:
            frame = block.kept.hstack(frame)
        self.text.csv(frame)

    def close(self) -> None:
        pass


class JsonlWriter:
    """JSON Lines: ``{"value": ..., "d_x": ...}`` per row as json.dumps writes it;
    ``{"error": ...}`` for a bad row."""

    def __init__(self, pl, out: IO[bytes], names: list[str], kept: list[str]) -> None:
        self.pl = pl
        self.out = out
        self.names = names
        self.kept = kept
        self.keys = [json.dumps(n) + ": " for n in kept + names]

    def write(self, block, columns: list[np.ndarray]) -> None:
        pl = self.pl
        rows = pl.Series(np.arange(block.first, block.first + block.n)).cast(pl.String)
        parts = [pl.lit('{"row": '), pl.lit(rows)]  # (the data row, as the plain writer's)
        for k, name in enumerate(self.kept):
            text = block.kept.get_column(name).map_elements(
                lambda v: json.dumps(v, default=str), return_dtype=pl.String, skip_nulls=False)
            parts += [pl.lit(", " + self.keys[k]), pl.lit(text)]
        for k, (name, col) in enumerate(zip(self.names, columns)):
            key = self.keys[len(self.kept) + k]
            parts += [pl.lit(", " + key), pl.lit(json_column(pl, name, col))]
        line = pl.select(pl.concat_str(parts + [pl.lit("}")]).alias("line")).to_series()
        if block.bad:
            bad = sorted(block.bad)
            line = line.scatter(bad, [json.dumps({"row": block.first + i, "error": block.bad[i]})
                                      for i in bad])
        buf = io.BytesIO()
        pl.DataFrame([line]).write_csv(buf, include_header=False, quote_style="never",
                                       line_terminator="\n")
        self.out.write(buf.getvalue())

    def close(self) -> None:
        pass


class ParquetWriter:
    """Parquet: float64 results, null in a bad row; the kept columns with their own types."""

    def __init__(self, pl, out: IO[bytes], names: list[str], kept: list[str]) -> None:
        from .parquetio import arrow, parquet_writer

        self.pa, self.new = arrow(), parquet_writer
        self.pl = pl
        self.out = out
        self.names = names
        self.kept = kept
        self.writer = None

    def write(self, block, columns: list[np.ndarray]) -> None:
        pa = self.pa
        valid = None
        if block.bad:
            ok = np.ones(block.n, dtype=bool)
            ok[list(block.bad)] = False
            valid = pa.py_buffer(np.packbits(ok, bitorder="little"))
        # Arrow arrays on the numpy buffers, no copy (pa.array would import pandas: 0.3 s)
        arrays = [pa.Array.from_buffers(pa.float64(), block.n, [valid, pa.py_buffer(
            np.ascontiguousarray(c, dtype=np.float64))]) for c in columns]
        table = pa.Table.from_arrays(arrays, names=self.names)
        if self.kept:
            kept = block.kept.to_arrow()
            table = pa.Table.from_arrays(kept.columns + table.columns,
                                         names=self.kept + self.names)
        if self.writer is None:
            self.schema = table.schema
            # (no dictionaries for the results: trying them on distinct floats costs 6x the time;
            # nor compression: Snappy took a third of the writing of 10^7 rows and saved
            # nothing on such numbers. The kept columns have both, as Arrow's defaults.)
            self.writer = self.new(
                _Unclosed(self.out), table.schema, use_dictionary=self.kept or False,
                compression={**dict.fromkeys(self.kept, "snappy"),
                             **dict.fromkeys(self.names, "none")})
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is None:  # no rows: still a valid file with the result columns
            pa = self.pa
            schema = pa.schema([(n, pa.float64()) for n in self.names])
            self.writer = self.new(_Unclosed(self.out), schema, use_dictionary=True,
                                   compression="snappy")  # (Arrow's defaults)
        self.writer.close()


class _Unclosed:
    """The output as Arrow's writer sees it: closing it is the caller's (ddx/out/outfile.py)."""

    closed = False

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.pos = 0

    def write(self, data) -> int:
        self.out.write(data)
        self.pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self.pos

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        self.out.flush()


WRITERS = {"csv": CsvWriter, "jsonl": JsonlWriter, "parquet": ParquetWriter}
