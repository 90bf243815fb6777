"""The syntax tree (Ast, Stmt, Program) and the Builder that makes it, one alias at a time."""

from __future__ import annotations

from ..errors import DdxSyntaxError, PythonSyntaxError


class Ast:
    """An expression node. ``start``/``end`` span its text; ``ostart``/``oend`` include parentheses;
    ``pos`` is where an error about it points (the operator, the function name)."""

    __slots__ = ("kind", "value", "kids", "kw", "start", "end", "ostart", "oend", "pos")

    def __init__(self, kind: str, value, kids: tuple, kw: tuple, start: int, end: int,
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

    __slots__ = ("kind", "target", "value", "body", "start", "end", "extra")

    def __init__(self, kind: str, target: Ast | None, value: Ast, body: list | None = None, *,
                 start: int, end: int, extra: dict | None = None) -> None:
        self.kind = kind
        self.target = target
        self.value = value
        self.body = body or []
        self.start = start
        self.end = end
        self.extra = extra  # the Python statements' other parts (else:, except:, a def's params)


class Program:
    """A parsed source text: its statements, and the text for spans and labels."""

    __slots__ = ("source", "stmts", "_compiled")

    def __init__(self, source: str, stmts: list[Stmt]) -> None:
        self.source = source
        self.stmts = stmts
        self._compiled = None

    def text(self, node: Ast | Stmt) -> str:
        return self.source[node.start:node.end]


class KwArg:
    """``name=value`` in a call's argument list."""

    __slots__ = ("name", "value", "pos")

    def __init__(self, name: str, value, pos: int) -> None:
        self.name, self.value, self.pos = name, value, pos


class SliceParts:
    """``a:b:c`` in a subscript, before ``index`` turns it into ``("slice", a, b, c)``."""

    __slots__ = ("parts",)

    def __init__(self, parts: list) -> None:
        self.parts = parts


def _tokens(children) -> list:
    return [c for c in children if type(c) is not tuple]


def _slice_parts(children) -> list:
    """Split ``a:b:c`` children (Asts and COLON tokens) into [start, stop, step], None for gaps."""
    parts: list = [None]
    for c in children:
        if type(c) is tuple:
            parts.append(None)
        else:
            parts[-1] = c
    return parts + [None] * (3 - len(parts))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\n": ""}


def unquote(text: str) -> str:
    """A string literal's value, its escapes decoded as Python decodes them (an unknown
    escape keeps its backslash); no eval."""
    body = text[3:-3] if text[:3] in ('"""', "'''") and len(text) >= 6 else text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[nxt]
                digits = body[i + 2:i + 2 + width]
                if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                    code = int(digits, 16)
                    if code <= 0x10FFFF:
                        out.append(chr(code))
                        i += 2 + width
                        continue
                raise DdxSyntaxError(f"truncated \\{nxt} escape in a string")
        out.append(c)
        i += 1
    return "".join(out)


def _check_order(args: list) -> None:
    """Python's rules for the order of a call's arguments: no positional argument after a
    keyword one (``*args`` may follow ``k=v``), nothing positional after ``**kw``."""
    keyword = dstar = False
    for a in args:
        if isinstance(a, KwArg):
            keyword = True
        elif a.kind == "dstar":
            dstar = True
        elif a.kind == "star" and dstar:
            raise PythonSyntaxError("iterable argument unpacking follows keyword argument "
                                 "unpacking", start=a.ostart, end=a.oend)
        elif a.kind != "star" and (keyword or dstar):
            raise PythonSyntaxError("positional argument follows keyword argument" +
                                 (" unpacking" if dstar else ""), start=a.ostart, end=a.oend)


class Builder:
    """Maps each grammar alias to an AST node; runs inside the LALR parser, so nothing recurses."""

    def number(self, tok):
        text = tok[1]
        is_int = text.isdigit() or "_" in text and text.replace("_", "").isdigit()  # 1_000
        value = int(text) if is_int else float(text)
        if is_int and len(text) > 308:  # no float64 holds it (Python: OverflowError)
            try:
                float(value)
            except OverflowError:
                raise DdxSyntaxError("integer too large for a float64 (at most about 1.8e308)",
                                     start=tok[2], end=tok[3],
                                     hint="write it as a float, e.g. 1e400 (which is inf)")
        return Ast("num", (value, is_int), (), (), tok[2], tok[3])

    def name(self, tok):
        return Ast("name", tok[1], (), (), tok[2], tok[3])

    def paren(self, lpar, inner, rpar):
        inner.ostart, inner.oend = lpar[2], rpar[3]
        return inner

    def binop(self, a, op, b):
        sym = "^" if op[1] == "**" else op[1]
        return Ast("bin", sym, (a, b), (), a.ostart, b.oend, op[2])

    def unop(self, op, a):
        return Ast("unop", op[1], (a,), (), op[2], a.oend, op[2])

    def items(self, *children):
        return _tokens(children)

    def args(self, *children):
        return _tokens(children)

    def subscripts(self, *children):
        return _tokens(children)

    def string(self, tok):
        return Ast("str", unquote(tok[1]), (), (), tok[2], tok[3])

    def ellipsis(self, tok):
        return Ast("ellipsis", None, (), (), tok[2], tok[3])

    def tuple(self, lpar, *rest):
        rpar = rest[-1]
        items = [rest[0], *rest[2]] if len(rest) == 4 else []
        return Ast("tuple", None, tuple(items), (), lpar[2], rpar[3])

    def tuple_bare(self, *children):
        items = _tokens(children)
        return Ast("tuple", None, tuple(items), (), items[0].ostart, children[-1][3]
                   if type(children[-1]) is tuple else items[-1].oend)

    def compare(self, a, op, b):
        return Ast("bin", op[1], (a, b), (), a.ostart, b.oend, op[2])

    def compare_chain(self, a, *rest):
        """``a < b <= c``: Python's ``(a < b) and (b <= c)`` (b evaluated for each side)."""
        node = left = None
        for i in range(0, len(rest), 2):
            op, b = rest[i], rest[i + 1]
            part = self.compare(a if left is None else left, op, b)
            node = part if node is None else Ast("boolop", ("and", part), (node,), (),
                                                  node.ostart, part.oend, op[2])
            left = b
        return node

    def vector(self, lsqb, items, rsqb):
        return Ast("vec", None, tuple(items), (), lsqb[2], rsqb[3])

    def kwarg(self, name, eq, value):
        return KwArg(name[1], value, name[2])

    def _call(self, kind, fname, base, args, end):
        _check_order(args)
        pos = [a for a in args if isinstance(a, Ast)]
        kw = tuple((a.name, a.value, a.pos) for a in args if isinstance(a, KwArg))
        kids = tuple(([base] if base is not None else []) + pos)
        start = base.ostart if base is not None else fname[2]
        return Ast(kind, fname[1], kids, kw, start=start, end=end, pos=fname[2])

    def call(self, fname, lpar, args, rpar):
        return self._call("call", fname, None, args, rpar[3])

    def method(self, base, dot, fname, lpar, args, rpar):
        return self._call("method", fname, base, args, rpar[3])

    def attr(self, base, dot, name):
        return Ast("attr", name[1], (base,), (), base.ostart, name[3], name[2])

    def slice(self, *children):
        return SliceParts(_slice_parts(children))

    def index(self, base, lsqb, subs, rsqb):
        subs = tuple(("slice", *sub.parts) if isinstance(sub, SliceParts) else sub
                     for sub in subs)
        return Ast("index", subs, (base,), (), base.ostart, rsqb[3], lsqb[2])

    def assign(self, target, eq, value):
        return Stmt("assign", target, value, start=target.ostart, end=value.oend)

    def expr_stmt(self, value):
        return Stmt("expr", None, value, start=value.ostart, end=value.oend)

    def simple_stmts(self, *children):
        return _tokens(children)

    def with_stmt(self, kw, ctx, *rest):
        name = rest[1][1] if type(rest[0]) is tuple and rest[0][0] == "AS" else None
        return [Stmt("with", None, ctx, rest[-1], start=kw[2], end=ctx.oend,
                     extra={"as": name} if name else None)]

    def start(self, *groups):
        return [s for group in groups for s in group]
