"""The only module that imports Lark: its analysis of the grammar, as plain data for the parser's tables."""

from __future__ import annotations

import re


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


def build_tables(grammar: str) -> dict:
    """The LALR states, rules, terminals and scanner regex of ``grammar``, as marshal-able data."""
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
