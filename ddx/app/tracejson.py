"""The JSON document of a trace (SPEC §4): output, gradients, every node, and each mode asked."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..fmt import jsonable
from ..ops import display_name
from ..replay.jsonfmt import document_format, dump, middle_fields, node_format, op_fields


def trace_json(trace) -> str:
    """The JSON document of a built trace: its nodes, their values and gradients, and each
    mode asked for, written by the one document writer (replay/jsonfmt.py)."""
    ids = trace.node_ids()
    flow = trace.flow
    rows, numbers = [], []
    for i, t in enumerate(trace.nodes):
        fn = t.grad_fn
        rows.append(node_format(i, t.name or t.label or "?",
                                op_fields(display_name(t.op), fn.name if fn is not None else None),
                                [ids[id(s)] for s in t.inputs if id(s) in ids],
                                middle_fields(t.value.shape, t.requires_grad, fn is None)))
        numbers += [dump(t.value), dump(flow.get(fn) if fn is not None else t.grad)]
    out = trace.output
    grads = trace.grads
    head = {"output": trace.output_name, "shape": list(out.value.shape),
            "dtype": str(out.value.dtype),
            "grad_fn": out.grad_fn.name if out.grad_fn is not None else None}
    form = document_format(head, list(grads), ", ".join(rows), trace.warnings)
    body = form % tuple([dump(out.value), *[dump(g) for g in grads.values()], *numbers])
    extras = {key: extras_json(key, value) for key, value in trace.extras.items()}
    costs = {k: v["cost"] for k, v in trace.extras.items() if isinstance(v, dict) and "cost" in v}
    if costs:
        extras["cost"] = tree_json(costs)
    if extras:
        body = body[:-1] + "".join(f", {json.dumps(k)}: {json.dumps(v)}"
                                   for k, v in extras.items()) + "}"
    return "{" + body


def tree_json(value: Any) -> Any:
    """numpy arrays inside dicts/lists/tuples made JSON-ready (explicit stack)."""
    root: list = [None]
    stack = [(value, root, 0)]
    while stack:
        v, parent, key = stack.pop()
        if isinstance(v, np.ndarray) or isinstance(v, np.generic):
            parent[key] = jsonable(v)
        elif isinstance(v, dict):
            d: dict = {}
            parent[key] = d
            stack.extend((item, d, k) for k, item in v.items())
        elif isinstance(v, (list, tuple)):
            items: list = [None] * len(v)
            parent[key] = items
            stack.extend((item, items, i) for i, item in enumerate(v))
        elif isinstance(v, float) and not np.isfinite(v):
            parent[key] = jsonable(np.asarray(v))
        else:
            parent[key] = v
    return root[0]


def extras_json(key: str, value: dict) -> Any:
    """SPEC §4 / issue layouts: "forward" is shaped like "gradients"; the rest carry details."""
    if key == "forward":
        return tree_json(value["gradients"])
    if key == "jacobian":
        return tree_json(value["reverse"])
    if key == "hessian":
        return tree_json(value["hessian"])
    if key == "check":
        return tree_json({k: v for k, v in value.items()})
    return tree_json(value)
