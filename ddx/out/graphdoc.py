"""A graph as data for the pictures: nodes with values and gradients as small grids, the backward
pass step by step in the engine's own order, and groups that fold long chains and their parts."""

from __future__ import annotations

import numpy as np

from .. import fmt
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..ops import OPS
from ..textsafe import safe_text

GRID_ROWS, GRID_COLS = 4, 4  # a value shows at most this many rows and columns, then '…'
FOLD_FROM = 40  # graphs with more nodes than this fold their long chains
CHAIN_MIN = 4  # ops in a chain before it folds
REPEAT_MIN = 6  # inputs of one node that are the same computation before they fold


def kind(view, t: Tensor) -> str:
    if t is view.output:
        return "out"
    if t.op in ("leaf", "const") or not t.inputs:
        return "leaf" if t.requires_grad else "const"
    return "op"


def _num(v) -> str:
    return fmt.short(v) if isinstance(v, (float, np.floating)) else fmt.number(v)


def cell(arr) -> dict | None:
    """A value for a picture: its text, and for arrays a small grid (rows x cols of strings,
    '…' where rows or columns are left out) with a summary line."""
    if arr is None:
        return None
    a = np.asarray(arr)
    out: dict = {"shape": list(a.shape), "bad": fmt.nonfinite(a)}
    if a.ndim == 0:
        out["text"] = _num(a.item())
        return out
    m = a.reshape(1, -1) if a.ndim == 1 else a.reshape(-1, a.shape[-1])
    rows = _pick(m.shape[0], GRID_ROWS)
    cols = _pick(m.shape[1], GRID_COLS)
    out["grid"] = [["…" if j is None or i is None else _num(m[i, j]) for j in cols]
                   for i in rows]
    out["text"] = fmt.value(a, threshold=6, width=40, exact=False)
    if a.size and a.dtype.kind in "fiu":
        with np.errstate(all="ignore"):
            finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
        if finite.size:
            out["summary"] = (f"{fmt.shape(a)}  min {_num(finite.min())}  max "
                              f"{_num(finite.max())}  mean {_num(finite.mean())}")
        else:
            out["summary"] = f"{fmt.shape(a)}  no finite entries"
    return out


def _pick(n: int, most: int) -> list[int | None]:
    if n <= most:
        return list(range(n))
    head = most - 1
    return list(range(head - 1)) + [None, n - 1] if head > 1 else [0, None, n - 1]


def label(t: Tensor) -> str:
    if t.weak or t.display == "?":  # a number in the expression
        return fmt.value(t.value, width=30, exact=False)
    return safe_text(t.display if t.name or t.op != "const" else f"const {t.display}")


def nodes_of(view) -> list[Tensor]:
    return ancestors(view.output)


def node_records(view, nodes: list[Tensor], flow: dict | None = None) -> list[dict]:
    ids = {id(t): i for i, t in enumerate(nodes)}
    out = []
    for i, t in enumerate(nodes):
        k = kind(view, t)
        row = OPS.get(t.op) if t.inputs else None
        grad = view.grad_of(t) if view.backward_done and t.requires_grad else None
        if grad is None and flow and t.grad_fn in flow:  # what reached it (a REPL tensor)
            grad = flow[t.grad_fn]
        out.append({
            "id": i, "name": label(t), "kind": k,
            "op": safe_text(row.symbol if row is not None else ""),
            "grad_fn": t.grad_fn.name if t.grad_fn is not None else
            ("AccumulateGrad" if t.requires_grad else None),
            "inputs": [ids[id(s)] for s in t.inputs if id(s) in ids],
            "requires_grad": bool(t.requires_grad), "value": cell(t.value), "grad": cell(grad),
        })
    return out


def backward_steps(view, nodes: list[Tensor], flow: dict | None = None) -> list[dict]:
    """The backward pass as the engine ran it: one step per Function, in the order the engine
    visited them (the order it recorded their gradients in), each with what every input got:
    local derivative (the --explain text) x upstream = passed on, and the receiving node's
    running total (reused inputs accumulate)."""
    from ..engine.explain import kink_note, local_text, local_value
    from ..engine.reverse import unbroadcast

    flow = _flow(view, nodes) if flow is None else flow
    if not flow:
        return []
    by_fn = {t.grad_fn: t for t in nodes if t.grad_fn is not None}
    ids = {id(t): i for i, t in enumerate(nodes)}
    incoming: dict[int, int] = {}
    for fn in flow:
        t = by_fn.get(fn)
        for s in (t.inputs if t is not None else ()):
            if s.requires_grad:
                incoming[id(s)] = incoming.get(id(s), 0) + 1
    totals: dict[int, np.ndarray] = {}
    counts: dict[int, int] = {}
    steps = []
    for fn, g in flow.items():
        t = by_fn.get(fn)
        if t is None:
            continue
        args = [s.value.item() if s.weak else s.value for s in t.inputs]
        edges = []
        for i, s in enumerate(t.inputs):
            if not s.requires_grad:
                continue
            with np.errstate(all="ignore"):
                raw = np.asarray(OPS[t.op].vjp[i](g, t.value, *args, **t.kw))
                gets = unbroadcast(raw, s.value.shape).astype(s.value.dtype, copy=False)
                key = id(s)
                before = totals.get(key)
                totals[key] = gets if before is None else np.asarray(before + gets)
            counts[key] = counts.get(key, 0) + 1
            edge = {"input": ids[key], "slot": i, "local": safe_text(local_text(t, i)),
                    "local_value": cell(local_value(t, i)), "passed": cell(gets),
                    "before": cell(before), "total": cell(totals[key]),
                    "count": counts[key], "of": incoming[key]}
            note = kink_note(t)
            if note is not None:
                edge["kink"] = note
            if raw.shape != s.value.shape:
                edge["summed"] = f"summed from {fmt.shape(raw)} to {fmt.shape(s.value)}"
            edges.append(edge)
        steps.append({"node": ids[id(t)], "grad_fn": fn.name, "upstream": cell(g),
                      "edges": edges})
    return steps


def _flow(view, nodes: list[Tensor]) -> dict:
    """The Functions' gradients in visiting order: the trace's record of its backward, or a
    fresh pass that touches no .grad (a REPL tensor whose backward ran, its graph kept)."""
    flow = getattr(view, "flow", None)
    if flow is not None:
        return flow
    out = view.output
    if not view.backward_done or out.grad_fn is None or out.value.size != 1 or all(
            t.grad is None for t in nodes if not t.inputs and t.requires_grad):
        return {}
    from ..engine.reverse import propagate
    from ..errors import DdxError

    record: dict = {}
    try:
        with np.errstate(all="ignore"):
            propagate(out, np.ones_like(out.value), lambda t, g: None, retain_graph=True,
                      record=record, retain_grads=False)
    except DdxError:  # a freed graph: the page shows values and gradients, without steps
        return {}
    return record


def fold_groups(nodes: list[Tensor], keep: set[int]) -> list[tuple[list[int], int]]:
    """Groups of node indices to fold: each long chain of ops (each with one consumer, the next)
    with every node that only the chain uses, then repeated inputs of one node; the ids in
    ``keep`` (the output, the leaves that require grad) stay outside. Nothing recursive.
    Each group comes with how many repeated parts it holds (0 for a chain)."""
    if len(nodes) <= FOLD_FROM:
        return []
    ids = {id(t): i for i, t in enumerate(nodes)}
    consumers: list[list[int]] = [[] for _ in nodes]
    for i, t in enumerate(nodes):
        for s in t.inputs:
            if id(s) in ids and i not in consumers[ids[id(s)]]:
                consumers[ids[id(s)]].append(i)
    is_op = [bool(t.inputs) for t in nodes]
    nxt: dict[int, int] = {}  # chain links: a node to its single consumer
    prev: dict[int, int] = {}
    for i in range(len(nodes)):
        if is_op[i] and i not in keep and len(consumers[i]) == 1:
            c = consumers[i][0]
            if is_op[c] and c not in prev:
                nxt[i], prev[c] = c, i
    group_of: dict[int, int] = {}
    groups: list[list[int]] = []
    for i in range(len(nodes)):
        if i in prev or i not in nxt:
            continue
        chain = [i]
        while chain[-1] in nxt:
            chain.append(nxt[chain[-1]])
        if chain[-1] in keep:
            chain.pop()
        if len(chain) >= CHAIN_MIN:
            for j in chain:
                group_of[j] = len(groups)
            groups.append(chain)
    for i in reversed(range(len(nodes))):  # users come after their inputs: consumers first
        if i in group_of or i in keep or not consumers[i]:
            continue
        owners = {group_of.get(c) for c in consumers[i]}
        if len(owners) == 1 and None not in owners:
            g = owners.pop()
            group_of[i] = g
            groups[g].append(i)
    repeats: dict[int, int] = {}
    _fold_repeats(nodes, ids, consumers, keep, group_of, groups, repeats)
    return [(sorted(g), repeats.get(k, 0)) for k, g in enumerate(groups)]


def _fold_repeats(nodes, ids, consumers, keep, group_of, groups, repeats) -> None:
    """Repeated structure: many inputs of one node that are the same small computation
    (``[sin(x*1), sin(x*2), ...]``), each with what only it uses, fold into one group."""
    for c in range(len(nodes)):
        if c in group_of:
            continue
        by_sig: dict[tuple, list[list[int]]] = {}
        for s in dict.fromkeys(ids[id(t)] for t in nodes[c].inputs if id(t) in ids):
            if s in group_of or s in keep or not nodes[s].inputs or len(consumers[s]) != 1:
                continue
            part, stack = [s], [s]
            while stack:  # what only this input uses (explicit stack)
                for u in nodes[stack.pop()].inputs:
                    j = ids.get(id(u))
                    if j is not None and j not in keep and j not in group_of and \
                            len(consumers[j]) == 1 and j not in part:
                        part.append(j)
                        stack.append(j)
            part.sort()
            by_sig.setdefault(tuple(nodes[j].op for j in part), []).append(part)
        for parts in by_sig.values():
            if len(parts) >= REPEAT_MIN:
                for p in parts:
                    for j in p:
                        group_of[j] = len(groups)
                repeats[len(groups)] = len(parts)
                groups.append([j for p in parts for j in p])


def group_records(view, nodes: list[Tensor]) -> list[dict]:
    keep = {i for i, t in enumerate(nodes) if t is view.output or
            (not t.inputs and t.requires_grad)}
    out = []
    for k, (members, parts) in enumerate(fold_groups(nodes, keep)):
        names: dict[str, int] = {}
        for i in members:
            t = nodes[i]
            n = t.grad_fn.name if t.grad_fn is not None else ("constant" if not t.inputs
                                                              else t.op)
            names[n] = names.get(n, 0) + 1
        top = max(members, key=lambda i: i)
        out.append({"id": k, "members": members, "size": len(members), "top": top,
                    "summary": ", ".join(f"{c} × {n}" for n, c in
                                         sorted(names.items(), key=lambda kv: -kv[1])),
                    "name": (f"{parts} parts like {label(nodes[members[-1]])}" if parts
                             else label(nodes[top]))})
    return out


def document(view) -> dict:
    """Everything a picture shows, as JSON-ready data."""
    nodes = nodes_of(view)
    flow = _flow(view, nodes)
    steps = backward_steps(view, nodes, flow)
    return {"title": safe_text(f"{view.output_name} = {view.output.display}"
                               if view.output_name != view.output.display
                               else view.output_name),
            "nodes": node_records(view, nodes, flow), "steps": steps,
            "groups": group_records(view, nodes), "backward": bool(view.backward_done),
            "fresh": getattr(view, "flow", None) is None,
            "output": safe_text(view.output_name), "nonfinite": _nonfinite(view, nodes)}


def _nonfinite(view, nodes: list[Tensor]) -> str | None:
    """--explain's words for where a nan or inf first arose (a trace after backward)."""
    if getattr(view, "flow", None) is None or not view.backward_done:
        return None
    from ..engine.explain import find_nonfinite

    with np.errstate(all="ignore"):
        found = find_nonfinite(view, nodes)
    if found is None:
        return None
    return safe_text(f"nan/inf first arose in the {found['pass']} pass at [{found['node']}] "
                     f"{found['at']}: {found['why']}. hint: {found['hint']}")
