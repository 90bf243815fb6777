"""The only module that imports Lark: the LALR parser (cached), the AST builder, syntax-error mapping."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from .errors import DdxSyntaxError
from .gcpause import paused

GRAMMAR_NAME = "ddx.lark"


class Ast:
    """An expression node. ``start``/``end`` span its text; ``ostart``/``oend`` include parentheses;
    ``pos`` is where an error about it points (the operator, the function name)."""

    __slots__ = ("kind", "value", "kids", "kw", "start", "end", "ostart", "oend", "pos")

    def __init__(self, kind: str, value, kids: tuple = (), kw: tuple = (), *, start: int, end: int,
                 pos: int | None = None) -> None:
        self.kind = kind
        self.value = value
        self.kids = kids
        self.kw = kw  # ((name, Ast, pos), ...)
        self.start = self.ostart = start
        self.end = self.oend = end
        self.pos = start if pos is None else pos

    def __repr__(self) -> str:
        return f"Ast({self.kind}, {self.value!r}, {self.kids!r})"


class Stmt:
    """A statement: ``assign`` (target, value), ``expr`` (value) or ``with`` (value=context, body)."""

    __slots__ = ("kind", "target", "value", "body", "start", "end")

    def __init__(self, kind: str, target: Ast | None, value: Ast, body: list | None = None, *,
                 start: int, end: int) -> None:
        self.kind = kind
        self.target = target
        self.value = value
        self.body = body or []
        self.start = start
        self.end = end


class Program:
    """A parsed source text: its statements, and the text for spans and labels."""

    __slots__ = ("source", "stmts", "_compiled")

    def __init__(self, source: str, stmts: list[Stmt]) -> None:
        self.source = source
        self.stmts = stmts
        self._compiled = None

    def text(self, node: Ast | Stmt) -> str:
        return self.source[node.start:node.end]


def _tokens(children) -> list:
    return [c for c in children if not isinstance(c, Token)]


def _slice_parts(children) -> list:
    """Split ``a:b:c`` children (Asts and COLON tokens) into [start, stop, step], None for gaps."""
    parts: list = [None]
    for c in children:
        if isinstance(c, Token):
            parts.append(None)
        else:
            parts[-1] = c
    return parts + [None] * (3 - len(parts))


@v_args(inline=True)
class Builder(Transformer):
    """Maps each grammar alias to an AST node; runs inside the LALR parser, so nothing recurses."""

    def number(self, tok):
        text = tok.value
        is_int = text.isdigit()
        value = int(text) if is_int else float(text)
        return Ast("num", (value, is_int), start=tok.start_pos, end=tok.end_pos)

    def name(self, tok):
        return Ast("name", tok.value, start=tok.start_pos, end=tok.end_pos)

    def paren(self, lpar, inner, rpar):
        inner.ostart, inner.oend = lpar.start_pos, rpar.end_pos
        return inner

    def binop(self, a, op, b):
        sym = "^" if op.value == "**" else op.value
        return Ast("bin", sym, (a, b), start=a.ostart, end=b.oend, pos=op.start_pos)

    def unop(self, op, a):
        return Ast("unop", op.value, (a,), start=op.start_pos, end=a.oend, pos=op.start_pos)

    def items(self, *children):
        return _tokens(children)

    def args(self, *children):
        return _tokens(children)

    def subscripts(self, *children):
        return _tokens(children)

    def vector(self, lsqb, items, rsqb):
        return Ast("vec", None, tuple(items), start=lsqb.start_pos, end=rsqb.end_pos)

    def kwarg(self, name, eq, value):
        return ("kw", name.value, value, name.start_pos)

    def _call(self, kind, fname, base, args, end):
        pos = [a for a in args if isinstance(a, Ast)]
        kw = tuple((a[1], a[2], a[3]) for a in args if isinstance(a, tuple))
        kids = tuple(([base] if base is not None else []) + pos)
        start = base.ostart if base is not None else fname.start_pos
        return Ast(kind, fname.value, kids, kw, start=start, end=end, pos=fname.start_pos)

    def call(self, fname, lpar, args, rpar):
        return self._call("call", fname, None, args, rpar.end_pos)

    def method(self, base, dot, fname, lpar, args, rpar):
        return self._call("method", fname, base, args, rpar.end_pos)

    def attr(self, base, dot, name):
        return Ast("attr", name.value, (base,), start=base.ostart, end=name.end_pos,
                   pos=name.start_pos)

    def slice(self, *children):
        return ("slice", *_slice_parts(children))

    def index(self, base, lsqb, subs, rsqb):
        return Ast("index", tuple(subs), (base,), start=base.ostart, end=rsqb.end_pos,
                   pos=lsqb.start_pos)

    def assign(self, target, eq, value):
        return Stmt("assign", target, value, start=target.ostart, end=value.oend)

    def expr_stmt(self, value):
        return Stmt("expr", None, value, start=value.ostart, end=value.oend)

    def simple_stmts(self, *children):
        return _tokens(children)

    def with_stmt(self, kw, ctx, colon, *body):
        stmts = [s for group in body for s in group] if body else []
        return [Stmt("with", None, ctx, stmts, start=kw.start_pos, end=ctx.oend)]

    def start(self, *groups):
        return [s for group in groups for s in group]


class Blocks(PostLex):
    """Indentation for ``with`` blocks, as Lark's Indenter, but never asserting on stray brackets."""

    always_accept = ("_NL",)
    OPEN = frozenset(("LPAR", "LSQB"))
    CLOSE = frozenset(("RPAR", "RSQB"))

    def process(self, stream):
        depth = 0
        levels = [0]
        token = None
        for token in stream:
            kind = token.type
            if kind == "_NL":
                if depth > 0:
                    continue
                yield token
                indent_str = token.value.rsplit("\n", 1)[-1] if "\n" in token.value else None
                if indent_str is None:
                    continue
                indent = len(indent_str.expandtabs(8))
                if indent > levels[-1]:
                    levels.append(indent)
                    yield Token.new_borrow_pos("_INDENT", indent_str, token)
                else:
                    while indent < levels[-1]:
                        levels.pop()
                        yield Token.new_borrow_pos("_DEDENT", indent_str, token)
                    if indent != levels[-1]:
                        raise DdxSyntaxError(
                            "inconsistent indentation: this line's indent matches no open block",
                            start=token.end_pos - len(indent_str) if token.end_pos else None)
                continue
            yield token
            if kind in self.OPEN:
                depth += 1
            elif kind in self.CLOSE and depth > 0:
                depth -= 1
        while len(levels) > 1:
            levels.pop()
            yield Token.new_borrow_pos("_DEDENT", "", token)


_PARSER: Lark | None = None


def grammar_text() -> str:
    """The grammar file: shipped inside the package, or read from the source tree."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammar" / GRAMMAR_NAME, here.parent / "grammar" / GRAMMAR_NAME):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return resources.files("ddx").joinpath("grammar", GRAMMAR_NAME).read_text(encoding="utf-8")


def parser() -> Lark:
    global _PARSER
    if _PARSER is None:
        _PARSER = Lark(grammar_text(), parser="lalr", lexer="contextual", transformer=Builder(),
                       postlex=Blocks(), cache=True, maybe_placeholders=False)
    return _PARSER


_CACHE: dict[str, Program] = {}

OPERATORS = {"ADDOP", "MULOP", "POWOP", "EQUAL", "COMMA", "COLON", "DOT"}
NAMES = {"ADDOP": "+", "MULOP": "*", "POWOP": "^", "EQUAL": "=", "COMMA": ",", "COLON": ":",
         "SEMI": ";", "DOT": ".", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}


def parse(source: str, *, cache: bool = True) -> Program:
    """Parse a program; the same text again returns the cached Program (and its compiled code)."""
    if cache:
        hit = _CACHE.get(source)
        if hit is not None:
            return hit
    text = source if source.endswith("\n") else source + "\n"
    try:
        with paused():
            stmts = parser().parse(text)
    except UnexpectedInput as exc:
        raise _explain(exc, source) from None
    except DdxSyntaxError as exc:
        raise exc.at(exc.start, exc.end, source) from None
    except RecursionError:  # defensive: the LALR parser and Builder never recurse
        raise DdxSyntaxError("input nested too deeply", source=source) from None
    program = Program(source, stmts)
    if cache:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[source] = program
    return program


def _prev_char(source: str, pos: int) -> tuple[str, int]:
    i = min(pos, len(source)) - 1
    while i >= 0 and source[i] in " \t":
        i -= 1
    return (source[i], i) if i >= 0 else ("", -1)


_OPENER = {")": "(", "]": "["}


def _unclosed(text: str) -> str | None:
    """The closing bracket the innermost still-open bracket of ``text`` waits for."""
    stack = []
    for ch in text:
        if ch in "([":
            stack.append(")" if ch == "(" else "]")
        elif ch in ")]" and stack:
            stack.pop()
        elif ch == "\n" and not stack:
            continue
    return stack[-1] if stack else None


def _explain(exc: UnexpectedInput, source: str) -> DdxSyntaxError:
    """Turn Lark's exception into one plain sentence with a position for the caret."""
    if isinstance(exc, UnexpectedCharacters):
        ch = source[exc.pos_in_stream] if exc.pos_in_stream < len(source) else "?"
        hint = "strings are not part of the language" if ch in "\"'" else None
        return DdxSyntaxError(f"unexpected character {ch!r}", start=exc.pos_in_stream,
                              end=exc.pos_in_stream + 1, source=source, hint=hint)
    if not isinstance(exc, UnexpectedToken):
        return DdxSyntaxError("unexpected end of input", start=len(source), source=source)
    tok = exc.token
    expected = set(exc.expected)
    kind = tok.type
    pos = tok.start_pos if tok.start_pos is not None else len(source)
    at_end = kind in ("_NL", "$END", "_DEDENT") and (pos >= len(source) or kind != "_NL"
                                                       or source[pos:pos + 1] in "\n#")
    where = "end of input" if pos >= len(source) else "end of line"
    if kind in ("$END", "_DEDENT"):
        pos = len(source)
    if kind == "_INDENT":
        return DdxSyntaxError("unexpected indentation", start=tok.end_pos, source=source,
                              hint="only the body of a 'with' block is indented")
    prev, prev_pos = _prev_char(source, pos)
    if kind in ("_NL", "$END", "_DEDENT") or at_end:
        pos = min(pos, len(source))
        if prev and prev in "+-*/@^=,:.":
            op = "**" if source[max(prev_pos - 1, 0):prev_pos + 1] == "**" else prev
            return DdxSyntaxError(f"missing operand after {op!r}", start=pos, source=source)
        closer = _unclosed(source[:pos])
        if closer:
            return DdxSyntaxError(f"missing {closer!r}", start=pos, source=source,
                                  hint=f"every {_OPENER[closer]!r} needs a matching {closer!r}")
        return DdxSyntaxError(f"unexpected {where}", start=pos, source=source)
    shown = NAMES.get(kind, tok.value)
    if kind in ("RPAR", "RSQB") and kind not in expected:
        if prev and prev in "+-*/@^=,":
            return DdxSyntaxError(f"missing operand after {prev!r}", start=pos, source=source)
        return DdxSyntaxError(f"unmatched {shown!r}", start=pos, end=pos + 1, source=source)
    if kind in OPERATORS and (not prev or prev in "+-*/@^=,(;\n"):
        return DdxSyntaxError(f"missing operand before {tok.value!r}", start=pos,
                              end=tok.end_pos, source=source)
    if kind in ("NAME", "NUMBER", "LPAR", "LSQB") and ("ADDOP" in expected or "MULOP" in expected):
        return DdxSyntaxError(f"unexpected {tok.value!r}: missing an operator before it?",
                              start=pos, end=tok.end_pos, source=source,
                              hint="write multiplication explicitly, e.g. 2*x")
    return DdxSyntaxError(f"unexpected {tok.value!r}", start=pos, end=tok.end_pos, source=source)
