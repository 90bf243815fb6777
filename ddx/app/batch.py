"""ddx batch: many one-liner jobs in, JSON Lines out in order; or one expression over a data file."""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

import numpy as np

from ..errors import (
    DdxError,
    DdxUsageError,
    hessian_needs_scalar,
    missing_expression,
    no_such_option,
    not_a_binding,
    option_needs_value,
)
from ..graph.program import CONSTANTS, DTYPES, FUNCTIONS, compile_expr
from ..lang.syntax import Program, parse
from ..replay.cache import TEMPLATES
from ..replay.lean import compile_source
from .api import PLAIN_NUMBER, TRACE_DTYPES, Trace, constant

MAX_LINE = 1 << 20  # a job line longer than 1 MiB is reported, not parsed
FLAGS = {"--retain-grad": "retain_grad", "--forward": "forward", "--check": "check",
         "--jacobian": "jacobian", "--hessian": "hessian", "--explain": "explain",
         "--json": None, "--no-color": None}
VALUED = {"--wrt": "wrt", "--no-grad": "no_grad", "--grad-output": "grad_output",
          "--dtype": "dtype"}


_WORD = re.compile(r"""(?:[^\s"'\\]+|"[^"\\]*"|'[^']*')+""")


_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def _unquote(m: re.Match) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


# the usual job line: a double-quoted expression, then plain words (NAME=VALUE, options)
_USUAL = re.compile(r"""\s*"([^"\\]*)"((?:\s+[^\s"'\\]+)*)\s*""")


def _split(text: str) -> list[str]:
    """Shell-style words. The usual line is one match; other lines without backslashes are
    split by a regex (shlex is slow per line); with them, shlex itself."""
    usual = _USUAL.fullmatch(text)
    if usual is not None:
        return [usual[1], *usual[2].split()]
    return _split_words(text)


def _split_words(text: str) -> list[str]:
    if "\\" not in text:
        words = _WORD.findall(text)
        if not _WORD.sub("", text).strip():  # every character belongs to a word: no stray quote
            return [_QUOTED.sub(_unquote, w) if '"' in w or "'" in w else w for w in words]
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise DdxUsageError(f"bad quoting: {exc}") from None


_JSON_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true/false",
               type(None): "null", int: "a number", float: "a number"}


def _json_array(what: str, value: Any) -> None:
    """A JSON number or rectangular list of numbers, checked level by level (no recursion)."""
    level = [value]
    depth = 0
    while level and type(level[0]) is list:
        n = len(level[0])
        below: list = []
        for item in level:
            if type(item) is not list or len(item) != n:
                raise DdxUsageError(f"{what} is a ragged list: the items at depth {depth + 1} "
                                    "are not all lists of one length")
            below.extend(item)
        depth += 1
        if depth > 64:
            raise DdxUsageError(f"{what} nests more than 64 lists deep (a tensor has at most "
                                "64 dimensions)")
        level = below
    for item in level:
        if type(item) not in (int, float):
            kind = _JSON_KINDS.get(type(item), "that")
            raise DdxUsageError(f"{what} must be a number, a list of numbers or an expression "
                                f"string, not {kind}" if depth == 0 else
                                f"{what} is a ragged list: it mixes lists and non-lists"
                                if type(item) is list else
                                f"{what} holds {kind}: a list holds numbers only")


def _json_names(key: str, value: Any) -> None:
    if isinstance(value, str) or (type(value) is list and all(isinstance(v, str) for v in value)):
        return
    if type(value) is list:
        odd = next(v for v in value if not isinstance(v, str))
        raise DdxUsageError(f'"{key}" must list names (strings), not '
                            f"{_JSON_KINDS.get(type(odd), 'that')}")
    raise DdxUsageError(f'"{key}" must be a string ("a,b") or a list of names, not '
                        f"{_JSON_KINDS.get(type(value), 'that')}")


def parse_job(text: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A job line: one-liner arguments (shell quoting) or a JSON object."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DdxUsageError(f"bad JSON job: {exc.msg} at column {exc.colno}") from None
        except RecursionError:
            raise DdxUsageError("bad JSON job: nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("expr"), str):
            raise DdxUsageError('a JSON job needs "expr" (a string)')
        bindings = obj.get("bindings") or {}
        if not isinstance(bindings, dict):
            raise DdxUsageError('"bindings" must be an object')
        for name, value in bindings.items():
            if not isinstance(value, str):
                _json_array(f'"bindings": {name}', value)
        opts = {k: obj[k] for k in ("wrt", "no_grad", "grad_output", "dtype", "retain_grad",
                                    "forward", "check", "jacobian", "hessian", "explain")
                if k in obj}
        for key in ("wrt", "no_grad"):
            if key in opts:
                _json_names(key, opts[key])
        for key in ("retain_grad", "forward", "check", "jacobian", "hessian", "explain"):
            if key in opts and type(opts[key]) is not bool:
                raise DdxUsageError(f'"{key}" must be true or false, not '
                                    f"{_JSON_KINDS.get(type(opts[key]), 'that')}")
        if "dtype" in opts and not isinstance(opts["dtype"], str):
            raise DdxUsageError(f'"dtype" must be a string ("float64" or "float32"), not '
                                f"{_JSON_KINDS.get(type(opts['dtype']), 'that')}")
        grad_output = opts.get("grad_output")
        if grad_output is not None and not isinstance(grad_output, str):
            _json_array('"grad_output"', grad_output)
            opts["grad_output"] = json.dumps(grad_output)
        return obj["expr"], bindings, opts
    args = _split(stripped)
    opts: dict[str, Any] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        key, eq, inline = a.partition("=")
        if a == "--":  # the rest are arguments, as on the command line: -- --x x=1
            rest.extend(args[i + 1:])
            break
        if a in FLAGS:
            if FLAGS[a]:
                opts[FLAGS[a]] = True
        elif key in VALUED:
            if eq:
                opts[VALUED[key]] = inline
            elif i + 1 < len(args):
                i += 1
                opts[VALUED[key]] = args[i]
            else:
                raise option_needs_value(key)
        elif a.startswith("--"):
            raise no_such_option(key)
        else:
            rest.append(a)
        i += 1
    if not rest:
        raise missing_expression()
    bindings = {}
    for item in rest[1:]:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise not_a_binding(item)
        bindings[name] = value
    return rest[0], bindings, opts


def run_job(expr: str, bindings: dict, opts: dict):
    """Evaluate and differentiate one job; returns the Trace."""
    trace = Trace(expr, bindings, wrt=opts.get("wrt"), no_grad=opts.get("no_grad"),
                  dtype=opts.get("dtype", "float64"), retain_grad=bool(opts.get("retain_grad")),
                  lean=False)  # a job's JSON lists every node: the graph is needed anyway
    if opts.get("hessian") and trace.output.value.size != 1:
        raise hessian_needs_scalar()
    vector_ok = opts.get("jacobian") and trace.output.value.size > 1 \
        and opts.get("grad_output") is None
    if trace.output.requires_grad and not vector_ok:
        trace.backward(opts.get("grad_output"))
    for key, method in (("forward", trace.forward_mode), ("check", trace.check),
                        ("jacobian", trace.jacobian), ("hessian", trace.hessian),
                        ("explain", trace.explain)):
        if opts.get(key) and trace.output.requires_grad:
            method()
    return trace


def job_lines(stream: IO[bytes]) -> Iterable[tuple[int, str | DdxError]]:
    """(line number, text) for every job line; undecodable or huge lines become errors."""
    for number, raw in enumerate(stream, 1):
        if len(raw) > MAX_LINE:
            yield number, DdxUsageError(f"line too long ({len(raw)} bytes; the limit is "
                                        f"{MAX_LINE})")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, DdxUsageError(f"invalid UTF-8 at byte {exc.start}")
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        yield number, text


REPLAYABLE = frozenset(("wrt", "no_grad", "grad_output", "dtype"))
_FLOAT64 = np.dtype(np.float64)


def _dtype(opts: dict) -> np.dtype | None:
    """A job's dtype: float64 unless --dtype says otherwise; None for one a trace refuses."""
    if "dtype" not in opts:
        return _FLOAT64
    return np.dtype(DTYPES[opts["dtype"]]) if opts["dtype"] in TRACE_DTYPES else None


class Replayer:
    """Templates of recorded graphs, by expression text, options and binding shapes."""

    def __init__(self) -> None:
        self.templates = TEMPLATES  # (the library's cache: keys carry the options they differ by)

    def key_and_values(self, expr: str, bindings: dict, opts: dict):
        if opts and not REPLAYABLE.issuperset(opts) or not bindings:
            return None, None
        dtype = _dtype(opts)
        if dtype is None:  # (the ordinary path reports it)
            return None, None
        values = []
        for value in bindings.values():
            if isinstance(value, str):
                text = value.strip()
                arr = (np.asarray(float(text), dtype=dtype) if PLAIN_NUMBER.fullmatch(text)
                       else constant(text, dtype=dtype, what="binding ="))
            else:
                arr = np.asarray(value, dtype=dtype)
            values.append(arr)
        key = (expr, tuple(bindings), tuple([a.shape for a in values]),
               tuple(sorted([(k, str(v)) for k, v in opts.items()])) if opts else ())
        return key, values

    def run(self, expr: str, bindings: dict, opts: dict):
        """The written-out JSON when a template replays this job, else a Trace."""
        try:
            key, values = self.key_and_values(expr, bindings, opts)
        except DdxError:
            key = values = None  # the ordinary path reports the error in its own words
        template = self.templates.get(key) if key is not None else None
        if template is None and key is not None and set(opts) <= {"dtype"}:
            template = self.compile(expr, list(bindings), values, opts)
        if template is not None:
            doc = template.run(values)
            if doc is not None:
                self.keep(key, lambda: template)
                return doc
        trace = run_job(expr, bindings, opts)
        if key is not None and key not in self.templates and not trace.warnings:
            # (a job with domain warnings makes no template: its numbers, not its shape, are odd)
            from ..replay.template import Template

            self.keep(key, lambda: Template.from_trace(trace, list(bindings)))
        return trace

    @staticmethod
    def compile(expr: str, names: list[str], values: list, opts: dict):
        """A template straight from the text (ddx/lean.py) for a job with a scalar output and
        no options, or None: that job runs the ordinary way, errors and all."""
        template = compile_source(expr, names, [v.shape for v in values], _dtype(opts))
        return template if template is not None and template.one is not None else None

    def keep(self, key, make: Callable) -> None:
        """Keep a template once its key comes back (one-off jobs would only fill memory)."""
        self.templates.keep(key, make)


def run_jobs(stream: IO[bytes], emit: Callable[[int, Any, DdxError | None], None], *,
             replay: bool = True) -> tuple[int, int]:
    """Run every job; ``emit(line, result, error)`` is called once per job, in input order.

    ``result`` is a Trace, or (with ``replay``) the written-out JSON (a ``JsonBody``) of a job
    that replayed the recorded graph of an earlier job with the same expression."""
    jobs = failed = 0
    replayer = Replayer() if replay else None
    for number, item in job_lines(stream):
        jobs += 1
        try:
            if isinstance(item, DdxError):
                raise item
            expr, bindings, opts = parse_job(item)
            trace = (replayer.run(expr, bindings, opts) if replayer is not None
                     else run_job(expr, bindings, opts))
        except DdxError as exc:
            failed += 1
            emit(number, None, exc)
            continue
        except RecursionError:
            failed += 1
            emit(number, None, DdxError("input nested too deeply"))
            continue
        except Exception as exc:  # noqa: BLE001 - one bad job never stops the others
            failed += 1
            emit(number, None, DdxError(f"internal error: {type(exc).__name__}: {exc}"))
            continue
        emit(number, trace, None)
    return jobs, failed


# --- one expression over a data file ---------------------------------------------------------

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
                csvio.write_jsonl(out, out_names, columns, chunk.bad)
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
        return open(path, encoding="utf-8", errors="surrogateescape", newline="")
    except OSError as exc:
        raise DdxUsageError(f"cannot read {path}: {exc.strerror}") from None


def now() -> float:
    return time.perf_counter()


def json_writer(out: IO[str]) -> Callable:
    """An ``emit`` for run_jobs that writes one JSON object per job."""
    def emit(line: int, result, error: DdxError | None) -> None:
        if error is None and isinstance(result, str):  # a replayed job: already written out
            out.write(f'{{"line": {line}, {result}\n')
            return
        body = {"error": error.to_json()} if error is not None else result.to_json()
        out.write(json.dumps({"line": line, **body}) + "\n")
    return emit


def human_writer(console) -> Callable:
    """An ``emit`` for run_jobs that prints the one-liner's Rich view per job."""
    from ..errors import format_error
    from ..out.render import one_liner

    def emit(line: int, result, error: DdxError | None) -> None:
        console.rule(f"line {line}")
        if error is not None:
            console.print(format_error(error), markup=False, highlight=False)
        else:
            console.print(one_liner(result), soft_wrap=True)
    return emit


class progress:
    """A Rich progress bar on stderr, only when stderr is a terminal and the input a file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.bar = None

    def __enter__(self):
        if not sys.stderr.isatty() or self.path == "-":
            return None
        from rich.console import Console
        from rich.progress import Progress

        self.bar = Progress(console=Console(stderr=True), transient=True)
        self.bar.start()
        task = self.bar.add_task("rows", total=None)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc) -> bool:
        if self.bar is not None:
            self.bar.stop()
        return False
