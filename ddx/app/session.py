"""A REPL session's state, and running source text in it chunk by chunk (used by repl and run)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import numpy as np

from ..errors import DdxError, DdxRuntimeError, PythonSyntaxError
from ..graph.journal import Journal
from ..graph.program import Evaluator
from ..graph.tensor import Tensor
from ..lang.syntax import parse
from ..ops import vml
from ..out.torchfmt import Addresses
from . import dialects, surface
from .surface import show
from .values import NOTHING


def scan(line: str, depth: int = 0, quote: str | None = None) -> tuple[int, str | None, str]:
    """One line of a script as Python's tokenizer sees it: (the bracket depth after it, the
    triple quote still open after it or None, its code without the comment). Brackets and
    '#' inside strings count for nothing; a triple-quoted string may span lines."""
    i, n = 0, len(line)
    while i < n:
        if quote is not None:  # inside a triple-quoted string
            j = i
            while j < n and not line.startswith(quote, j):
                j += 2 if line[j] == "\\" else 1
            if j >= n:
                return depth, quote, line
            i, quote = j + 3, None
            continue
        c = line[i]
        if c == "#":
            return depth, None, line[:i]
        if c in "\"'":
            if line.startswith(c * 3, i):
                quote, i = c * 3, i + 3
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth > 0:
            depth -= 1
        i += 1
    return depth, quote, line


_COMPOUND = re.compile(r"\s*(?:if|elif|else|while|for|def|class|try|except|finally|with)\b")


class Continuation:
    """Whether a statement typed so far goes on: its open brackets, a trailing ':' or '\\',
    and whether a block was opened; kept line by line, so a pasted cell of n lines costs n."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # a triple-quoted string open across lines
        self.block = False
        self.last = ""
        self.count = 0

    def add(self, line: str) -> bool:
        """Take one more line; True while the statement needs more."""
        self.depth, self.quote, code = scan(line, self.depth, self.quote)
        code = code.rstrip()
        if code.endswith(":") or (self.count == 0 and _COMPOUND.match(code)):
            self.block = True  # (a one-line `while c: x += 1` waits for a blank line too)
        self.last = line
        self.count += 1
        return self.depth > 0 or self.quote is not None or code.endswith(("\\", ":")) or (
            line.strip() != "" and self.block) or (
            self.count == 1 and code.lstrip().startswith("@"))

    def indent(self) -> str:
        """The next line's indentation, as Python's REPL and editors give it."""
        lead = self.last[:len(self.last) - len(self.last.lstrip())]
        code = self.last.split("#", 1)[0].rstrip()
        return lead + "    " if code.endswith(":") else lead


def needs_more(lines: list[str]) -> bool:
    """Whether a statement typed so far continues on the next line (linear in its lines)."""
    state = Continuation()
    more = False
    for line in lines:
        more = state.add(line)
    return more


def _opens_block(lines: list[str]) -> bool:
    return any(line.split("#", 1)[0].rstrip().endswith(":") for line in lines)


_CONTINUES = re.compile(r"(?:except|elif|else|finally)\b")


def is_magic(line: str) -> bool:
    """A notebook's ``%matplotlib inline`` (IPython's line magic): nothing for ddx to do."""
    return line.startswith("%matplotlib")


def chunks(text: str) -> Iterator[tuple[int, str]]:
    """Split a script into statements: (0-based first line, text), a ``with`` block with its body."""
    lines = text.split("\n")
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip() or lines[i].lstrip().startswith("#") or is_magic(lines[i]):
            i += 1
            continue
        start = i
        depth, quote, prev = scan(lines[i])
        i += 1
        while i < n:
            prev = prev.rstrip()
            line = lines[i]
            if depth > 0 or quote is not None or prev.endswith("\\") or prev.endswith(":") or \
                    prev.lstrip().startswith("@"):
                pass
            elif line.strip() and _CONTINUES.match(line):  # except/elif/else/finally
                pass
            elif line.strip() and line[0] in " \t":
                pass
            elif not line.strip() or line.lstrip().startswith("#"):
                j = i
                while j < n and (not lines[j].strip() or lines[j].lstrip().startswith("#")):
                    j += 1
                if not (j < n and (lines[j][:1] in (" ", "\t") and lines[j].strip() or
                                   _CONTINUES.match(lines[j]))):
                    break
                i = j  # the blank lines belong to the block: skip them all (linear, not n^2)
                continue
            else:
                break
            depth, quote, prev = scan(line, depth, quote)
            i += 1
        yield start, "\n".join(lines[start:i])


def foreign_error(exc: Exception, source: str, stmt=None) -> DdxError:
    """An exception that is not one of ddx's own, as a located ddx error.

    numpy words its refusals well ("Integers to negative integer powers are not allowed."),
    so a ValueError and its kin keep their text; anything else is a bug in ddx, reported as
    such, but the session still goes on."""
    start, end = (stmt.start, stmt.end) if stmt is not None else (None, None)
    if isinstance(exc, MemoryError):
        return DdxRuntimeError("out of memory", start=start, end=end, source=source,
                               hint="the statement needs more memory than there is; nothing "
                                    "it did was kept")
    if isinstance(exc, RecursionError):
        return DdxRuntimeError("input nested too deeply", start=start, end=end, source=source)
    if isinstance(exc, (ValueError, IndexError, ArithmeticError)):
        return DdxRuntimeError(str(exc) or type(exc).__name__, start=start, end=end,
                               source=source)
    return DdxError(f"internal error: {type(exc).__name__}: {exc}", start=start, end=end,
                    source=source, hint="please report this input; nothing the statement did "
                                        "was kept")


class Session:
    """Names bound so far, and the output sinks; a failed statement leaves the state unchanged."""

    def __init__(self, out: Callable[[str], None], err: Callable[[str], None], *,
                 dtype=np.float32) -> None:
        self.out = out
        self.err = err
        self.dtype = dtype
        self.reset()

    def reset(self) -> None:
        self.partial = ""  # an unfinished printed line (print(..., end=""))
        self.chunk_lines: dict[str, int] = {}  # a script chunk's text: the lines before it
        self.hold_partial = False  # a script: the line may go on in the next statement
        self.echo = True  # a bare expression prints its value (not in a .py file: python's)
        self.env: dict = {}
        self.addresses = Addresses()
        self.nodes: list[Tensor] = []

    def evaluator(self, program) -> Evaluator:
        ev = Evaluator(program, self.env, dtype=self.dtype, surface=surface)
        ev.session = self  # (torch.set_default_dtype changes the session's)
        ev.python_values = not self.echo  # a .py file: x = 2.0 is Python's float, as python's
        ev.partial = self.partial  # print(..., end="") in an earlier statement of a script
        ev.addresses = self.addresses
        ev.nodes = self.nodes
        return ev

    def report(self, exc: DdxError, line_offset: int = 0, *, numbered: bool = False) -> None:
        """An error, numbered by its own chunk's lines: one raised in the body of a function
        an earlier chunk defined is on that chunk's lines, not the calling statement's."""
        from ..errors import format_error

        exc.line_offset = self.chunk_lines.get(exc.source, line_offset) \
            if exc.source is not None else line_offset
        self.err(format_error(exc, numbered=numbered))

    def run(self, text: str, *, line_offset: int = 0, numbered: bool = False) -> bool:
        """Run one chunk of statements, printing results; False if a statement failed.

        Each statement is a transaction: what it changed (bindings, .grad, requires_grad,
        freed graphs, values changed in place) is journaled, and undone if it fails in any
        way, Ctrl-C included. Any error is reported; none ends the session. float64 math is
        PyTorch's here, MKL's where the extra is installed (ddx/ops/vml.py)."""
        token = vml.torch_float64()
        try:
            return self._run(text, line_offset, numbered)
        finally:
            vml.reset_float64(token)

    def _run(self, text: str, line_offset: int, numbered: bool) -> bool:
        if is_magic(text.strip()) and "\n" not in text.strip():
            return True
        try:
            program = parse(text)
        except DdxError as exc:
            if text.lstrip().startswith(("val ", "var ", "let ")):
                exc.hint = "drop the 'val': write x = ..."
            self.report(exc, line_offset, numbered=numbered)
            return False
        except Exception as exc:  # noqa: BLE001 - a session never ends on an error
            self.report(foreign_error(exc, text), line_offset, numbered=numbered)
            return False
        if numbered:
            self.chunk_lines[program.source] = line_offset  # (the latest of equal texts)
        ev = self.evaluator(program)
        for stmt in program.stmts:
            journal = ev.journal = Journal()
            made = len(self.nodes)
            try:
                result = ev.run_stmt(stmt)
                shown = show(ev, result) if self.echo and stmt.kind == "expr" and \
                    result is not NOTHING and result is not None else None  # (None: nothing)
            except BaseException as exc:
                journal.rollback()
                del self.nodes[made:]
                ev.journal = None
                self._flush(ev, end=True)
                if not isinstance(exc, Exception):
                    raise  # Ctrl-C, exit: the caller's (with the state as it was)
                if not isinstance(exc, DdxError):
                    exc = foreign_error(exc, program.source, stmt)
                self.report(exc, line_offset, numbered=numbered)
                return False
            ev.journal = None
            self._flush(ev, end=shown is not None)
            if shown is not None:
                self.out(shown)
        self._flush(ev, end=not self.hold_partial)
        self.partial = ev.partial
        return True

    def _flush(self, ev: Evaluator, *, end: bool = False) -> None:
        """What the statement printed; print(..., end="")'s unfinished line waits for the
        rest of its line (or the end of the chunk)."""
        if end and ev.partial:
            ev.printed.append(ev.partial)
            ev.partial = ""
        for text in ev.printed:
            self.out(text)
        ev.printed.clear()
        for message in dict.fromkeys(ev.warnings):  # (Python shows a warning once per
            self.err(f"warning: {message}")  # place: a loop's statement warns once)
        ev.warnings.clear()

    def run_script(self, text: str, *, bail: bool = False, filename: str | None = None) -> int:
        """Run a whole script; the number of statements that failed. The seed's Scala-like
        and Java listings are rewritten to Python first (by the file's extension or by their
        own look: ddx/app/dialects.py), line for line."""
        dialect = dialects.detect(text, filename)
        if dialect != dialects.PYTHON:
            text = dialects.to_python(text, dialect)
        # `ddx run file.py` prints what `python file.py` prints: bare expressions are silent
        echo, self.echo = self.echo, not (filename or "").endswith(".py")
        parts = list(chunks(text))
        if (filename or "").endswith(".py") and not self._parses(parts):
            return 1  # (python refuses a file with a syntax error anywhere: it runs none of it)
        failed = 0
        self.hold_partial = True
        try:
            for first, chunk in parts:
                if not self.run(chunk, line_offset=first, numbered=True):
                    failed += 1
                    if bail:
                        break
        finally:
            self.hold_partial = False
            self.echo = echo
            if self.partial:
                self.out(self.partial)
                self.partial = ""
        return failed

    def _parses(self, parts: list) -> bool:
        """Whether no chunk of a script has a syntax error that Python refuses a file for
        (PythonSyntaxError); the first one reported if one has. ddx's other syntax errors
        (Python it does not speak) are reported when their chunk runs, and the rest runs.
        (parse keeps the programs: run parses each again from its cache.)"""
        for first, chunk in parts:
            if is_magic(chunk.strip()) and "\n" not in chunk.strip():
                continue
            try:
                parse(chunk)
            except PythonSyntaxError as exc:
                self.report(exc, first, numbered=True)
                return False
            except Exception:  # noqa: BLE001, S112 - reported when the chunk runs
                continue
        return True

    def tensors(self) -> list[tuple[str, Tensor]]:
        return [(k, v) for k, v in self.env.items() if isinstance(v, Tensor)]
