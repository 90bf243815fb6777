"""parse(): source text to a Program, through the cached tables, the lexer and the LALR loop."""

from __future__ import annotations

from ..errors import DdxSyntaxError, PythonSyntaxError
from ..gcpause import paused
from .messages import explain
from .parser import Unexpected, lex, parse_tokens, tables
from .pyplaces import WORDS, misplaced
from .tree import Program

CACHE: dict[str, Program] = {}


def parse(source: str, *, cache: bool = True, keep: bool = True) -> Program:
    """Parse a program; the same text again returns the cached Program (and its compiled code).

    ``keep=False`` uses the cache but does not add to it: for callers that keep what they
    need themselves (thousands of cached one-off ASTs only lengthen the GC's passes)."""
    if cache:
        hit = CACHE.get(source)
        if hit is not None:
            return hit
    text = source if source.endswith("\n") else source + "\n"
    tab = tables()
    try:
        with paused():
            stmts = parse_tokens(lex(text, tab), tab)
    except Unexpected as exc:
        raise explain(exc, source) from None
    except DdxSyntaxError as exc:
        raise exc.at(exc.start, exc.end, source) from None
    except RecursionError:  # defensive: the LALR loop and Builder never recurse
        raise DdxSyntaxError("input nested too deeply", source=source) from None
    bad = misplaced(stmts)
    if bad is not None:
        raise PythonSyntaxError(WORDS[bad.kind]).at(bad.start, bad.end, source)
    program = Program(source, stmts)
    if cache and keep:
        if len(CACHE) > 4096:
            CACHE.clear()
        CACHE[source] = program
    return program
