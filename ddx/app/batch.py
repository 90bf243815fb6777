"""ddx batch: many one-liner jobs in, JSON Lines out in order (replayed when they can be)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ..errors import DdxError, hessian_needs_scalar
from ..graph.values import DTYPES
from ..replay.cache import TEMPLATES
from ..replay.lean import compile_source
from .api import TRACE_DTYPES, Trace
from .bindings import PLAIN_NUMBER, constant
from .jobs import job_lines, parse_job


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
    if opts.get("symbolic") or opts.get("swell"):  # the formulas' keys in its JSON
        from .derivative import with_formulas

        return with_formulas(trace, expr, bindings, opts)
    return trace


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
        if key is not None and key not in self.templates and not trace.warnings \
                and not getattr(vars(trace).get("evaluator"), "drew_random", False):  # (rand)
            # (a job with domain warnings makes no template: its numbers, not its shape, are odd)
            from ..replay.template import Template

            self.keep(key, lambda: Template.from_trace(trace, list(bindings)))
        return trace

    @staticmethod
    def compile(expr: str, names: list[str], values: list, opts: dict):
        """A template straight from the text (ddx/replay/lean.py) for a job with a scalar output and
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


def now() -> float:
    return time.perf_counter()


def json_writer(out: IO[str]) -> Callable:
    """An ``emit`` for run_jobs that writes one JSON object per job."""
    def emit(line: int, result, error: DdxError | None) -> None:
        if error is None and isinstance(result, str):  # a replayed job: already written out
            out.write(f'{{"line": {line}, {result}\n')
            return
        if error is not None:
            out.write(json.dumps({"line": line, "error": error.to_json()}) + "\n")
        else:  # (the document is written out already: "line" goes in front)
            out.write(f'{{"line": {line}, {result.to_json()[1:]}\n')
    return emit


def human_writer(console) -> Callable:
    """An ``emit`` for run_jobs that prints the one-liner's Rich view per job."""
    from ..errors import format_error
    from ..out.render import one_liner
    from .cli_support import print_view

    def emit(line: int, result, error: DdxError | None) -> None:
        console.rule(f"line {line}")
        if error is not None:
            console.print(format_error(error), markup=False, highlight=False)
        else:
            print_view(console, one_liner(result))
    return emit
