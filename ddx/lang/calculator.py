"""The calculator's input forms, as a front end to ddx's language (one-liners and
``ddx.derivative`` only; the REPL's language is untouched).

A token-level rewrite of the text into ddx's language before it is parsed: ``2x`` is ``2*x``,
``(a+b)(a-b)`` a product, ``sin x`` is ``sin(x)``, ``sin²x`` is ``sin(x)^2``, ``x²`` is
``x^2``, ``√x`` is ``sqrt(x)``, ``× · − ÷`` the ASCII operators, ``π`` is ``pi`` and Greek
letters are names (``θ`` is ``theta``). ``d/dx EXPR``, ``∂/∂x EXPR``, ``d²/dx² EXPR``,
``diff(EXPR, x[, n])`` and ``grad(EXPR)`` ask for derivatives. A form with two readings
(``1/2x``, ``sin x^2``) is an error that names both. ``Rewrite.place`` points an error on the
rewritten text at the user's own text."""

from __future__ import annotations

import re

from ..errors import DdxSyntaxError
from ..ops import CALLS

GREEK = dict(zip(
    "αβγδεζηθικλμνξοπρστυφχψωΓΔΘΛΞΠΣΦΨΩϕϑϵ",
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda_ mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega phi "
    "theta epsilon".split()))
OPERATORS = {"×": "*", "·": "*", "⋅": "*", "∙": "*", "∗": "*", "−": "-", "–": "-", "÷": "/"}
SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+"))
KEYWORDS = {"with", "and", "or", "not", "in", "is", "if", "else", "for", "lambda", "None",
            "True", "False", "true", "false", "def", "return", "import", "from", "as"}
_TOKEN = re.compile(r"""(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<name>[A-Za-z_][A-Za-z_0-9]*|[α-ωΑ-Ωϕϑϵ][0-9_]*)
    |(?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)
    |(?P<str>'[^'\n]*'|"[^"\n]*")
    |(?P<comment>\#[^\n]*)
    |(?P<space>[ \t\f]+)
    |(?P<op>\*\*|<=|>=|==|!=|[-+*/@^()\[\],;=:.<>%\n]|[×·⋅∙∗−–÷√∂])
    |(?P<other>.)""", re.X | re.S)
ENDS = {"num", "name", ")", "]", "sup"}  # what an operand ends with
FOLLOW = {None, ")", "]", ",", ";", "+", "-", "*", "/", "@", "=", "<", ">", "<=", ">=", "==",
          "!=", "\n", ":", "%", "kw"}  # what may follow a bare argument (sin x + 1)
FUNCTIONS = frozenset(n for n, row in CALLS.items() if row.call == "unary") | {"sqrt"}
MAX_ORDER = 10


class Rewrite:
    """The rewritten text, where each of its characters came from (``where``), and what was
    asked: derivatives ``wrt`` [(name, times), ...] (None with ``derivative``: every
    variable)."""

    def __init__(self, source: str, text: str, where: list[int], wrt=None,
                 derivative: bool = False) -> None:
        self.source, self.text, self.where = source, text, where
        self.wrt = wrt
        self.derivative = derivative

    @property
    def changed(self) -> bool:
        return self.derivative or self.text != self.source

    def place(self, exc):
        """An error raised on the rewritten text, pointed at the user's text."""
        if exc.source is not None and exc.source.rstrip("\n") != self.text.rstrip("\n"):
            return exc
        if exc.start is not None:
            n = len(self.where) - 1
            start = self.where[min(exc.start, n)]
            last = max((exc.end if exc.end is not None else exc.start + 1) - 1, exc.start)
            end = max(self.where[min(last, n)] + 1, start + 1)
            exc.start, exc.end = start, min(end, max(len(self.source), start + 1))
        exc.source = self.source
        return exc


def error(message: str, start: int, end: int, source: str, hint: str) -> DdxSyntaxError:
    return DdxSyntaxError(message, start=start, end=end, source=source, hint=hint)


def tokens(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, text, start, end); ``kind`` is the operator itself for operators, ``fn`` for a
    function's name, ``kw`` for a keyword."""
    out = []
    for m in _TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind in ("space", "comment"):
            continue
        if kind == "op":
            tok = OPERATORS.get(tok, tok)
            kind = tok
        elif kind == "name":
            kind = "fn" if tok in FUNCTIONS else "kw" if tok in KEYWORDS else "name"
        out.append((kind, tok, m.start(), m.end()))
    return out


def ascii_name(tok: str) -> str:
    """A name in ddx's spelling: ``θ`` -> ``theta``, ``θ1`` -> ``theta1``, ``π`` -> ``pi``."""
    return GREEK[tok[0]] + tok[1:] if tok[0] in GREEK else tok


class _Out:
    """The rewritten text, piece by piece, with the user's position of every character."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.where: list[int] = []

    def put(self, text: str, at: int, end: int | None = None) -> None:
        self.parts.append(text)
        span = max((end if end is not None else at + 1) - at, 1)
        self.where.extend(at + min(i, span - 1) for i in range(len(text)))

    def done(self, end: int) -> tuple[str, list[int]]:
        return "".join(self.parts), self.where + [end]


def _power(toks: list, i: int) -> tuple[str | None, int]:
    """A power written after a function's name (``sin^2``, ``sin²``): its text and the next
    token's index, or (None, i)."""
    if i < len(toks) and toks[i][0] == "sup":
        return "".join(SUPERSCRIPT[c] for c in toks[i][1]), i + 1
    if i + 1 < len(toks) and toks[i][0] in ("^", "**"):
        if toks[i + 1][0] == "num":
            return toks[i + 1][1], i + 2
        if toks[i + 1][0] == "-" and i + 2 < len(toks) and toks[i + 2][0] == "num":
            return "-" + toks[i + 2][1], i + 3
    return None, i


def expression(source: str, toks: list, end: int) -> tuple[str, list[int]]:
    """The tokens in ddx's language (implicit products, bare calls, Unicode operators)."""
    out = _Out()
    prev = None  # the kind of the last token written
    before = None  # the operator before the operand being written
    suffix: dict[int, str] = {}  # paren depth -> what to write after its ')': sin²(x) -> ^2
    depth = 0
    i, n = 0, len(toks)
    last = toks[0][2] if toks else 0  # where the last token written ended
    while i < n:
        kind, tok, s, e = toks[i]
        if s > last and kind != "sup":  # the user's spacing (and comments), kept
            gap = source[last:s]
            joined = kind in ("num", "name", "fn", "(", "√") and prev in ENDS and \
                not (prev == "name" and kind == "(") and not gap.strip()
            if not joined:
                out.put(gap, last, s)
        last = e
        if kind == "sup":
            power = "".join(SUPERSCRIPT[c] for c in tok)
            if prev not in ENDS:
                raise error("a superscript with nothing before it", s, e, source,
                            "write a power after its base: x², (x + 1)²")
            out.put("^" + (power if power.lstrip("+-").isdigit() else f"({power})"), s, e)
            prev = "sup"
            i += 1
            continue
        if kind in ("num", "name", "fn", "(", "√") and prev in ENDS and \
                not (prev == "name" and kind == "("):
            _check_product(source, toks, i, prev, before)
            out.put("*", s)
            prev = "*"
        if kind in ("fn", "√"):
            power, j = _power(toks, i + 1) if kind == "fn" else (None, i + 1)
            if power is not None and power.lstrip("+").startswith("-"):
                raise error(f"'{source[s:toks[j - 1][3]]}' is ambiguous", s, toks[j - 1][3],
                            source, f"write a{tok}(x) for the inverse function, or "
                                    f"1/{tok}(x) for the reciprocal")
            name = "sqrt" if kind == "√" else tok
            arg = toks[j] if j < n else None
            if arg is not None and arg[0] in ("num", "name"):
                _bare_call(source, toks, i, j, name, power, out)
                i, prev, before, last = j + 1, ")", None, toks[j][3]
                continue
            if arg is None or arg[0] != "(":
                if kind == "√" or power is not None:
                    raise error(f"'{source[s:toks[j - 1][3]]}' needs an argument", s,
                                toks[j - 1][3], source, f"write {name}(x), or {name} x for a "
                                                        "single name or number")
                out.put(tok, s, e)  # (ddx's parser says what is wrong with it)
                prev, i = "fn", i + 1
                continue
            out.put(name, s, e)
            last = toks[j - 1][3]
            if power is not None:
                suffix[depth + 1] = "^" + (power if power.lstrip("+").isdigit() else
                                           f"({power})")
            prev, i = "name", j
            continue
        if kind == "(":
            depth += 1
        elif kind == ")":
            out.put(")", s, e)
            if depth in suffix:
                out.put(suffix.pop(depth), e - 1)
            depth -= 1
            prev, i = ")", i + 1
            continue
        if kind in ("name", "kw"):
            out.put(ascii_name(tok), s, e)
        elif kind == "∂":
            raise error("'∂' only starts a derivative: ∂/∂x EXPR", s, e, source,
                        "write ∂/∂x (x^2*y), or d/dx")
        else:
            out.put(tok, s, e)
        if kind not in ("num", "name"):
            before = kind
        prev = kind
        i += 1
    if toks and re.fullmatch(r"[ \t\f]*(#[^\n]*)?", source[last:end]):
        out.put(source[last:end], last, end)  # a comment at the end, kept
    return out.done(end)


def _check_product(source: str, toks: list, i: int, prev: str, before) -> None:
    """Refuse the implicit products that have two readings, naming both."""
    kind, tok, s, e = toks[i]
    left = toks[i - 1]
    start = left[2]
    if before in ("/", "^", "**"):
        j = i - 1  # the operand after the operator
        while j > 0 and toks[j - 1][0] != before:
            j -= 1
        a = toks[j - 2] if j >= 2 and toks[j - 2][0] in ENDS else None
        start = a[2] if a is not None else toks[j - 1][2]
        base = a[1] if a is not None and a[0] in ("num", "name") else "(...)"
        op = toks[j - 1][1]
        right = _spelled(source[toks[j][2]:e])
        shown = source[start:_product_end(toks, i)]
        tail = source[e:_product_end(toks, i)]
        if before == "/":
            hint = f"write {base}/({right}{tail}) for a product below the line, or " \
                   f"({base}/{source[toks[j][2]:left[3]]})*{tok}{tail}"
        else:
            hint = f"write {base}{op}({right}{tail}) for a power of the product, or " \
                   f"{base}{op}{source[toks[j][2]:left[3]]}*{tok}{tail}"
        raise error(f"'{shown}' is ambiguous", start, _product_end(toks, i), source, hint)
    if kind == "num" and prev in ("num", "name", ")", "]", "sup"):
        what = "a number" if prev == "num" else f"'{left[1]}'"
        hint = f"write {left[1]}*{tok} for a product"
        if prev == "name":
            hint += f", {left[1]}^{tok} for a power, or {left[1]}{tok} for one name"
        raise error(f"a number right after {what} is ambiguous", start, e, source, hint)


def _product_end(toks: list, i: int) -> int:
    """Where the implicit product at token ``i`` ends (its tokens' run: 2x, 2x^2, 2(x))."""
    end = toks[i][3]
    if toks[i][0] == "(":
        depth = 0
        for t in toks[i:]:
            depth += (t[0] == "(") - (t[0] == ")")
            end = t[3]
            if depth == 0:
                break
    return end


def _spelled(text: str) -> str:
    """Implicit products made explicit, for a hint (2x -> 2*x)."""
    return re.sub(r"(\d)\s*([A-Za-z(])", r"\1*\2", text)


def _bare_call(source: str, toks: list, i: int, j: int, name: str, power, out: _Out) -> None:
    """``sin x``, ``ln 2``, ``√x``, ``sin²x``: a function of one name or number."""
    s, arg = toks[i][2], toks[j]
    after = toks[j + 1] if j + 1 < len(toks) else None
    if after is not None and after[0] in ("^", "**", "sup"):
        k = j + 2 if after[0] != "sup" and j + 2 < len(toks) else j + 1
        power = source[arg[3]:toks[k][3]].strip()
        power = power if after[0] != "sup" else "^" + "".join(SUPERSCRIPT[c] for c in after[1])
        raise error(f"'{source[s:toks[k][3]]}' is ambiguous", s, toks[k][3], source,
                    f"write {name}({arg[1]}{power}) or {name}({arg[1]}){power}")
    if after is not None and after[0] not in FOLLOW and after[0] != "fn":
        nxt = after[1]
        raise error(f"'{source[s:after[3]]}' is ambiguous", s, after[3], source,
                    f"write {name}({arg[1]}*{nxt}) or {name}({arg[1]})*{nxt}")
    out.put(name, s, toks[i][3])
    out.put("(", arg[2])
    out.put(ascii_name(arg[1]) if arg[0] == "name" else arg[1], arg[2], arg[3])
    out.put(")", arg[3] - 1)
    if power is not None:
        out.put("^" + (power if power.lstrip("+").isdigit() else f"({power})"), arg[3] - 1)


def rewrite(source: str) -> Rewrite:
    """The user's text in ddx's language, and the derivatives it asks for."""
    toks = tokens(source)
    wrt, derivative, lo, hi = None, False, 0, len(toks)
    head = _operator(source, toks)
    if head is not None:
        wrt, lo = head
        derivative = True
        if lo >= hi:
            raise error(f"'{source.strip()}' needs an expression after it", 0, len(source),
                        source, f"write {source.strip()} (x^3), or diff(x^3, x)")
    elif len(toks) > 1 and toks[0][1] in ("diff", "grad") and toks[1][0] == "(":
        wrt, lo, hi = _diff_call(source, toks)
        derivative = True
    for k in range(lo, hi):
        kind, tok, s, e = toks[k]
        if tok in ("diff", "grad") and k + 1 < hi and toks[k + 1][0] == "(":
            raise error(f"{tok}(...) is a whole expression here", s, e, source,
                        f"write {tok}(...) alone, e.g. ddx \"diff(x^3, x)\", and use its "
                        "formula in a larger expression")
        if k + 2 < hi and tok in ("d", "∂") and toks[k + 1][0] in ("/", "sup", "^") and k > lo:
            raise error(f"'{tok}/d...' only starts the text", s, e, source,
                        "write d/dx EXPR on its own, e.g. d/dx (x^2 + 1)")
    text, where = expression(source, toks[lo:hi], len(source))
    return Rewrite(source, text, where, wrt, derivative)


def _operator(source: str, toks: list):
    """``d/dx``, ``d²/dx²``, ``d^2/dx^2``, ``∂/∂x``, ``∂²/∂x∂y`` at the start: ([(name,
    times)], the index of the expression's first token), or None."""
    if not toks or toks[0][1] not in ("d", "∂") or toks[0][0] not in ("name", "∂"):
        if len(toks) == 3 and toks[1][0] == "/" and all(
                t[0] == "name" and t[1].startswith("d") and len(t[1]) > 1 for t in toks[::2]):
            raise error(f"'{source.strip()}' names no expression", 0, len(source), source,
                        f"write d/{toks[2][1]} EXPR, e.g. d/{toks[2][1]} ({toks[0][1][1:]}^2)")
        return None
    top, i = _power(toks, 1)
    if i >= len(toks) or toks[i][0] != "/":
        return None
    i += 1
    wrt: list = []
    while i < len(toks):
        kind, tok, s, e = toks[i]
        if kind == "∂" or tok == "d":
            if i + 1 >= len(toks) or toks[i + 1][0] != "name":
                break
            var, i = ascii_name(toks[i + 1][1]), i + 2
        elif kind == "name" and tok.startswith("d") and len(tok) > 1 and not wrt:
            var, i = tok[1:], i + 1
        else:
            break
        times, i = _power(toks, i)
        wrt.append((var, _times(times or "1", source, toks[i - 1])))
        if toks[0][1] == "d" and (i >= len(toks) or toks[i][0] != "∂"):
            break
    if not wrt:
        return None
    total = sum(t for _, t in wrt)
    if total != _times(top or "1", source, toks[0]):
        raise error(f"the orders above and below the line differ ({top or 1} and {total})",
                    toks[0][2], toks[i - 1][3], source, "write d²/dx², or ∂²/∂x∂y")
    return wrt, i


def _times(text: str, source: str, tok) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_ORDER:
        raise error(f"a derivative's order is a whole number from 1 to {MAX_ORDER}, not "
                    f"{text}", tok[2], tok[3], source, "e.g. diff(x^5, x, 2)")
    return int(text)


def _diff_call(source: str, toks: list):
    """``diff(EXPR, x, y, 2)`` (SymPy's order: each name, then how many times) and
    ``grad(EXPR)``: (wrt, first, end) token indices of EXPR."""
    depth, commas, close = 0, [], None
    for k in range(1, len(toks)):
        kind = toks[k][0]
        depth += kind in ("(", "[") or -(kind in (")", "]"))
        if depth == 1 and kind == ",":
            commas.append(k)
        if depth == 0:
            close = k
            break
    fname = toks[0][1]
    if close is None:
        raise error(f"missing ')' for {fname}(", toks[1][2], toks[1][3], source,
                    "every '(' needs a matching ')'")
    if close != len(toks) - 1:
        raise error(f"{fname}(...) is a whole expression here", toks[0][2], toks[close][3],
                    source, f"write {fname}(...) alone, and use its formula in a larger "
                            "expression")
    ends = commas + [close]
    if ends[0] == 2:
        raise error(f"{fname}() needs an expression", toks[0][2], toks[close][3], source,
                    "e.g. diff(x^3, x)" if fname == "diff" else "e.g. grad(x^2*y)")
    if fname == "grad":
        if commas:
            raise error("grad(EXPR) takes one expression: the gradient is with respect to every "
                        "variable", toks[commas[0]][2], toks[close][3], source,
                        "for one variable write diff(EXPR, x)")
        return None, 2, close
    wrt: list = []
    for a, b in zip(ends, ends[1:]):
        arg = toks[a + 1:b]
        if len(arg) != 1 or arg[0][0] not in ("name", "num"):
            start = toks[a + 1][2] if a + 1 < b else toks[a][2]
            raise error("diff's arguments after the expression are names and orders", start,
                        toks[b - 1][3] if a + 1 < b else toks[a][3], source,
                        "e.g. diff(x^3, x), diff(x^5, x, 2), diff(x^2*y^2, x, y)")
        kind, tok, s, e = arg[0]
        if kind == "num":
            if not wrt:
                raise error("diff's order comes after the variable", s, e, source,
                            "e.g. diff(x^5, x, 2)")
            wrt[-1] = (wrt[-1][0], wrt[-1][1] - 1 + _times(tok, source, arg[0]))
        else:
            wrt.append((ascii_name(tok), 1))
    return wrt or None, 2, ends[0]
