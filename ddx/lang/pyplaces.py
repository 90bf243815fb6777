"""Python's compile-time checks of where a statement may stand: ``return`` only inside a
``def``, ``break`` and ``continue`` only inside a loop (not across a def or class between).
Python refuses such a file before it runs any of it; so does ``ddx run`` (and the REPL
refuses the chunk). Explicit stack over the statement tree."""

from __future__ import annotations

from .tree import Stmt

WORDS = {"return": "'return' outside function", "break": "'break' outside loop",
         "continue": "'continue' not properly in loop"}


def _bodies(stmt: Stmt, in_def: bool, in_loop: bool) -> list[tuple[list, bool, bool]]:
    """The statement lists inside ``stmt``, each with where it stands."""
    kind, extra = stmt.kind, stmt.extra or {}
    if kind == "def":
        return [(stmt.body, True, False)]
    if kind == "class":
        return [(stmt.body, False, False)]
    if kind in ("while", "for"):
        return [(stmt.body, in_def, True), (extra.get("else", []), in_def, in_loop)]
    if kind == "if":
        return [(body, in_def, in_loop) for _, body in extra["branches"]] + \
            [(extra.get("else", []), in_def, in_loop)]
    if kind == "try":
        return [(stmt.body, in_def, in_loop)] + \
            [(h[-1], in_def, in_loop) for h in extra.get("handlers", [])] + \
            [(extra.get(k, []), in_def, in_loop) for k in ("else", "finally")]
    if kind == "with":
        return [(stmt.body, in_def, in_loop)]
    return []


def misplaced(stmts: list) -> Stmt | None:
    """The first statement (in source order) that Python refuses where it stands."""
    stack = [(s, False, False) for s in reversed(stmts)]
    while stack:
        stmt, in_def, in_loop = stack.pop()
        if stmt.kind == "return" and not in_def or \
                stmt.kind in ("break", "continue") and not in_loop:
            return stmt
        for body, d, loop in reversed(_bodies(stmt, in_def, in_loop)):
            stack.extend((s, d, loop) for s in reversed(body))
    return None


__all__ = ["WORDS", "misplaced"]
