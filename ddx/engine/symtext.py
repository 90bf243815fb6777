"""Formulas (``symbolic.Sym``'s ``e``: a number, a name, or (row name, args, kw)) printed in
ddx's language, each row as it writes itself (``Op.text``, or ``name(args)``), and compared."""

from __future__ import annotations

from ..ops import OPS

ATOM = 9
SAME_BUDGET = 400  # nodes: formulas larger than this are not compared (x*x stays x*x)


class Unsupported(Exception):
    """A rule did something no formula here expresses (a scatter, a mixed mask)."""


def same(a, b) -> bool:
    """Whether two formulas are equal (structurally; False past SAME_BUDGET nodes, so that
    shared formulas, exponentially larger as trees, are never walked out)."""
    stack = [(a, b)]
    seen = 0
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        seen += 1
        if seen > SAME_BUDGET or type(x) is not type(y):
            return False
        if not isinstance(x, tuple):
            if x != y:
                return False
            continue
        if x[0] != y[0] or len(x[1]) != len(y[1]) or x[2] != y[2]:
            return False
        stack.extend((p.e, q.e) for p, q in zip(x[1], y[1]))
    return True


def _num_text(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def _atomic(label: str) -> bool:
    """Whether a name's text needs no parentheses inside a formula: a name, a number, or a
    call ``f(...)`` whose first parenthesis closes at the end."""
    head = label.split("(", 1)[0]
    if not (head.replace("_", "a").replace(".", "0").isalnum()):
        return False
    if head == label:
        return True
    if not label.endswith(")") or not head:
        return False
    depth = 0
    for k in range(len(head), len(label)):
        depth += {"(": 1, ")": -1}.get(label[k], 0)
        if depth == 0 and k != len(label) - 1:
            return False
    return True


def _prec(e) -> int:
    if isinstance(e, float):
        return 3 if e < 0 else ATOM
    if isinstance(e, str):
        return ATOM if _atomic(e) else 0
    row = OPS[e[0]]
    return row.prec if row.text else ATOM


def formula_text(root) -> str:
    """A formula (``Sym.e``) in ddx's language (iteratively: rules' formulas are small, but a
    formula may be a user's long expression)."""
    done: dict[int, str] = {}
    stack = [(root, False)]
    while stack:
        e, ready = stack.pop()
        if isinstance(e, float):
            done[id(e)] = _num_text(e)
            continue
        if isinstance(e, str):
            done[id(e)] = e
            continue
        _, args, _ = e
        if not ready:
            stack.append((e, True))
            stack.extend((a.e, False) for a in args)
            continue
        done[id(e)] = _join(e, [done[id(a.e)] for a in args])
    return done[id(root)]


def _join(e, parts: list[str]) -> str:
    op_name, args, kw = e
    row = OPS[op_name]
    if row.text is None:
        if any(not isinstance(v, (int, float)) for v in kw.values()):
            raise Unsupported(f"{row.name}'s arguments")
        named = [f"{k}={_num_text(float(v))}" for k, v in kw.items()]
        return f"{row.name}({', '.join(parts + named)})"
    mine = row.prec
    wrapped = []
    for k, (a, part) in enumerate(zip(args, parts)):
        inner = _prec(a.e)
        left = k == 0 and row.text.startswith("{0}")
        if inner == ATOM:
            tight = False
        elif mine == 4:  # ^ is right-associative: (x^a)^b, (-x)^2, x^(-1)
            tight = inner <= 4 if left else inner < 4
        elif left:
            tight = inner < mine
        else:  # a - (b - c), a/(b*c), -(-x); a unary minus binds looser than ^: -x^2
            tight = inner <= mine
        wrapped.append(f"({part})" if tight else part)
    fields = {k: _num_text(v) if isinstance(v, float) else v for k, v in kw.items()}
    return row.text.format(*wrapped, **fields)
