"""Syntax errors explained: a parse failure turned into one plain sentence and a caret position."""

from __future__ import annotations

from ..errors import DdxSyntaxError
from .parser import Unexpected

OPERATORS = {"ADDOP", "MULOP", "POWOP", "EQUAL", "COMMA", "COLON", "DOT"}
NAMES = {"ADDOP": "+", "MULOP": "*", "POWOP": "^", "EQUAL": "=", "COMMA": ",", "COLON": ":",
         "SEMI": ";", "DOT": ".", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}


def _prev_char(source: str, pos: int) -> tuple[str, int]:
    i = min(pos, len(source)) - 1
    while i >= 0 and source[i] in " \t":
        i -= 1
    return (source[i], i) if i >= 0 else ("", -1)


_OPENER = {")": "(", "]": "["}


def _open_bracket(text: str) -> tuple[str, int] | None:
    """(the closing bracket it waits for, its place) of the innermost still-open bracket."""
    stack = []
    for i, ch in enumerate(text):
        if ch in "([":
            stack.append((")" if ch == "(" else "]", i))
        elif ch in ")]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _unclosed(text: str) -> str | None:
    """The closing bracket the innermost still-open bracket of ``text`` waits for."""
    found = _open_bracket(text)
    return found[0] if found else None


def explain(exc: Unexpected, source: str) -> DdxSyntaxError:
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
                              hint="only a block's body (after a line ending in ':') is "
                                   "indented")
    if "_INDENT" in expected:  # Python's words for a block header with no body
        line = source.count("\n", 0, min(pos, len(source)))
        return DdxSyntaxError(f"expected an indented block after line {line}",
                              start=min(pos, len(source)), source=source)
    prev, prev_pos = _prev_char(source, pos)
    if kind in ("_NL", "$END", "_DEDENT") or at_end:
        pos = min(pos, len(source))
        line_start = source.rfind("\n", 0, max(pos - 1, 0)) + 1
        line = source[line_start:pos]
        lead = line.lstrip()
        if lead[:1] in ("*", "/", "%", "@"):  # read as a decorator line: an operand is missing
            at = line_start + len(line) - len(lead)
            op = "**" if lead.startswith("**") else lead[0]
            if op == "@" and len(lead) > 1:
                return DdxSyntaxError("a decorator must be followed by a def or a class",
                                      start=at, end=at + 1, source=source)
            return DdxSyntaxError(f"missing operand before {op!r}", start=at,
                                  end=at + len(op), source=source)
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
    opened = _open_bracket(source[:pos])
    if opened and "\n" in source[opened[1]:pos]:  # x = [1, 2 with the next line read on: Python's words
        at = opened[1]
        return DdxSyntaxError(f"{source[at]!r} was never closed", start=at, end=at + 1,
                              source=source)
    if kind == "NAME" and exc.value in ("j", "J") and pos and source[pos - 1].isdigit():
        return DdxSyntaxError("complex numbers (a literal such as 2j) are not supported by ddx",
                              start=pos, end=exc.end, source=source)
    if kind in ("NAME", "NUMBER", "LPAR", "LSQB") and ("ADDOP" in expected or "MULOP" in expected):
        return DdxSyntaxError(f"unexpected {exc.value!r}: missing an operator before it?",
                              start=pos, end=exc.end, source=source,
                              hint="write multiplication explicitly, e.g. 2*x")
    return DdxSyntaxError(f"unexpected {exc.value!r}", start=pos, end=exc.end, source=source)
