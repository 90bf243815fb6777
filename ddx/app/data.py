"""ddx batch --expr over --csv / --jsonl: one expression's value and gradients for every row."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import IO

import numpy as np

from ..errors import DdxError, DdxUsageError
from ..graph.functions import FUNCTIONS
from ..graph.program import compile_expr
from ..graph.values import CONSTANTS
from ..lang.syntax import parse
from ..lang.tree import Program
from .api import Trace


def free_names(program: Program) -> list[str]:
    """Names the program reads before (or without) assigning them, in order of first use."""
    assigned: set[str] = set()
    seen: list[str] = []
    stack = list(reversed(program.stmts))
    while stack:
        stmt = stack.pop()
        if stmt.kind == "with":
            stack.extend(reversed(stmt.body))
        for node in compile_expr(stmt.value):
            if node.kind == "name" and node.value not in assigned and node.value not in seen:
                seen.append(node.value)
        if stmt.kind == "assign" and stmt.target.kind == "name":
            assigned.add(stmt.target.value)
    return seen


class DataRun:
    """Value and gradients of one expression for every row of a CSV / JSON Lines stream."""

    def __init__(self, expr: str, bindings: dict[str, str], *, fmt: str = "csv") -> None:
        self.expr = expr
        self.program = parse(expr)
        self.bindings = bindings
        self.fmt = fmt
        self.rows = 0
        self.bad_rows = 0
        self.warnings: dict[str, int] = {}
        self.rowwise: bool | None = None

    def variables(self, columns: list[str] | None) -> list[str]:
        names = []
        for n in free_names(self.program):
            if n in self.bindings:
                continue
            if columns is not None and n in columns:
                names.append(n)
            elif n in CONSTANTS or n in FUNCTIONS:
                continue
            elif columns is None:
                names.append(n)
            else:
                raise DdxUsageError(f"the expression uses '{n}', which is neither a column nor "
                                    "bound", hint="columns: " + ", ".join(columns))
        return names

    def compute(self, chunk) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        if self.rowwise is not False:
            trace = Trace(self.expr, {**self.bindings, **chunk.columns}, wrt=list(chunk.columns))
            if self.rowwise is None:  # decided once, on the first chunk's graph
                from ..ops import OPS

                self.rowwise = all(OPS[t.op].elementwise for t in trace.nodes
                                   if t.op not in ("leaf", "const")) \
                    and trace.output.value.shape in ((chunk.n,), ())
            if self.rowwise and trace.value.shape in ((chunk.n,), ()):
                self._note(trace.warnings)
                return self._grads(trace, chunk)
            self.rowwise = False
        return self._per_row(chunk)

    def _grads(self, trace, chunk):
        """Value and gradients of a chunk, using only what a replayed trace has too."""
        n = chunk.n
        value = np.broadcast_to(trace.value, (n,))
        grads = {}
        if trace.requires_grad:
            trace.backward(np.ones(trace.value.shape))
            self._note(trace.warnings)
        got = trace.grads if trace.requires_grad else {}
        for name in chunk.columns:
            g = got.get(name)
            grads[name] = np.zeros(n) if g is None else np.broadcast_to(g, (n,))
        return value, grads

    def _per_row(self, chunk):
        """Expressions that mix rows (reductions, products) run one row at a time."""
        n = chunk.n
        value = np.full(n, np.nan)
        grads = {name: np.full(n, np.nan) for name in chunk.columns}
        for i in range(n):
            if i in chunk.bad:
                continue
            row = {k: float(v[i]) for k, v in chunk.columns.items()}
            try:
                trace = Trace(self.expr, {**self.bindings, **row}, wrt=list(row))
                if trace.output.value.size != 1:
                    raise DdxUsageError("each row must give one value")
                value[i] = float(trace.output.value)
                if trace.output.requires_grad:
                    trace.backward()
                for name in row:
                    g = trace.leaves[name].grad
                    grads[name][i] = 0.0 if g is None else float(g)
                self._note(trace.warnings)
            except DdxError as exc:
                chunk.bad[i] = exc.message
        return value, grads

    def _note(self, warnings: list[str]) -> None:
        for w in warnings:
            self.warnings[w] = self.warnings.get(w, 0) + 1
        warnings.clear()

    def run(self, source: IO[str], out: IO[str], report: Callable[[str], None],
            progress: Callable[[int], None] | None = None) -> None:
        from . import csvio

        if self.fmt == "csv":
            header = csvio.csv_header(source)
            if not header:
                raise DdxUsageError("the CSV is empty (no header line)")
            names = self.variables(header)
            chunks = csvio.read_csv(source, header, names)
        else:
            names = self.variables(None)
            chunks = csvio.read_jsonl(source, names)
        out_names = ["value"] + [f"d_{n}" for n in names]
        if self.fmt == "csv":
            out.write(",".join(out_names) + "\n")
        for chunk in chunks:
            with np.errstate(all="ignore"):
                value, grads = self.compute(chunk)
            columns = [value] + [grads[n] for n in names]
            for i, why in sorted(chunk.bad.items()):
                report(f"row {chunk.first + i}: {why}")
            if self.fmt == "csv":
                csvio.write_csv(out, columns, chunk.bad)
            else:
                csvio.write_jsonl(out, out_names, columns, chunk.bad, chunk.first)
            self.rows += chunk.n
            self.bad_rows += len(chunk.bad)
            if progress is not None:
                progress(chunk.n)


def open_text(path: str) -> IO[str]:
    """A data file as text; bytes that are not UTF-8 make their row bad, not the run."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape",
                                newline="")
    try:
        text = open(path, encoding="utf-8", errors="surrogateescape", newline="")
    except OSError as exc:
        raise DdxUsageError(f"cannot read {path}: {exc.strerror}") from None
    from .progress import reading

    reading(path, text.buffer)  # (a progress bar reads how far it has got)
    return text


class progress:
    """Progress on stderr (ddx/app/progress.py): rows, and the percentage of the file read and
    an ETA for a file opened by open_text, the rate on stdin; only on a terminal, after 1 s.
    Yields ``advance(rows)``, or None when no progress is shown."""

    def __init__(self, path: str, raw=None) -> None:
        self.path = path
        self.raw = raw
        self.bar = None

    def __enter__(self):
        from .progress import data_progress

        self.bar = data_progress(self.path, self.raw)
        return self.bar.advance if self.bar.on else None

    def __exit__(self, *exc) -> bool:
        from .progress import READING

        READING.pop(self.path, None)
        if self.bar is not None:
            self.bar.close()
        return False
