"""The LALR(1) tables (cached on disk; tablegen builds them on a miss), the lexer and the parse loop."""

from __future__ import annotations

import marshal
import os
import re
import zlib

from ..errors import DdxSyntaxError
from .pybuild import PythonBuilder

GRAMMAR_NAME = "ddx.lark"


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
            "_NL", "COMMENT", "LPAR", "LSQB", "LBRACE", "RPAR", "RSQB", "RBRACE"} | set(
            k for words in self.keywords.values() for k in words.values())
        self.ignore = frozenset(ignore)
        builder = PythonBuilder()
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
    # (the suffix: the layout of what tablegen.build_tables writes, scan_pattern's rewrites
    # included; a change there takes a new suffix, or old caches would be read as the new layout)
    path = os.path.join(_cache_dir(), f"tables-{key}-v3.marshal")
    data = None
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        data = None
    if data is None:
        from .tablegen import build_tables  # (Lark and the regex analysis: a cache miss only)

        data = build_tables(grammar)
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


# A token is a plain tuple (terminal name, text, start, end): tuples are the cheapest objects
# Python makes, and a 120-character expression has about 80 tokens.
KIND, TEXT, START, END = range(4)


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
        elif kind == "LPAR" or kind == "LSQB" or kind == "LBRACE":
            depth += 1
        elif (kind == "RPAR" or kind == "RSQB" or kind == "RBRACE") and depth > 0:
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
