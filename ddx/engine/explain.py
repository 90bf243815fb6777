"""The chain rule made visible: per-path products for every leaf, per-node steps when paths
multiply, the axes a broadcast gradient was summed over, and where a nan or inf arose."""

from __future__ import annotations

import numpy as np

from .. import fmt
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..ops import OPS
from . import symbolic
from .reverse import unbroadcast

MAX_PATHS = 32

def _short(t: Tensor) -> str:
    text = t.display if not t.weak else fmt.number(t.value.item())
    if text.replace("_", "").isalnum() or text.replace(".", "").replace("-", "").isdigit():
        return text
    return f"({text})"


def local_formula(t: Tensor, i: int) -> str | None:
    """The partial derivative of node ``t`` with respect to its input ``i``, as a formula in
    ddx's language: the op's own VJP rule run on symbolic values (ddx/symbolic.py) with an
    upstream gradient of 1. None where a rule does something no formula expresses."""
    row = OPS[t.op]
    ins = tuple(s.value.item() if s.weak else symbolic.name(s.display, s.value)
                for s in t.inputs)
    try:
        with np.errstate(all="ignore"):
            out = symbolic.make(t.op, ins, t.kw, t.value)
            d = row.vjp[i](symbolic.number(1.0, t.value.shape), out, *ins, **t.kw)
        return symbolic.text(d)
    except (symbolic.Unsupported, TypeError, ValueError, IndexError):
        return None


def local_text(t: Tensor, i: int) -> str:
    """local_formula, or else the local derivative's value at this point."""
    text = local_formula(t, i)
    return text if text is not None else fmt.value(local_value(t, i), width=30)


def hint(op_name: str) -> str:
    return OPS[op_name].hint or "check the inputs of this node"


def kink_note(t: Tensor) -> str | None:
    """What PyTorch takes for the derivative where node ``t``'s input sits on a kink."""
    row = OPS[t.op]
    if row.kink is None:
        return None
    where, note = row.kink
    with np.errstate(all="ignore"):
        at = np.asarray(where(*_args(t), **t.kw))
    return note if at.any() else None


def _args(t: Tensor) -> list:
    return [s.value.item() if s.weak else s.value for s in t.inputs]


def local_value(t: Tensor, i: int) -> np.ndarray:
    """The local derivative's value: the VJP rule applied to an upstream gradient of ones."""
    g = np.ones(t.value.shape, dtype=t.value.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(OPS[t.op].vjp[i](g, t.value, *_args(t), **t.kw))


def _grad_edges(t: Tensor):
    """The inputs of ``t`` that carry gradient, with their slot numbers."""
    if t.grad_fn is None:
        return []
    return [(i, s) for i, s in enumerate(t.inputs) if s.requires_grad]


def count_paths(output: Tensor, order: list[Tensor]) -> dict[int, int]:
    """How many distinct paths lead from the output to each node (dynamic programming)."""
    paths = {id(output): 1}
    for t in reversed(order):
        n = paths.get(id(t), 0)
        if not n:
            continue
        for _, s in _grad_edges(t):
            paths[id(s)] = paths.get(id(s), 0) + n
    return paths


def leaf_paths(output: Tensor, leaf: Tensor) -> list[list[tuple[Tensor, int]]]:
    """Every path output -> leaf as a list of (node, input slot) edges (explicit stack)."""
    found: list[list[tuple[Tensor, int]]] = []
    stack: list[tuple[Tensor, list]] = [(output, [])]
    while stack:
        t, path = stack.pop()
        if t is leaf:
            found.append(path)
            continue
        for i, s in reversed(_grad_edges(t)):
            stack.append((s, path + [(t, i)]))
    return found


def explain(trace) -> dict:
    """The explain ledger for a trace after backward (the JSON form; render.py draws it)."""
    output = trace.output
    order = ancestors(output)
    scalar = all(t.value.size == 1 for t in order if t.requires_grad)
    paths = count_paths(output, order)
    leaves = {}
    for name, leaf in trace.leaves.items():
        n = paths.get(id(leaf), 0)
        entry: dict = {"gradient": trace.grad_of(leaf), "paths": [], "mode": "paths"}
        if n == 0:
            entry["mode"] = "unused"
        elif not scalar or n > MAX_PATHS:
            entry["mode"] = "nodes"
            entry["path_count"] = n
        else:
            total = 0.0
            for path in leaf_paths(output, leaf):
                factors = []
                product = 1.0
                upstream = trace.grad_of(output)
                seed = float(np.asarray(upstream).reshape(-1)[0]) if upstream is not None else 1.0
                if seed != 1.0:
                    factors.append({"node": "grad_output", "at": trace.output_name,
                                    "local": "gradient", "value": seed})
                    product = seed
                for t, i in path:
                    v = float(np.asarray(local_value(t, i)).reshape(-1)[0])
                    factors.append({"node": t.grad_fn.name, "at": t.display,
                                    "local": local_text(t, i), "value": v})
                    product *= v
                entry["paths"].append({"factors": factors, "product": product})
                total += product
            entry["sum"] = total
        leaves[name] = entry
    return {"leaves": leaves, "steps": node_steps(trace, order),
            "nonfinite": find_nonfinite(trace, order)}


def node_steps(trace, order: list[Tensor]) -> list[dict]:
    """Per node, in backward order: upstream gradient, local derivative, what each input gets,
    and the axes a broadcast input's gradient was summed over."""
    steps = []
    for t in reversed(order):
        edges = _grad_edges(t)
        if not edges:
            continue
        g = trace.flow.get(t.grad_fn)
        if g is None:
            continue
        args = _args(t)
        for i, s in edges:
            with np.errstate(all="ignore"):
                raw = np.asarray(OPS[t.op].vjp[i](g, t.value, *args, **t.kw))
            summed = _summed_axes(raw.shape, s.value.shape)
            step = {"node": t.grad_fn.name, "at": t.display, "input": s.display,
                    "local": local_text(t, i), "upstream": g,
                    "gets": unbroadcast(raw, s.value.shape), "summed_axes": summed,
                    "shape": list(s.value.shape)}
            note = kink_note(t)
            if note is not None:
                step["kink"] = note
            steps.append(step)
    return steps


def _summed_axes(shape: tuple, target: tuple) -> list[int]:
    """The axes of ``shape`` that unbroadcasting to ``target`` sums over."""
    extra = len(shape) - len(target)
    axes = list(range(extra))
    axes += [extra + i for i, n in enumerate(target) if n == 1 and shape[extra + i] != 1]
    return axes


def _finite(v) -> bool:
    a = np.asarray(v)
    return a.dtype.kind != "f" or bool(np.isfinite(a).all())


def find_nonfinite(trace, order: list[Tensor]) -> dict | None:
    """The first node where a nan or inf arose, forward first, then backward, and why."""
    for t in order:
        if t.inputs and not _finite(t.value) and all(_finite(s.value) for s in t.inputs):
            op = t.op
            return {"pass": "forward", "node": t.grad_fn.name if t.grad_fn else op,
                    "at": t.display, "why": f"{t.display} = {fmt.value(t.value, width=30)} with "
                    + ", ".join(f"{s.display} = {fmt.value(s.value, width=20)}" for s in t.inputs
                                if not s.weak),
                    "hint": hint(op)}
    for t in reversed(order):
        g = trace.flow.get(t.grad_fn) if t.grad_fn is not None else None
        if g is None or not _finite(g):
            continue
        args = _args(t)
        for i, s in _grad_edges(t):
            with np.errstate(all="ignore"):
                got = np.asarray(OPS[t.op].vjp[i](g, t.value, *args, **t.kw))
            if _finite(got):
                continue
            local = local_value(t, i)
            return {"pass": "backward", "node": t.grad_fn.name, "at": t.display,
                    "input": s.display,
                    "why": f"the local derivative {local_text(t, i)} = "
                           f"{fmt.value(local, width=30)} at {s.display} = "
                           f"{fmt.value(s.value, width=20)}, times the upstream gradient "
                           f"{fmt.value(g, width=20)}, gives {fmt.value(got, width=20)}",
                    "hint": hint(t.op)}
    return None
