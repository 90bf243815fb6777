"""Streaming numeric CSV / JSON Lines in chunks: the reader and writer ddx batch uses (and its
benchmark baseline uses too, so the comparison measures the engine, not the I/O)."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Iterator
from typing import IO

import numpy as np

from ..errors import suggest

CHUNK_ROWS = 65536


class Chunk:
    """Rows [first, first + n) of the data: one float64 column per variable, and the bad rows."""

    __slots__ = ("first", "n", "columns", "bad")

    def __init__(self, first: int, n: int, columns: dict[str, np.ndarray],
                 bad: dict[int, str]) -> None:
        self.first = first
        self.n = n
        self.columns = columns
        self.bad = bad  # index within the chunk -> why the row is unusable


def csv_header(stream: IO[str]) -> list[str]:
    line = stream.readline()
    if not line:
        return []
    return [name.strip().strip('"').strip() for name in next(csv.reader([line]))]


def parse_rows_slowly(lines: list[str], width: int, wanted: list[int],
                       names: list[str]) -> tuple[np.ndarray, dict[int, str]]:
    """Row by row, so that every bad row is found and named; bad rows become nan."""
    out = np.full((len(lines), len(wanted)), np.nan)
    bad: dict[int, str] = {}
    for i, line in enumerate(lines):
        text = line.rstrip("\r\n")
        if not text.strip():
            bad[i] = "empty row"
            continue
        fields = next(csv.reader([text]))
        if len(fields) != width:
            bad[i] = f"expected {width} fields, got {len(fields)}"
            continue
        for k, col in enumerate(wanted):
            field = fields[col].strip()
            try:
                out[i, k] = float(field)
            except ValueError:
                bad[i] = f"field '{names[k]}' is not a number: {field[:40]!r}"
                break
    return out, bad


def read_csv(stream: IO[str], header: list[str], names: list[str], *,
             chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The columns ``names`` of a CSV (after its header line), chunk by chunk."""
    wanted = [header.index(n) for n in names]
    width = len(header)
    first = 1  # data rows are numbered from 1, the header being row 0
    while True:
        lines = list(itertools.islice(stream, chunk_rows))
        if not lines:
            return
        bad: dict[int, str] = {}
        try:
            data = np.loadtxt(lines, delimiter=",", usecols=wanted, ndmin=2, comments=None,
                              dtype=np.float64)
            if data.shape[0] != len(lines):
                raise ValueError("blank rows")
        except ValueError:
            data, bad = parse_rows_slowly(lines, width, wanted, names)
        columns = {n: np.ascontiguousarray(data[:, k]) for k, n in enumerate(names)}
        yield Chunk(first, len(lines), columns, bad)
        first += len(lines)


def read_jsonl(stream: IO[str], names: list[str], *,
               chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    first = 1
    while True:
        lines = list(itertools.islice(stream, chunk_rows))
        if not lines:
            return
        data, bad = parse_json_rows(lines, names)
        yield Chunk(first, len(lines), {n: data[:, k] for k, n in enumerate(names)}, bad)
        first += len(lines)


_JSON_TYPES = {list: "a list", dict: "an object", str: "a string", type(None): "null"}


def _json_number(name: str, value) -> float:
    """A JSON field as a float, or ValueError in ddx's words (what it is instead)."""
    if isinstance(value, (int, float)):  # (true and false are 1 and 0, as float() takes them)
        return float(value)
    if isinstance(value, str):  # "2.5" is read as a CSV field would be
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"field '{name}' is not a number: {value[:40]!r}") from None
    raise ValueError(f"field '{name}' is {_JSON_TYPES.get(type(value), 'not a number')}, "
                     "not a number")


def parse_json_rows(lines: list[str], names: list[str]) -> tuple[np.ndarray, dict[int, str]]:
    """JSON Lines rows one by one: the ``names`` fields as floats; bad rows become nan, with
    what is wrong in ddx's words (the row number is added by the caller)."""
    data = np.full((len(lines), len(names)), np.nan)
    bad: dict[int, str] = {}
    for i, line in enumerate(lines):
        if not line.strip():
            bad[i] = "empty row"
            continue
        try:
            row = json.loads(line.rstrip("\r\n"))  # (a column on the row's own line)
        except ValueError as exc:  # (JSONDecodeError, and bytes that are not UTF-8)
            where = f" at column {exc.colno}" if hasattr(exc, "colno") else ""
            bad[i] = f"not valid JSON{where}: {getattr(exc, 'msg', str(exc)).lower()}"
            continue
        if not isinstance(row, dict):
            bad[i] = f"a JSON Lines row must be an object, not {_JSON_TYPES.get(type(row), 'a number')}"
            continue
        try:
            for k, n in enumerate(names):
                if n not in row:
                    close = next((k for k in row if k.lower() == n.lower()), None) \
                        or suggest(n, row)
                    raise ValueError(f"no field '{n}'" + (f"; did you mean '{close}'?" if close
                                                           else ""))
                data[i, k] = _json_number(n, row[n])
        except ValueError as exc:
            bad[i] = str(exc)
    return data, bad


def short_text(text: str) -> str:
    """Python's repr of a float64 as Polars writes it, which differs only below 1e-4 and for
    nan: ``0.00001`` for ``1e-05`` (from 1e-5 to 1e-4), ``1.5e-7`` for ``1.5e-07``, ``NaN``.
    Both are the shortest text that reads back as the same number."""
    if text == "nan":
        return "NaN"
    mantissa, _, exponent = text.partition("e")
    if exponent == "-05":
        sign = "-" if mantissa[0] == "-" else ""
        return sign + "0.0000" + mantissa.lstrip("-").replace(".", "")
    if exponent.startswith("-0"):
        return mantissa + "e-" + exponent[2:]
    return text


def repr_differs(values: np.ndarray) -> np.ndarray:
    """Where Polars' text of a float64 may not be its repr: nan (no comparison holds for it)
    and the magnitudes from 1e-10 to 1e-4 (a margin below the band short_text mends)."""
    ax = np.abs(values)
    outside = ax < 1e-10
    outside |= ax >= 1e-4
    return np.logical_not(outside, out=outside)


def _text_column(values: np.ndarray, bad: dict[int, str]) -> list[str]:
    texts = list(map(repr, values.tolist()))
    for i in np.flatnonzero(repr_differs(values)).tolist():
        texts[i] = short_text(texts[i])
    for i in bad:
        texts[i] = ""
    return texts


def write_csv(out: IO[str], columns: list[np.ndarray], bad: dict[int, str]) -> None:
    """Rows of exact numbers, each the shortest text that reads back as it, written as Polars
    writes them (``short_text``: the data extra's writer writes the same bytes); a bad row is
    written with empty fields."""
    texts = [_text_column(c, bad) for c in columns]
    out.write("\n".join(map(",".join, zip(*texts))))
    out.write("\n")


def write_jsonl(out: IO[str], names: list[str], columns: list[np.ndarray],
                bad: dict[int, str], first: int = 1) -> None:
    """One object per row: ``"row"`` (the data row's number, from ``first``), then the results,
    or ``"error"`` for a bad row."""
    rows = zip(*[c.tolist() for c in columns])
    lines = []
    for i, row in enumerate(rows):
        if i in bad:
            lines.append(json.dumps({"row": first + i, "error": bad[i]}))
            continue
        record = {"row": first + i}
        record.update((n, v if math.isfinite(v) else repr(v)) for n, v in zip(names, row))
        lines.append(json.dumps(record))
    out.write("\n".join(lines) + "\n")
