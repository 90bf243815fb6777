"""Derivative formulas: the backward pass run on symbolic values (``symbolic.Sym``).

The same graph, the same rows and the same VJP rules as the numeric gradient: every node's
value becomes a formula in its inputs' formulas (``symbolic.make``), and the adjoints are the
rules applied to them. What comes out is a DAG (a formula shared by the rules that use it is
one object), so its size is the reverse-mode cost, not the expanded tree's; ``shared`` writes
it as ``let``-style statements (valid ddx input), ``tree_ops`` counts the tree it stands for.
The algebra (simplification, ``cse``) is ddx/engine/algebra.py's, with SymPy."""

from __future__ import annotations

import numpy as np

from ..errors import DdxValueError
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..ops import OPS
from . import symbolic
from .symbolic import Sym


class Gradient:
    """d(output)/d(leaf) for every leaf that requires grad, as formulas (Sym), and the
    conditions (``x > 0``) the masks of the rules took here."""

    def __init__(self, output: Sym, grads: dict[str, Sym], conditions: list[str],
                 vjps: int, forward_ops: int) -> None:
        self.output = output
        self.grads = grads
        self.conditions = conditions
        self.vjps = vjps
        self.forward_ops = forward_ops


WHOLE = ("sum", "mean", "norm", "logsumexp", "dot")  # reductions a formula writes whole


def no_formula(why: str) -> DdxValueError:
    return DdxValueError(f"no derivative formula: {why}",
                         hint="the numbers are still exact: drop --symbolic, or bind the "
                              "variables to values")


def _leaf(t: Tensor):
    if t.weak:
        return float(t.value.item())
    if t.name:
        return symbolic.name(t.name, t.value)
    if t.value.size == 1 or (t.value.size and np.all(t.value == t.value.flat[0])):
        return symbolic.number(float(t.value.flat[0]), t.value.shape)
    what = "a constant tensor" if t.display == "?" else f"the constant {t.display}"
    raise no_formula(f"{what} holds different numbers (a formula is written per element)")


def _sum_to(g, shape: tuple):
    """Undo broadcasting, as the engine does after every VJP: a sum over the extra axes."""
    if np.shape(g.v) == tuple(shape):
        return g
    if shape == () or int(np.prod(shape)) == 1:
        total = symbolic.make("sum", (symbolic.lift(g),), {})
        return Sym(total.e, np.reshape(total.v, shape))
    raise no_formula("a gradient summed over some axes of a matrix (index notation is not "
                     "written here)")


def gradient(output: Tensor, leaves: dict[str, Tensor]) -> Gradient:
    """The formulas of d(output)/d(leaf), from the graph behind ``output``."""
    if output.value.size != 1:
        raise no_formula(f"the output has shape {list(output.value.shape)}; a formula is for "
                         "a scalar output (reduce it first, e.g. sum(...))")
    order = ancestors(output)
    conditions: list[str] = []
    symbolic.CONDITIONS = conditions
    try:
        return _run(output, order, leaves, conditions)
    except symbolic.Unsupported as exc:
        raise no_formula(f"a rule does something no formula here writes ({exc})") from None
    finally:
        symbolic.CONDITIONS = None


def _run(output: Tensor, order: list[Tensor], leaves: dict[str, Tensor], conditions) -> Gradient:
    forms: dict[int, object] = {}
    forward_ops = 0
    for t in order:
        if not t.inputs:
            forms[id(t)] = _leaf(t)
            continue
        row = OPS[t.op]
        whole = row.name in WHOLE and t.kw.get("dim") is None
        if not row.elementwise and not whole:
            dim = t.kw.get("dim")
            dim = dim[0] if isinstance(dim, tuple) and len(dim) == 1 else dim
            why = ("picks elements" if row.name in ("max", "min") else
                   f"reduces over dim={dim}" if dim is not None else "mixes elements")
            raise no_formula(f"{row.shown} ({t.display}) {why}; formulas are written per "
                             "element, for elementwise functions and whole reductions (sum, "
                             "mean, norm, logsumexp, dot)")
        if any(not isinstance(v, (int, float)) for v in t.kw.values() if v is not None):
            raise no_formula(f"{row.shown} ({t.display}) takes arguments no formula writes")
        forward_ops += 1
        kw = t.kw if not whole else {k: v for k, v in t.kw.items()  # (the same per element)
                                     if v is not None and k not in ("dim", "keepdim")}
        with np.errstate(all="ignore"):
            forms[id(t)] = symbolic.make(t.op, tuple(forms[id(s)] for s in t.inputs), kw,
                                         t.value)
    adjoint: dict[int, object] = {id(output): symbolic.number(1.0, output.value.shape)}
    vjps = 0
    for t in reversed(order):
        g = adjoint.get(id(t))
        if g is None or not t.inputs or t.grad_fn is None:
            continue
        del adjoint[id(t)]
        row = OPS[t.op]
        args = [forms[id(s)] for s in t.inputs]
        for i, s in enumerate(t.inputs):
            if not s.requires_grad:
                continue
            with np.errstate(all="ignore"):
                gi = row.vjp[i](g, forms[id(t)], *args, **t.kw)
            vjps += 1
            gi = _sum_to(symbolic.lift(gi) if not isinstance(gi, Sym) else gi, s.value.shape)
            adjoint[id(s)] = symbolic.make("add", (adjoint[id(s)], gi), {}) \
                if id(s) in adjoint else gi
    grads = {}
    for name, leaf in leaves.items():
        g = adjoint.get(id(leaf))
        grads[name] = g if g is not None else symbolic.number(0.0, leaf.value.shape)
    out = forms[id(output)]
    return Gradient(symbolic.lift(out), grads, conditions, vjps, forward_ops)


# --- the DAG: its nodes once, the tree it stands for, and its let-form ------------------------

def _kids(e) -> tuple:
    return tuple(a.e for a in e[1]) if isinstance(e, tuple) else ()


def nodes(roots: list) -> list:
    """Every distinct formula node under ``roots`` (Sym or their ``e``), children first; equal
    subformulas built apart are one node (hash-consed by structure)."""
    order, seen = [], set()
    stack = [(r.e if isinstance(r, Sym) else r, False) for r in reversed(roots)]
    while stack:
        e, done = stack.pop()
        if done:
            order.append(e)
            continue
        if id(e) in seen:
            continue
        seen.add(id(e))
        stack.append((e, True))
        stack.extend((k, False) for k in _kids(e) if id(k) not in seen)
    return order


def canonical(roots: list) -> tuple[dict[int, int], list]:
    """Structural ids: ``key[id(e)]`` is the same number for equal formulas; and the distinct
    nodes (one representative each), children first."""
    key: dict[int, int] = {}
    table: dict = {}
    reps: list = []
    for e in nodes(roots):
        if isinstance(e, tuple):
            sig = (e[0], tuple(key[id(k)] for k in _kids(e)), tuple(sorted(e[2].items())))
        else:
            sig = ("leaf", type(e).__name__, e)
        k = table.get(sig)
        if k is None:
            k = table[sig] = len(reps)
            reps.append(e)
        key[id(e)] = k
    return key, reps


def tree_ops(root) -> int:
    """The operations in the formula written out as a tree, no sharing (counted over the DAG,
    so a formula exponentially larger than its DAG is counted without being built)."""
    count: dict[int, int] = {}
    for e in nodes([root]):
        count[id(e)] = (1 + sum(count[id(k)] for k in _kids(e))) if isinstance(e, tuple) else 0
    return count[id(root.e if isinstance(root, Sym) else root)]


def dag_ops(roots: list) -> int:
    """The operations when every distinct subformula is computed once."""
    _, reps = canonical(roots)
    return sum(1 for e in reps if isinstance(e, tuple))


def shared(roots: list[Sym], avoid: set[str], prefix: str = "t") -> tuple[list, list[str]]:
    """The let-form: ``([(name, text), ...], [text of each root])``, valid ddx statements; a
    subformula used more than once is named once (names not in ``avoid``)."""
    key, reps = canonical(roots)
    uses = [0] * len(reps)
    for e in reps:
        for k in _kids(e):
            uses[key[id(k)]] += 1
    for r in roots:
        uses[key[id(r.e)]] += 1
    while any(f"{prefix}{i}" in avoid for i in range(1, len(reps) + 1)):
        prefix += "_"
    names: dict[int, str] = {}
    lets: list = []
    built: dict[int, object] = {}  # canonical key -> e with shared kids replaced by names
    for k, e in enumerate(reps):
        if isinstance(e, tuple):
            args = tuple(Sym(names.get(key[id(a.e)], built[key[id(a.e)]]), a.v) for a in e[1])
            built[k] = (e[0], args, e[2])
        else:
            built[k] = e
        if isinstance(e, tuple) and uses[k] > 1:
            names[k] = f"{prefix}{len(lets) + 1}"
            lets.append((names[k], symbolic.text(Sym(built[k], 0.0))))
    outs = [names.get(key[id(r.e)]) or symbolic.text(Sym(built[key[id(r.e)]], r.v))
            for r in roots]
    return lets, outs
