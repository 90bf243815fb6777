"""Which derivatives of a graph still depend on its leaves, as PyTorch's create_graph sees it
(a gradient that does not depend on them has no grad_fn). Each node is summarised by the
monomials of its leaves it can contain, exponents capped at 3: sums and shape ops keep their
inputs' monomials, products multiply them, and every other op (pow included: PyTorch's pow
backward reads ``x.pow(e - 1)``) may contain any monomial of the leaves it depends on."""

from __future__ import annotations

from itertools import product

from ..graph import record
from ..graph.tensor import Tensor
from . import pyautograd

CAP = 3
MAX_LEAVES = 4  # 4 ** 4 monomials per node at most; beyond, every derivative may depend
LINEAR = pyautograd.LINEAR | {"neg", "positive", "to", "conj"}
PRODUCTS = pyautograd.BILINEAR


def monomials(out: Tensor, leaves: list) -> frozenset | None:
    """The exponent vectors (one per leaf) of the monomials ``out`` may contain; None when
    there are too many leaves to tell."""
    n = len(leaves)
    if n > MAX_LEAVES:
        return None
    where = {id(t): k for k, t in enumerate(leaves)}
    zero = (0,) * n
    const = frozenset((zero,))
    got: dict = {}
    for t in record.ancestors(out):
        if id(t) in where:
            e = [0] * n
            e[where[id(t)]] = 1
            got[id(t)] = frozenset((tuple(e),))
            continue
        ins = [got.get(id(s), const) for s in t.inputs]
        if not t.inputs or all(m == const for m in ins):
            got[id(t)] = const
        elif t.op in LINEAR:
            got[id(t)] = frozenset().union(*ins)
        elif t.op in PRODUCTS and (t.op != "div" or ins[1] == const):
            acc = ins[0]
            for m in ins[1:]:
                acc = frozenset(tuple(min(CAP, x + y) for x, y in zip(a, b))
                                for a in acc for b in m)
            got[id(t)] = acc
        else:
            used = [k for k in range(n) if any(e[k] for m in ins for e in m)]
            got[id(t)] = frozenset(tuple(p[used.index(k)] if k in used else 0
                                         for k in range(n))
                                   for p in product(range(CAP + 1), repeat=len(used)))
    return got.get(id(out), const)


def first_depends(mono: frozenset | None, j: int) -> bool:
    """Does d out/d leaf_j depend on the leaves?"""
    return mono is None or any(e[j] >= 1 and sum(e) >= 2 for e in mono)


def second_depends(mono: frozenset | None, i: int, j: int) -> bool:
    """Does d^2 out/d leaf_i d leaf_j depend on the leaves?"""
    if mono is None:
        return True
    need = 2 if i == j else 1
    return any(e[i] >= need and e[j] >= 1 and sum(e) >= 3 for e in mono)


def second_nonzero(mono: frozenset | None, i: int, j: int) -> bool:
    """Can d^2 out/d leaf_i d leaf_j be other than zero? (A sum of such terms is PyTorch's
    AddBackward0.)"""
    if mono is None:
        return True
    need = 2 if i == j else 1
    return any(e[i] >= need and e[j] >= 1 for e in mono)


__all__ = ["first_depends", "monomials", "second_depends", "second_nonzero"]
