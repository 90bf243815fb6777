"""Data files read by Polars and Arrow (the ``data`` extra): CSV and JSON Lines parsed by Polars on
every core in blocks of bytes, Parquet read by Arrow in record batches, each straight into
numpy columns (no copy for a float64 column without gaps).

A block Polars parses without a doubt (no error, no empty field, every row as wide as the
header, no lone carriage return) is used as it is; any other block is parsed again in pieces,
and a piece that still fails is read row by row by the same code as the plain reader
(ddx/app/csvio.py), so bad rows carry the same row numbers and messages either way."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO

import numpy as np

from ..errors import DdxUsageError
from . import csvio
from .parquetio import ParquetReader

BLOCK_BYTES = 8 << 20  # bytes of text parsed at a time (memory stays flat, cores stay busy)
PIECE_ROWS = 4096  # rows re-parsed at a time in a block that needs a second look
PARQUET_ROWS = 1 << 17  # rows per Parquet record batch


def polars():
    """The polars module, or a usage error naming the extra that brings it."""
    try:
        import polars as pl
    except ImportError:
        raise DdxUsageError("this needs Polars: pip install 'ddx[data]'") from None
    return pl


def have_polars() -> bool:
    """Whether Polars is installed (found, not imported: Parquet to Parquet does without its
    0.2 s import)."""
    import importlib.util

    return importlib.util.find_spec("polars") is not None


class Block(csvio.Chunk):
    """A Chunk with the input columns kept for the output (``--keep``): a Polars DataFrame."""

    __slots__ = ("kept",)

    def __init__(self, first: int, n: int, columns: dict, bad: dict, kept=None) -> None:
        super().__init__(first, n, columns, bad)
        self.kept = kept


def text_blocks(raw: IO[bytes], size: int | None = None) -> Iterator[bytes]:
    """Whole lines, about ``size`` bytes at a time; the last one ends with a newline too.
    (Each block is read, then the rest of its last line: one copy of the text less than cutting
    the block at its last newline and carrying the rest over.)"""
    size = size or BLOCK_BYTES
    while True:
        data = raw.read(size)
        if not data:
            return
        if not data.endswith(b"\n"):
            data += raw.readline()
            if not data.endswith(b"\n"):  # (the end of a file without its last newline)
                data += b"\n"
        yield data


def _lines(block: bytes) -> list[str]:
    """A block's rows as the plain reader sees them: UTF-8 with surrogates, universal newlines."""
    return list(io.StringIO(block.decode("utf-8", "surrogateescape"), newline=""))


def _pieces(block: bytes, rows: int) -> Iterator[bytes]:
    start = 0
    while start < len(block):
        end = start
        for _ in range(rows):
            end = block.find(b"\n", end) + 1
            if end == 0:
                end = len(block)
                break
            if end >= len(block):
                break
        yield block[start:end]
        start = end


class CsvSource:
    """A CSV's rows in blocks: the columns ``wanted`` (header name -> variable) as float64,
    the columns ``kept`` as text."""

    def __init__(self, raw: IO[bytes], header: list[str], wanted: dict[str, str],
                 kept: list[str]) -> None:
        self.pl = polars()
        self.raw = raw
        self.header = header
        self.width = len(header)
        self.wanted = wanted
        self.kept = kept
        pl = self.pl
        # Polars' own names for a header-less file's columns (a header may repeat a name)
        self.cols = [f"column_{i + 1}" for i in range(self.width)]
        self.var_at = {self.cols[header.index(c)]: v for c, v in wanted.items()}
        self.keep_at = [self.cols[header.index(c)] for c in kept]
        # a variable's column that is also kept is read as text, then made numbers
        self.schema = {c: pl.Float64 if c in self.var_at and c not in self.keep_at
                       else pl.String for c in self.cols}
        self.use = list(dict.fromkeys(list(self.var_at) + self.keep_at + self.cols[-1:]))
        self.check = list(dict.fromkeys(list(self.var_at) + self.cols[-1:]))
        self.names = list(wanted.values())
        self.wanted_index = [header.index(c) for c in wanted]

    def chunks(self) -> Iterator[Block]:
        first = 1  # data rows are numbered from 1, the header being row 0
        for block in text_blocks(self.raw):
            for chunk in self.parse(block, first):
                yield chunk
                first += chunk.n

    def parse(self, block: bytes, first: int) -> Iterator[Block]:
        got = self.fast(block, None)  # (Polars keeps every line, an empty one as nulls)
        if got is not None:
            yield from self.slices(got, first)
            return
        for piece in _pieces(block, PIECE_ROWS):
            got = self.fast(piece, piece.count(b"\n"))
            chunks = self.slices(got, first) if got is not None else [self.slow(piece, first)]
            for chunk in chunks:
                yield chunk
                first += chunk.n

    def fast(self, block: bytes, lines: int | None):
        """Polars' parse of a block, or None when it needs a second look: when Polars could read
        its rows otherwise than the plain reader (a long row, a lone carriage return, a line
        break in quotes). A field Polars does not read as a number, an empty field, an empty or
        short row come back null: those rows alone are read again, by the plain reader's code
        (``mend``), so that a bad row costs a row's work, not a block's."""
        if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):
            return None
        pl = self.pl
        try:
            df = pl.read_csv(block, has_header=False, schema=self.schema, columns=self.use,
                             quote_char='"', null_values=None, infer_schema=False,
                             ignore_errors=True)
        except pl.exceptions.PolarsError:  # (a long row, or anything else Polars refuses)
            return None
        if lines is None and b'"' in block:  # (only quotes hold a line break: then count)
            lines = int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))
        if lines is not None and df.height != lines:
            return None  # (quotes held a line break: Polars' rows are not the lines)
        series, doubt = {}, None
        for c in self.check:  # (a short row has nulls at its end: the last column is read)
            col = df.get_column(c)
            if c in self.var_at:
                if col.dtype != pl.Float64:  # (a kept column: read as text)
                    col = col.cast(pl.Float64, strict=False)
                series[self.var_at[c]] = col
            if col.null_count():
                nulls = col.is_null().to_numpy()
                doubt = nulls if doubt is None else doubt | nulls
        # (a column parsed on several threads comes in pieces: joined once, see ``slices``)
        arrays = {v: (s.rechunk() if s.n_chunks() > 1 else s).to_numpy()
                  for v, s in series.items()}
        kept = None
        if self.kept:
            kept = df.select([self.pl.col(c).alias(n) for c, n in zip(self.keep_at, self.kept)])
        bad: dict[int, str] = {}
        if doubt is not None:
            bad, kept = self.mend(block, np.flatnonzero(doubt), arrays, kept)
        return arrays, kept, df.height, bad

    def mend(self, block: bytes, rows: np.ndarray, arrays: dict, kept):
        """The rows ``rows`` of a block read again as the plain reader reads them: their numbers
        into ``arrays``, their kept fields into ``kept``; the bad ones (row -> why)."""
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        starts = np.concatenate(([0], ends[:-1] + 1))
        lines = [block[a:b + 1].decode("utf-8", "surrogateescape")
                 for a, b in zip(starts[rows].tolist(), ends[rows].tolist())]
        data, bad = csvio.parse_rows_slowly(lines, self.width, self.wanted_index, list(self.wanted))
        for k, v in enumerate(self.names):
            if not arrays[v].flags.writeable:
                arrays[v] = arrays[v].copy()
            arrays[v][rows] = data[:, k]
        if kept is not None:
            fields = self.kept_fields(lines)
            kept = self.pl.DataFrame([kept.get_column(n).clone().scatter(rows, [f[j] for f in fields])
                                      for j, n in enumerate(self.kept)])
        return {int(rows[i]): why for i, why in bad.items()}, kept

    def kept_fields(self, lines: list[str]) -> list[list]:
        """The kept fields of each line as the plain reader splits it (all None for a row of
        the wrong width; an empty field None, as Polars reads it)."""
        import csv

        idx = [self.header.index(c) for c in self.kept]
        rows = []
        for line in lines:
            fields = next(csv.reader([line.rstrip("\r\n")]), [])
            ok = len(fields) == self.width
            rows.append([fields[i] or None if ok else None for i in idx])
        return rows

    def slices(self, got, first: int) -> Iterator[Block]:
        """Blocks of CHUNK_ROWS rows whose columns are numpy views of the parsed data.

        (A column Polars parsed on several threads comes in pieces: they were joined once, so
        that the blocks have one size and the replay one template; blocks of every size the
        threads happen to cut would each keep a template of their own.)"""
        arrays, kept, height, bad = got
        step = csvio.CHUNK_ROWS
        for start in range(0, height, step):
            n = min(step, height - start)
            here = {i - start: why for i, why in bad.items() if start <= i < start + n}
            yield Block(first + start, n, {v: a[start:start + n] for v, a in arrays.items()},
                        here, kept.slice(start, n) if kept is not None else None)

    def slow(self, piece: bytes, first: int) -> Block:
        lines = _lines(piece)
        data, bad = csvio.parse_rows_slowly(lines, self.width, self.wanted_index, list(self.wanted))
        columns = {v: np.ascontiguousarray(data[:, k]) for k, v in enumerate(self.names)}
        kept = None
        if self.kept:
            kept = self.pl.DataFrame(self.kept_fields(lines),
                                     schema={n: self.pl.String for n in self.kept}, orient="row")
        return Block(first, len(lines), columns, bad, kept)


class JsonlSource:
    """JSON Lines rows in blocks: the fields ``names`` as float64."""

    def __init__(self, raw: IO[bytes], names: list[str]) -> None:
        self.pl = polars()
        self.raw = raw
        self.names = names
        self.schema = {n: self.pl.Float64 for n in names}

    def chunks(self) -> Iterator[Block]:
        first = 1
        for block in text_blocks(self.raw):
            lines = block.count(b"\n")
            got = self.fast(block, lines)
            if got is not None:
                yield got(first)
                first += lines
                continue
            for piece in _pieces(block, PIECE_ROWS):
                got = self.fast(piece, piece.count(b"\n"))
                chunk = got(first) if got is not None else self.slow(piece, first)
                yield chunk
                first += chunk.n

    def fast(self, block: bytes, lines: int):
        if block.count(b"\r") != block.count(b"\r\n") or b"\n\n" in block or \
                block.startswith(b"\n"):
            return None
        try:
            df = self.pl.read_ndjson(block, schema=self.schema)
        except self.pl.exceptions.PolarsError:  # any doubt: read again row by row
            return None
        if df.height != lines:
            return None
        arrays = {n: df.get_column(n).rechunk().to_numpy() for n in self.names}
        doubt = None
        for n in self.names:  # (a null: a missing field, a null, or what Polars did not read)
            col = df.get_column(n)
            if col.null_count():
                nulls = col.is_null().to_numpy()
                doubt = nulls if doubt is None else doubt | nulls
        bad: dict[int, str] = {}
        if doubt is not None:  # those rows alone read again by the plain reader's code
            bad = self.mend(block, np.flatnonzero(doubt), arrays)
        return lambda first: Block(first, lines, arrays, bad)

    def mend(self, block: bytes, rows: np.ndarray, arrays: dict) -> dict[int, str]:
        """The lines ``rows`` of a block (one row a line: no empty line got here) read again as
        the plain reader reads them, their numbers into ``arrays``; the bad ones (row -> why)."""
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        starts = np.concatenate(([0], ends[:-1] + 1))
        lines = [block[a:b + 1].decode("utf-8", "surrogateescape")
                 for a, b in zip(starts[rows].tolist(), ends[rows].tolist())]
        data, bad = csvio.parse_json_rows(lines, self.names)
        for k, n in enumerate(self.names):
            if not arrays[n].flags.writeable:
                arrays[n] = arrays[n].copy()
            arrays[n][rows] = data[:, k]
        return {int(rows[i]): why for i, why in bad.items()}

    def slow(self, piece: bytes, first: int) -> Block:
        lines = _lines(piece)
        data, bad = csvio.parse_json_rows(lines, self.names)
        return Block(first, len(lines), {n: np.ascontiguousarray(data[:, k])
                                         for k, n in enumerate(self.names)}, bad)


class ParquetSource:
    """A Parquet file's record batches: the columns ``wanted`` as float64 (a null is a bad
    row), the columns ``kept`` as they are."""

    def __init__(self, path: str, wanted: dict[str, str], kept: list[str]) -> None:
        self.pl = polars() if kept else None  # (kept columns go out as Polars frames)
        # (pre-buffered batches pile up; a column chunk read whole is a row group's worth)
        self.file = ParquetReader(path, buffer_size=1 << 20)
        self.wanted = wanted
        self.kept = kept

    @staticmethod
    def header(path: str) -> tuple[list[str], dict]:
        try:
            schema = ParquetReader(path, buffer_size=0).schema
        except OSError as exc:
            raise DdxUsageError(f"cannot read {path}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a file that is no Parquet
            raise DdxUsageError(f"cannot read {path} as Parquet: {exc}") from None
        return list(schema.names), {f.name: f.type for f in schema}

    @staticmethod
    def check_types(types: dict, wanted: dict[str, str]) -> None:
        import pyarrow as pa

        for c in wanted:
            t = types[c]
            if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
                    or pa.types.is_boolean(t)):
                raise DdxUsageError(f"column '{c}' holds {t}, not numbers")

    def chunks(self) -> Iterator[Block]:
        cols = list(dict.fromkeys(list(self.wanted) + self.kept))
        first = 1
        for batch in self.file.batches(PARQUET_ROWS, cols):
            yield arrow_block(self.pl, batch, first, self.wanted, self.kept)
            first += batch.num_rows


def arrow_block(pl, batch, first: int, wanted: dict[str, str], kept: list[str]) -> Block:
    """An Arrow record batch (or table) as a Block: numbers as float64 views, a null a bad row."""
    import pyarrow as pa

    columns, bad = {}, {}
    for c, v in wanted.items():
        arr = batch.column(c)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if arr.type != pa.float64():
            import pyarrow.compute as pc  # (0.1 s to import: only for a column to convert)

            arr = pc.cast(arr, pa.float64())
        # a view of Arrow's buffer (its to_numpy costs 75 ms a call in pyarrow 26)
        values = np.frombuffer(arr.buffers()[1], dtype=np.float64, count=len(arr),
                               offset=arr.offset * 8)
        if arr.null_count:  # (from the validity bitmap: is_null and fill_null import pandas)
            valid = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8),
                                  count=arr.offset + len(arr), bitorder="little")[arr.offset:]
            nulls = np.flatnonzero(valid == 0)
            for i in nulls.tolist():
                bad.setdefault(i, f"field '{c}' is empty")
            values = values.copy()
            values[nulls] = np.nan
        columns[v] = values
    keep = pl.from_arrow(batch.select(kept)) if kept else None
    return Block(first, batch.num_rows, columns, bad, keep)
