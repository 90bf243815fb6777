"""The one lowering of ddx's operators to op-table rows, as PyTorch records them.

``a - b``, ``2 - x`` and ``x - 2`` are different ops in PyTorch's graph (SubBackward0,
RsubBackward1, SubBackward0 with a wrapped number), and ``2/x`` is recorded as
``reciprocal(x) * 2``. Which one depends only on the operator and on which operands are plain
numbers, so the choice is this one table; the Evaluator (ddx/graph/program.py) and the compiler
that skips the syntax tree (ddx/replay/lean.py) both read it."""

from __future__ import annotations


class Plan:
    """How ``a sym b`` is recorded: row ``op`` on ``first`` (and ``second``), each "a" or "b"
    or, for ``2/x``, "1/b" (reciprocal(b), recorded first); ``key``: the keyword argument that
    takes the plain-number operand instead (``rsub(x, other=2)``)."""

    __slots__ = ("op", "first", "second", "key")

    def __init__(self, op: str, first: str, second: str | None = None,
                 key: str | None = None) -> None:
        self.op = op
        self.first = first
        self.second = second
        self.key = key

    def __repr__(self) -> str:
        return f"Plan({self.op}, {self.first}, {self.second}, {self.key})"


# (operator, left is a plain number, right is a plain number) -> Plan. Two plain numbers are
# folded by Python's arithmetic (program.fold_numbers) and never reach an op.
BINARY: dict[tuple[str, bool, bool], Plan] = {
    ("+", False, False): Plan("add", "a", "b"),
    ("+", True, False): Plan("add", "b", "a"),  # the tensor first: (node, 0), (None, 0)
    ("+", False, True): Plan("add", "a", "b"),
    ("-", False, False): Plan("sub", "a", "b"),
    ("-", True, False): Plan("rsub", "b", key="other"),
    ("-", False, True): Plan("sub", "a", "b"),
    ("*", False, False): Plan("mul", "a", "b"),
    ("*", True, False): Plan("mul", "b", "a"),
    ("*", False, True): Plan("mul", "a", "b"),
    ("/", False, False): Plan("div", "a", "b"),
    ("/", True, False): Plan("mul", "1/b", "a"),  # 2/x is 2 * reciprocal(x)
    ("/", False, True): Plan("div", "a", "b"),
    ("^", False, False): Plan("pow", "a", "b"),
    ("^", True, False): Plan("rpow_scalar", "b", key="base"),
    ("^", False, True): Plan("pow_scalar", "a", key="exponent"),
    ("%", False, False): Plan("remainder", "a", "b"),
    ("%", True, False): Plan("remainder", "a", "b"),
    ("%", False, True): Plan("remainder_scalar", "a", key="other"),
}

# Comparisons: operator -> row, and the row for the operands swapped (``0 < x`` is ``x > 0``,
# as Python calls the tensor's own method). Their results never require grad.
COMPARE: dict[str, tuple[str, str]] = {"<": ("lt", "gt"), "<=": ("le", "ge"), ">": ("gt", "lt"),
                                       ">=": ("ge", "le"), "==": ("eq", "eq"), "!=": ("ne", "ne")}
