"""Results written by Polars and Arrow (the ``data`` extra): CSV and JSON Lines with the very bytes
the plain writer (ddx/app/csvio.py) writes, and Parquet.

Polars writes a float64 in the same shortest round-trip form as Python's ``repr`` except for
nan (``NaN``) and from 1e-9 to 1e-4 (``0.00001``, ``1.5e-7`` where Python writes ``1e-05``,
``1.5e-07``; tests/test_columnar.py checks every other magnitude). Those few numbers are written
by ``repr`` instead."""

from __future__ import annotations

import csv
import io
import json
from typing import IO

import numpy as np

# Python's repr and Polars' text differ for nan and between these magnitudes (a margin each side)
_REPR_FROM, _REPR_TO = 1e-10, 1e-4


def _needs_repr(arr: np.ndarray) -> np.ndarray:
    ax = np.abs(arr)
    with np.errstate(invalid="ignore"):
        return np.isnan(arr) | ((ax >= _REPR_FROM) & (ax < _REPR_TO))


def number_column(pl, name: str, arr: np.ndarray, bad: list[int], *, as_json: bool = False):
    """A result column for the text writers: floats where Polars writes them as Python would,
    text where it does not, and a null (an empty field) in every bad row."""
    arr = np.asarray(arr, dtype=np.float64)
    fix = np.flatnonzero(_needs_repr(arr) | (np.isinf(arr) if as_json else False))
    series = pl.Series(name, arr)
    if fix.size or as_json:
        series = series.cast(pl.String)
        if fix.size:
            texts = [repr(v) for v in arr[fix].tolist()]
            if as_json:  # json.dumps writes a non-finite number as the string of its repr
                texts = [t if t not in ("nan", "inf", "-inf") else f'"{t}"' for t in texts]
            series = series.scatter(fix, texts)
    if bad:
        series = series.scatter(bad, None)
    return series


def _csv_bytes(frame) -> bytes:
    buf = io.BytesIO()
    frame.write_csv(buf, include_header=False, null_value="", quote_style="necessary",
                    line_terminator="\n")
    return buf.getvalue()


def _write_lines(out: IO[bytes], text, rows: np.ndarray, need: list[list[bool]],
                 values: list[list[float]]) -> None:
    """``text`` (lines of numbers) to ``out``, with the fields ``need[j]`` of line ``rows[j]``
    (sorted) written as ``repr(values[j][k])``, the other fields kept. (In pieces: joining them
    first would copy the text twice more.)"""
    ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == 10)
    stops = ends[rows]
    starts = np.where(rows > 0, ends[np.maximum(rows - 1, 0)] + 1, 0)
    write = out.write
    prev = 0
    for start, stop, which, row in zip(starts.tolist(), stops.tolist(), need, values):
        write(text[prev:start])
        fields = bytes(text[start:stop]).split(b",")
        for k, on in enumerate(which):
            if on:
                fields[k] = repr(row[k]).encode()
        write(b",".join(fields))
        prev = stop  # (the newline stays)
    write(text[prev:])


class CsvWriter:
    """CSV: the kept input columns, then ``value`` and ``d_<name>``; a bad row's results empty."""

    def __init__(self, pl, out: IO[bytes], names: list[str], kept: list[str]) -> None:
        self.pl = pl
        self.out = out
        self.names = names
        self.kept = kept
        if kept:
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerow(kept + names)
            out.write(text.getvalue().encode("utf-8", "surrogateescape"))
        else:
            out.write((",".join(names) + "\n").encode("utf-8", "surrogateescape"))

    def write(self, block, columns: list[np.ndarray]) -> None:
        pl = self.pl
        bad = sorted(block.bad)
        if self.kept:
            series = [number_column(pl, n, c, bad) for n, c in zip(self.names, columns)]
            self.out.write(_csv_bytes(block.kept.hstack(pl.DataFrame(series))))
            return
        arrays = [np.asarray(c, dtype=np.float64) for c in columns]
        need = [_needs_repr(a) for a in arrays]
        fix = np.logical_or.reduce(need)
        if bad:
            fix[bad] = False
        series = [pl.Series(n, a) for n, a in zip(self.names, arrays)]
        if bad:
            series = [s.scatter(bad, None) for s in series]
        buf = io.BytesIO()
        pl.DataFrame(series).write_csv(buf, include_header=False, null_value="",
                                       quote_style="necessary", line_terminator="\n")
        with buf.getbuffer() as text:  # (Polars' text, not copied)
            rows = np.flatnonzero(fix)
            if rows.size:  # the numbers Polars writes otherwise: written by repr
                _write_lines(self.out, text, rows,
                             np.column_stack([m[rows] for m in need]).tolist(),
                             np.column_stack([a[rows] for a in arrays]).tolist())
            else:
                self.out.write(text)

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
            parts += [pl.lit(", " + key), pl.lit(number_column(pl, name, col, [], as_json=True))]
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
        from .columnar import arrow

        arrow()
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa, self.pq = pa, pq
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
            # (no dictionaries for the results: trying them on distinct floats costs 6x the time)
            self.writer = self.pq.ParquetWriter(_Unclosed(self.out), table.schema,
                                                use_dictionary=self.kept or False)
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is None:  # no rows: still a valid file with the result columns
            pa = self.pa
            schema = pa.schema([(n, pa.float64()) for n in self.names])
            self.writer = self.pq.ParquetWriter(_Unclosed(self.out), schema)
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
