"""The JSON document of a trace (SPEC §4): output, gradients, every node, and each mode asked."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fmt import jsonable
from ..ops import display_name


def trace_json(trace) -> dict:
    """The document of a built trace (its nodes, their values and gradients, the extras)."""
    ids = trace.node_ids()
    nodes = []
    flow = trace.flow
    for i, t in enumerate(trace.nodes):
        fn = t.grad_fn
        value = t.value
        op = t.op
        nodes.append({
            "id": i,
            "name": t.name or t.label or "?",
            "op": display_name(op),
            "grad_fn": fn.name if fn is not None else None,
            "inputs": [ids[id(s)] for s in t.inputs if id(s) in ids],
            "value": jsonable(value),
            "shape": list(value.shape),
            "requires_grad": t.requires_grad,
            "is_leaf": fn is None,
            "grad": jsonable(flow.get(fn) if fn is not None else t.grad),
        })
    out = trace.output
    return {
        "output": trace.output_name,
        "value": jsonable(out.value),
        "shape": list(out.value.shape),
        "dtype": str(out.value.dtype),
        "grad_fn": out.grad_fn.name if out.grad_fn is not None else None,
        "gradients": {n: (jsonable(g) if g is not None else None)
                      for n, g in trace.grads.items()},
        "nodes": nodes,
        "warnings": list(trace.warnings),
        **{key: extras_json(key, value) for key, value in trace.extras.items()},
        **({"cost": tree_json({k: v["cost"] for k, v in trace.extras.items()
                               if isinstance(v, dict) and "cost" in v})}
           if any(isinstance(v, dict) and "cost" in v for v in trace.extras.values()) else {}),
    }


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
