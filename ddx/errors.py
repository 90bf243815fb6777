"""Typed ddx errors: each carries a source span and an optional hint; exit codes are chosen in cli.py."""

from __future__ import annotations


class DdxError(Exception):
    """An error a user caused; ``kind`` names it in JSON output."""

    kind = "Error"
    exit_code = 1

    def __init__(self, message: str, *, start: int | None = None, end: int | None = None,
                 hint: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end
        self.hint = hint
        self.source = source

    def at(self, start: int | None, end: int | None = None, source: str | None = None) -> DdxError:
        """Attach a span if none is set yet; returns self so it can be raised inline."""
        if self.start is None and start is not None:
            self.start, self.end = start, end
        if self.source is None:
            self.source = source
        return self

    line_offset = 0  # lines before this source in its file (scripts run chunk by chunk)

    def location(self) -> tuple[int | None, int | None]:
        """1-based (line, column) of the span start, when known."""
        if self.start is None or self.source is None:
            return None, None
        before = self.source[: self.start]
        line = before.count("\n") + 1 + self.line_offset
        column = self.start - (before.rfind("\n") + 1) + 1
        return line, column

    def to_json(self) -> dict:
        line, column = self.location()
        out = {"type": self.kind, "message": self.message, "line": line, "column": column}
        if self.hint:
            out["hint"] = self.hint
        return out


class DdxSyntaxError(DdxError):
    kind = "SyntaxError"
    exit_code = 2


class PythonSyntaxError(DdxSyntaxError):
    """A syntax error Python's own compiler reports too ('return' outside function, a
    positional argument after a keyword one), so `ddx run FILE.py` runs none of the file, as
    python refuses it; ddx's other syntax errors may be Python it does not speak yet, and stop
    only their statement."""


class DdxUsageError(DdxError):
    kind = "UsageError"
    exit_code = 2


class DdxNameError(DdxError):
    kind = "NameError"


class DdxTypeError(DdxError):
    kind = "TypeError"


class DdxShapeError(DdxError):
    kind = "ShapeError"


class DdxValueError(DdxError):
    kind = "ValueError"


class DdxRuntimeError(DdxError):
    """PyTorch's RuntimeError situations, worded as PyTorch words them."""

    kind = "RuntimeError"


class DdxOutputError(DdxError):
    """A result could not be written (no space, no folder, no permission ...)."""

    kind = "OutputError"

    def __init__(self, message: str, *, hint: str | None = None, stdout: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.stdout = stdout  # standard output itself failed: nothing more can go there


# usage errors the one-liner and batch job lines share, so both word them alike

def missing_expression() -> DdxUsageError:
    return DdxUsageError("missing expression", hint='try: ddx "(w*x+b)^2" w=3 x=2 b=1')


def not_a_binding(item: str) -> DdxUsageError:
    return DdxUsageError(f"expected NAME=VALUE, got {item!r}",
                         hint='quote the expression if it contains spaces, e.g. ddx "w * x" w=3 '
                              "x=2")


def no_such_option(option: str) -> DdxUsageError:
    return DdxUsageError(f"no such option: {option}",
                         hint="see ddx --help; an expression that starts with '--' goes after "
                              "a '--': ddx -- --x x=1")


def option_needs_value(option: str) -> DdxUsageError:
    return DdxUsageError(f"option {option} needs a value")


def hessian_needs_scalar() -> DdxUsageError:
    return DdxUsageError("--hessian needs a scalar output",
                         hint="reduce it first, e.g. sum(...), or use --jacobian")


def suggest(word: str, choices) -> str | None:
    """The closest of ``choices`` to ``word``, for a 'did you mean' hint."""
    import difflib

    close = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return close[0] if close else None


SHOWN = 100  # characters of a long source line shown on each side of the caret


def format_error(exc: DdxError, *, numbered: bool = False) -> str:
    """``error: ...``, then for a located error the source line with a caret, then the hint;
    control and bidi characters escaped (``\\x1b``), as everything ddx shows on a terminal."""
    from .textsafe import pad_under, safe_text

    lines = [f"error: {exc.message}"]
    line, column = exc.location()
    if line is not None and exc.source is not None:
        text = exc.source.split("\n")[line - 1 - exc.line_offset]
        many = numbered or exc.source.rstrip("\n").count("\n") > 0
        prefix = f"  {line} | " if many else "  "
        width = 1
        if exc.end is not None and exc.start is not None and exc.end > exc.start:
            width = max(1, min(exc.end - exc.start, len(text) - column + 1, SHOWN))
        first, last = max(0, column - 1 - SHOWN), min(len(text), column - 1 + width + SHOWN)
        before, marked = text[first:column - 1], text[column - 1:column - 1 + width]
        shown = ("..." if first else "") + text[first:last] + ("..." if last < len(text) else "")
        lines.append(prefix + safe_text(shown))
        caret = "^" * max(1, len(pad_under(marked)))
        lines.append(" " * len(prefix) + ("   " if first else "") + pad_under(before) + caret)
    if exc.hint:
        lines.append(f"hint: {exc.hint}")
    return safe_text("\n".join(lines))
