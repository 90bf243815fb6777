"""The only module that imports Lark: the LALR parser (cached), the AST builder, syntax-error mapping."""

from __future__ import annotations

import marshal
import os
import re
import zlib

from ..errors import DdxSyntaxError
from ..gcpause import paused

GRAMMAR_NAME = "ddx.lark"


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


# A token is a plain tuple (terminal name, text, start, end): tuples are the cheapest objects
# Python makes, and a 120-character expression has about 80 tokens.
KIND, TEXT, START, END = range(4)


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


class Builder:
    """Maps each grammar alias to an AST node; runs inside the LALR parser, so nothing recurses."""

    def number(self, tok):
        text = tok[1]
        is_int = text.isdigit()
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

    def vector(self, lsqb, items, rsqb):
        return Ast("vec", None, tuple(items), (), lsqb[2], rsqb[3])

    def kwarg(self, name, eq, value):
        return KwArg(name[1], value, name[2])

    def _call(self, kind, fname, base, args, end):
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

    def with_stmt(self, kw, ctx, colon, *body):
        stmts = [s for group in body for s in group] if body else []
        return [Stmt("with", None, ctx, stmts, start=kw[2], end=ctx.oend)]

    def start(self, *groups):
        return [s for group in groups for s in group]


def grammar_text() -> str:
    """The grammar file: shipped inside the package, or read from the source tree."""
    # (os.path, not pathlib: pathlib and hashlib together cost a one-liner ~9 ms to import)
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # ddx/
    for candidate in (os.path.join(package, "grammar", GRAMMAR_NAME),  # an installed wheel
                      os.path.join(os.path.dirname(package), "grammar", GRAMMAR_NAME)):
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as fh:
                return fh.read()
    from importlib import resources  # a zipped install only; importing it costs ~10 ms

    return resources.files("ddx").joinpath("grammar", GRAMMAR_NAME).read_text(encoding="utf-8")


class Tables:
    """The LALR(1) automaton and lexer of grammar/ddx.lark, as plain data.

    Lark analyses the grammar; the tables are then cached on disk (keyed by the grammar's hash
    and Lark's version), so a one-liner neither imports Lark nor rebuilds anything, and the
    parse loop below runs without Lark's per-token bookkeeping."""

    def __init__(self, data: dict) -> None:
        self.start = data["start"]
        self.end = data["end"]
        states = data["states"]  # state -> {terminal or rule name: (shift?, state or rule)}
        size = max(states) + 1
        # per state, terminal -> action as one int: >= 0 shift to that state, < 0 reduce by
        # rule ~action; and rule name -> the state after reducing to it (the goto table)
        self.action: list[dict] = [{} for _ in range(size)]
        self.goto: list[dict] = [{} for _ in range(size)]
        for state, row in states.items():
            for sym, (shift, arg) in row.items():
                if sym.isupper() or sym.startswith(("$", "_")) and sym[1:2].isupper():
                    self.action[state][sym] = arg if shift else ~arg
                else:
                    self.goto[state][sym] = arg
        self.keywords = data["keywords"]  # terminal -> {text: keyword terminal}
        ignore = set(data["ignore"])
        # The lexer: one findall gives (blanks, token) pairs, the blanks and line continuations
        # in front of each token and the token's text (scan_pattern); each distinct text is
        # then classified once by the named-group pattern below (the same alternatives in
        # Lark's order, so the same terminal as a match at its place in the text). Comments
        # stay tokens of their own (a comment ends a line: it is part of _NL).
        terms = [(name, rx) for name, rx in data["terminals"]
                 if name not in ignore or name == "COMMENT"]
        self.scan = re.compile(data["scan"])
        if self.scan.groups != 2:  # a grammar regex with a capturing group would add columns
            raise ValueError("grammar terminals must use non-capturing groups (?:...)")
        self.classify = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in terms) +
                                   r"|(?P<_BAD>[\s\S])").fullmatch
        self.kinds: dict[str, str] = {}  # token text -> terminal (keywords resolved)
        # terminals the lexer only passes on (not newlines, comments, brackets, errors)
        self.plain = frozenset(name for name, _ in terms) - {
            "_NL", "COMMENT", "LPAR", "LSQB", "RPAR", "RSQB"} | set(
            k for words in self.keywords.values() for k in words.values())
        self.ignore = frozenset(ignore)
        builder = Builder()
        # (state below, rule reduced, lookahead) -> the state after its goto and the unit
        # rules (expr: sum, sum: product, ...) that lookahead reduces next, and the action
        # that lookahead takes there
        self.after: dict = {}
        self.data_rules = data["rules"]  # (for other builders: see lean.compile_source)
        self.rules = [self._callback(builder, *rule) for rule in self.data_rules]

    @staticmethod
    def _callback(builder, origin, size, keep, expand1, alias):
        if size == 1 and expand1 and alias is None and [tuple(k) for k in keep] == [(0, False)]:
            return size, None, origin  # ?rule: child, a unit step: the value passes through
        method = getattr(builder, alias or origin, None)
        internal = origin.startswith("_")
        simple = all(not expand for _, expand in keep)
        picks = [i for i, _ in keep]
        if simple and not internal and picks == list(range(size)) and method is not None \
                and not (expand1 and alias is None and size == 1):
            return size, method, origin  # every child goes to the builder as it is
        keep = [tuple(k) for k in keep]
        if internal and keep and keep[0] == (0, True) and \
                all(not expand for _, expand in keep[1:]):
            # a left-recursive repetition (__items_star: __items_star COMMA expr): the list
            # so far grows in place. Copying it at each step would make n items cost n^2;
            # each list on the parser's stack has exactly one consumer, so nothing else
            # sees it change.
            rest = [i for i, _ in keep[1:]]
            if rest == [1, 2]:  # (the usual shape: the list, a separator, an item)
                def grow(kids, a, b):
                    kids.append(a)
                    kids.append(b)
                    return kids
            elif rest == [1]:
                def grow(kids, a):
                    kids.append(a)
                    return kids
            else:
                def grow(*children):
                    kids = children[0]
                    kids.extend([children[i] for i in rest])
                    return kids
            return size, grow, origin

        def build(*children):
            if simple:
                kids = [children[i] for i in picks]
            else:
                kids = []
                for i, expand in keep:
                    if expand:
                        kids.extend(children[i])
                    else:
                        kids.append(children[i])
            if internal:
                return kids  # a repetition: spliced into its parent
            if expand1 and alias is None and len(kids) == 1:
                return kids[0]
            return method(*kids)
        return size, build, origin


def scan_pattern(blanks: list[str], terms: list[tuple[str, str]]) -> str:
    """The scanner's regex: (the blanks before a token, the token), for the ignored patterns
    ``blanks`` and the token terminals ``terms`` in Lark's order. Its matches are those of
    the plain ((?:blank|...)*)(term|...|[\\s\\S]); tests compare the two. A last catch-all
    makes any other character an error token, so nothing is ever skipped silently.

    Three rewrites make it faster. The terminals are tried in scan_order's order; next to
    each other there, terminals of one character each are one character set (a match is
    the same one character whichever of them matches). And when one blank pattern is a run
    of a set of characters, X+, that no other blank pattern can begin with, the blanks are
    X*(?:(?:B|...)X*)*: the same texts, as (A|B)* = A*(BA*)*, with the common case (spaces)
    one fast loop."""
    blank = f"(?:{'|'.join(blanks)})*"
    for k, rx in enumerate(blanks):
        run = re.fullmatch(r"(\[(?:[^\]\\]|\\.)+\]|\\[sdw])\+", rx)
        rest = blanks[:k] + blanks[k + 1:]
        if run is not None and all(not (first_chars(rx)[0] & first_chars(other)[0])
                                   and not first_chars(other)[1] for other in rest):
            blank = f"{run[1]}*(?:(?:{'|'.join(rest)}){run[1]}*)*" if rest else f"{run[1]}*"
            break
    pieces: list[str] = []
    chars: set[str] = set()  # one-character terminals since the last other one
    for i in scan_order(terms):
        one = one_char(terms[i][1])
        if one is not None:
            chars |= one
            continue
        if chars:
            pieces.append("[" + "".join(map(re.escape, sorted(chars))) + "]")
            chars = set()
        pieces.append(f"(?:{terms[i][1]})")
    if chars:
        pieces.append("[" + "".join(map(re.escape, sorted(chars))) + "]")
    return f"({blank})(" + "|".join(pieces) + r"|[\s\S])"


def one_char(regex: str) -> frozenset[str] | None:
    """The characters ``regex`` matches when it matches exactly one ASCII character of a set
    (a literal, a class, alternatives of those), else None."""
    try:
        sre = _sre()
        if sre.parse(regex).getwidth() != (1, 1):
            return None
    except Exception:  # noqa: BLE001 - another Python's internals: no merging
        return None
    chars, other = first_chars(regex)  # (exact for one character of literals and ranges)
    return None if other else frozenset(map(chr, chars))


_ASCII = frozenset(range(128))


def _sre():
    """The parser the re module itself uses, whose nodes are plain data (re._parser;
    sre_parse before Python 3.11)."""
    try:
        from re import _parser
    except ImportError:
        import sre_parse as _parser
    return _parser


def first_chars(regex: str) -> tuple[frozenset, bool]:
    """The characters a match of ``regex`` can begin with: the ASCII ones, and whether any
    other may. Never fewer than the truth; everything when unsure (a pattern that can match
    the empty text, flags, anything below that is not plain characters and repeats)."""
    try:
        sre = _sre()
        items = sre.parse(regex)
        if items.state.flags & ~(sre.SRE_FLAG_UNICODE | sre.SRE_FLAG_VERBOSE):
            return _ASCII, True  # (?i) and the like change what a literal matches
    except Exception:  # noqa: BLE001 - another Python's internals: assume the worst
        return _ASCII, True
    sets = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
            sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W"}

    def charset(members) -> tuple[set, bool]:
        chars: set[int] = set()
        other = False
        for op, av in members:
            if op is sre.LITERAL:
                chars |= {av} & _ASCII
                other |= av >= 128
            elif op is sre.RANGE:
                chars.update(range(av[0], min(av[1], 127) + 1))
                other |= av[1] >= 128
            elif op is sre.CATEGORY and av in sets:
                chars.update(c for c in _ASCII if re.fullmatch(sets[av], chr(c)))
                other = True
            else:  # NEGATE and the rest
                return set(_ASCII), True
        return chars, other

    # (a walk over a terminal's regex: grammar-sized, so plain recursion)
    def sequence(nodes) -> tuple[set, bool, bool]:
        """(ASCII first characters, any other, whether the sequence can match empty)."""
        chars: set[int] = set()
        other = False
        for op, av in nodes:
            if op is sre.LITERAL:
                c, o, empty = {av} & _ASCII, av >= 128, False
            elif op is sre.IN:
                c, o = charset(av)
                empty = False
            elif op is sre.BRANCH:
                c, o, empty = set(), False, False
                for alternative in av[1]:
                    ac, ao, ae = sequence(alternative)
                    c, o, empty = c | ac, o or ao, empty or ae
            elif op is sre.SUBPATTERN and not av[1] and not av[2]:
                c, o, empty = sequence(av[3])
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
                c, o, empty = sequence(av[2])
                empty = empty or av[0] == 0
            else:
                return set(_ASCII), True, False
            chars |= c
            other |= o
            if not empty:
                return chars, other, False
        return chars, other, True

    chars, other, empty = sequence(items)
    return (_ASCII, True) if empty else (frozenset(chars), other)


def scan_order(terms: list[tuple[str, str]]) -> list[int]:
    """An order of the terminals in which the scanner's first matching alternative is the
    one Lark's order gives, at every place in every text, with the cheap ones first.

    Two terminals that cannot begin with the same character never both match at one place,
    so their order does not matter; any two that can keep Lark's order. Among the terminals
    whose such predecessors are all placed, one of a single character goes next (scan_pattern
    makes those one set), else one that the regex engine rejects at its first character (it
    begins with a literal or a set; names), then the one with the fewest first characters.
    (A number's digits include non-ASCII ones.)"""
    firsts = [first_chars(rx) for _, rx in terms]
    ones = [one_char(rx) is not None for _, rx in terms]
    try:
        sre = _sre()

        def cheap(regex: str) -> bool:
            op, av = sre.parse(regex)[0]
            while op is sre.SUBPATTERN and av[0] is None and not av[1] and not av[2]:
                op, av = av[3][0]
            return op is sre.LITERAL or op is sre.IN
        cheaps = [cheap(rx) for _, rx in terms]
    except Exception:  # noqa: BLE001 - another Python's internals: all alike
        cheaps = [True] * len(terms)

    def clash(i: int, j: int) -> bool:
        (ci, oi), (cj, oj) = firsts[i], firsts[j]
        return bool(ci & cj) or (oi and oj)

    order: list[int] = []
    left = list(range(len(terms)))
    while left:
        ready = [j for j in left if not any(i < j and clash(i, j) for i in left)]
        pick = min(ready, key=lambda j: (not ones[j], not cheaps[j],
                                         len(firsts[j][0]) + 128 * firsts[j][1], j))
        order.append(pick)
        left.remove(pick)
    return order


def _build_tables(grammar: str) -> dict:
    from lark import Lark
    from lark.parsers.lalr_analysis import Shift

    lark = Lark(grammar, parser="lalr", lexer="basic", maybe_placeholders=False)
    table = lark.parser.parser._parse_table
    terminals = list(lark.terminals)
    ignore = list(lark.lexer_conf.ignore)
    regexps = [t for t in terminals if type(t.pattern).__name__ == "PatternRE"]
    keywords: dict[str, dict[str, str]] = {}
    lexed = []
    for t in terminals:
        if type(t.pattern).__name__ == "PatternStr":
            owner = next((r for r in regexps if re.fullmatch(r.pattern.to_regexp(),
                                                             t.pattern.value)), None)
            if owner is not None:
                keywords.setdefault(owner.name, {})[t.pattern.value] = t.name
                continue
        lexed.append(t)
    # Lark's own order: priority, then longest possible match, then longest pattern
    lexed.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    rules = lark.rules
    index = {r: k for k, r in enumerate(rules)}
    states = {}
    for state, actions in table.states.items():
        states[int(state)] = {str(term): (1, int(arg)) if kind is Shift else (0, index[arg])
                              for term, (kind, arg) in actions.items()}
    rule_data = []
    for r in rules:
        keep = [(i, bool((not sym.is_term) and sym.name.startswith("_")))
                for i, sym in enumerate(r.expansion) if not (sym.is_term and sym.filter_out)]
        rule_data.append((str(r.origin.name), len(r.expansion), keep, bool(r.options.expand1),
                          None if r.alias is None else str(r.alias)))
    blanks = [str(t.pattern.to_regexp()) for t in lexed if t.name in ignore and t.name != "COMMENT"]
    tokens = [(str(t.name), str(t.pattern.to_regexp())) for t in lexed
              if t.name not in ignore or t.name == "COMMENT"]
    return {"start": int(table.start_states["start"]), "end": int(table.end_states["start"]),
            "scan": scan_pattern(blanks, tokens),
            "states": states, "rules": rule_data,
            "terminals": [(str(t.name), str(t.pattern.to_regexp())) for t in lexed],
            "keywords": {str(k): {str(a): str(b) for a, b in v.items()}
                         for k, v in keywords.items()},
            "ignore": [str(i) for i in ignore]}


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ddx")


_TABLES: Tables | None = None


def tables() -> Tables:
    """The parser tables: from the disk cache when the grammar is unchanged, else built."""
    global _TABLES
    if _TABLES is not None:
        return _TABLES
    grammar = grammar_text()
    from .. import __version__  # a new ddx may lay the tables out differently: its own cache

    text = (grammar + "\0" + __version__).encode()
    key = f"{zlib.crc32(text):08x}{len(text):x}"
    # (the suffix: the layout of what _build_tables writes, scan_pattern's rewrites included;
    # a change there takes a new suffix, or old caches would be read as the new layout)
    path = os.path.join(_cache_dir(), f"tables-{key}-v3.marshal")
    data = None
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        data = None
    if data is None:
        data = _build_tables(grammar)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(marshal.dumps(data))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: keep the tables in memory only
    _TABLES = Tables(data)
    return _TABLES


def lex(text: str, tab: Tables) -> list[tuple]:
    """Tokens, with newlines inside brackets dropped and indentation made into _INDENT/_DEDENT."""
    kinds = tab.kinds
    plain = tab.plain
    n = len(text)
    depth = 0
    levels = [0]
    out: list[tuple] = []
    append = out.append
    end = 0
    for blank, value in tab.scan.findall(text):
        start = end + len(blank)
        end = start + len(value)
        kind = kinds.get(value)
        if kind is None:
            kind = tab.classify(value).lastgroup
            if kind == "NAME":
                kind = tab.keywords.get("NAME", {}).get(value, kind)
            if len(kinds) < 65536:  # (names and numbers are open-ended: a bounded memo)
                kinds[value] = kind
        if kind in plain:  # most tokens: nothing to do but keep them
            append((kind, value, start, end))
            continue
        if kind == "_NL":
            if depth == 0:
                append(("_NL", value, start, end))
                if "\n" in value:
                    indent_str = value.rsplit("\n", 1)[1]
                    indent = len(indent_str.expandtabs(8))
                    if indent > levels[-1]:
                        levels.append(indent)
                        append(("_INDENT", indent_str, end, end))
                    else:
                        while indent < levels[-1]:
                            levels.pop()
                            append(("_DEDENT", indent_str, end, end))
                        if indent != levels[-1]:
                            raise DdxSyntaxError(
                                "inconsistent indentation: this line's indent matches no open "
                                "block", start=end - len(indent_str))
            continue
        elif kind == "COMMENT":
            continue
        elif kind == "LPAR" or kind == "LSQB":
            depth += 1
        elif (kind == "RPAR" or kind == "RSQB") and depth > 0:
            depth -= 1
        elif kind == "_BAD":
            raise Unexpected("char", value, start, end, ())
        append((kind, value, start, end))
    while len(levels) > 1:
        levels.pop()
        append(("_DEDENT", "", n, n))
    append(("$END", "", n, n))
    return out


class Unexpected(Exception):
    def __init__(self, kind, value, start, end, expected) -> None:
        super().__init__(value)
        self.kind, self.value, self.start, self.end = kind, value, start, end
        self.expected = set(expected)


def parse_tokens(tokens: list[tuple], tab: Tables, rules: list | None = None):
    """The LALR(1) loop: shift, or reduce with the rule's builder (``rules``: another builder's
    callbacks, from Tables._callback); explicit stacks only."""
    action = tab.action
    goto = tab.goto
    rules = tab.rules if rules is None else rules
    after = tab.after
    end_state = tab.end
    state = tab.start
    state_stack = [state]
    value_stack: list = []
    push_state = state_stack.append
    push_value = value_stack.append
    for tok in tokens:
        kind = tok[0]
        act = action[state].get(kind)
        while True:
            if act is None:
                raise Unexpected(kind, tok[1], tok[2], tok[3], action[state])
            if act >= 0:
                push_state(act)
                push_value(tok)
                state = act
                break
            size, build, origin = rules[~act]
            if build is None:  # a unit rule (expr: sum, ...): the value passes through
                del state_stack[-1]  # (reached only if a jump below stopped short of one)
            elif size:
                value = build(*value_stack[-size:])
                del state_stack[-size:]
                del value_stack[-size:]
                push_value(value)
            else:
                push_value(build())
            # the goto, the unit rules this lookahead reduces next, and the action that
            # follows them, in one memoised jump
            below = state_stack[-1]
            key = (below, origin, kind)
            jump = after.get(key)
            if jump is None:
                top = goto[below][origin]
                while True:
                    step = action[top].get(kind)
                    if step is None or step >= 0 or rules[~step][1] is not None:
                        break
                    top = goto[below][rules[~step][2]]
                jump = after[key] = (top, step)
            state, act = jump
            push_state(state)
            if kind == "$END" and state == end_state:
                return value_stack[-1]
    raise Unexpected("$END", "", tokens[-1][2], tokens[-1][3], ())


CACHE: dict[str, Program] = {}

OPERATORS = {"ADDOP", "MULOP", "POWOP", "EQUAL", "COMMA", "COLON", "DOT"}
NAMES = {"ADDOP": "+", "MULOP": "*", "POWOP": "^", "EQUAL": "=", "COMMA": ",", "COLON": ":",
         "SEMI": ";", "DOT": ".", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}


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
        raise _explain(exc, source) from None
    except DdxSyntaxError as exc:
        raise exc.at(exc.start, exc.end, source) from None
    except RecursionError:  # defensive: the LALR loop and Builder never recurse
        raise DdxSyntaxError("input nested too deeply", source=source) from None
    program = Program(source, stmts)
    if cache and keep:
        if len(CACHE) > 4096:
            CACHE.clear()
        CACHE[source] = program
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


def _explain(exc: Unexpected, source: str) -> DdxSyntaxError:
    """Turn a parse failure into one plain sentence with a position for the caret."""
    if exc.kind == "char":
        ch = exc.value
        hint = "strings are not part of the language" if ch in "\"'" else None
        return DdxSyntaxError(f"unexpected character {ch!r}", start=exc.start,
                              end=exc.start + 1, source=source, hint=hint)
    expected = exc.expected
    kind = exc.kind
    pos = exc.start if exc.start is not None else len(source)
    at_end = kind in ("_NL", "$END", "_DEDENT") and (pos >= len(source) or kind != "_NL"
                                                       or source[pos:pos + 1] in "\n#")
    where = "end of input" if pos >= len(source) else "end of line"
    if kind in ("$END", "_DEDENT"):
        pos = len(source)
    if kind == "_INDENT":
        return DdxSyntaxError("unexpected indentation", start=exc.end, source=source,
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
    shown = NAMES.get(kind, exc.value)
    if kind in ("RPAR", "RSQB") and kind not in expected:
        if prev and prev in "+-*/@^=,":
            return DdxSyntaxError(f"missing operand after {prev!r}", start=pos, source=source)
        return DdxSyntaxError(f"unmatched {shown!r}", start=pos, end=pos + 1, source=source)
    if kind in OPERATORS and (not prev or prev in "+-*/@^=,(;\n"):
        return DdxSyntaxError(f"missing operand before {exc.value!r}", start=pos,
                              end=exc.end, source=source)
    if kind in ("NAME", "NUMBER", "LPAR", "LSQB") and ("ADDOP" in expected or "MULOP" in expected):
        return DdxSyntaxError(f"unexpected {exc.value!r}: missing an operator before it?",
                              start=pos, end=exc.end, source=source,
                              hint="write multiplication explicitly, e.g. 2*x")
    return DdxSyntaxError(f"unexpected {exc.value!r}", start=pos, end=exc.end, source=source)
