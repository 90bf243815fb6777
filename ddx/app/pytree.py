"""torch.func's pytrees: the tuples, lists and dicts of tensors a transform's arguments and
results may be (``grad(loss)(params)`` of a dict of parameters, ``vmap`` of a tuple), flattened
into their leaves in PyTorch's order (a dict's in insertion order) and built back the same
shape. Both walks keep an explicit stack: nothing recurses over the user's structure."""

from __future__ import annotations

from typing import Any

from ..graph.tensor import Tensor

CONTAINERS = (tuple, list, dict)


class Spec:
    """The shape of a pytree: its nodes in pre-order, each ('leaf',), ('tuple', n, type),
    ('list', n) or ('dict', keys, type)."""

    def __init__(self, nodes: list) -> None:
        self.nodes = nodes

    @property
    def leaves(self) -> int:
        return sum(1 for n in self.nodes if n[0] == "leaf")

    def text(self) -> str:
        """PyTorch's TreeSpec repr (its messages show it): ``TreeSpec(tuple, None, [*,\n  *])``,
        a leaf ``*``, a dict's keys as its context, each level's children two spaces further
        in (torch/utils/_pytree.py's __repr__, written with an explicit stack)."""
        out: list[str] = []
        open_: list = []  # [children left, their indent, children written]
        for node in self.nodes:
            if open_:
                top = open_[-1]
                if top[2]:
                    out.append(",\n" + " " * top[1])
                top[2] += 1
            if node[0] == "leaf":
                out.append("*")
            else:
                n = node[1] if node[0] != "dict" else len(node[1])
                ctx = "None" if node[0] != "dict" else repr([str(k) for k in node[1]])
                out.append(f"TreeSpec({node[0]}, {ctx}, [")
                indent = open_[-1][1] + 2 if open_ else 2
                open_.append([n, indent, 0])
                if n:
                    continue
                open_.pop()
                out.append("])")
            while open_:
                top = open_[-1]
                top[0] -= 1
                if top[0] > 0:
                    break
                open_.pop()
                out.append("])")
        return "".join(out)


def is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) and not value.weak


def flatten(value: Any) -> tuple[list, Spec]:
    leaves: list = []
    nodes: list = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            nodes.append(("tuple", len(v), type(v)))
            stack.extend(reversed(v))
        elif isinstance(v, list):
            nodes.append(("list", len(v), type(v)))
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            nodes.append(("dict", list(v.keys()), type(v)))
            stack.extend(reversed(list(v.values())))
        else:
            nodes.append(("leaf",))
            leaves.append(v)
    return leaves, Spec(nodes)


def unflatten(leaves: list, spec: Spec) -> Any:
    """The structure ``spec`` with ``leaves`` in place of its leaves (in order)."""
    it = iter(leaves)
    # each open container: [node, items gathered]; a finished value goes to its parent
    open_: list = []
    result: list = []
    for node in spec.nodes:
        if node[0] == "leaf":
            value = next(it)
        else:
            n = node[1] if node[0] != "dict" else len(node[1])
            if n:
                open_.append([node, []])
                continue
            value = _build(node, [])
        while True:
            if not open_:
                result.append(value)
                break
            top = open_[-1]
            top[1].append(value)
            n = top[0][1] if top[0][0] != "dict" else len(top[0][1])
            if len(top[1]) < n:
                break
            open_.pop()
            value = _build(top[0], top[1])
    return result[0]


def _build(node: tuple, items: list) -> Any:
    kind = node[0]
    if kind == "dict":
        out = node[2]() if node[2] is not dict else {}
        for k, v in zip(node[1], items):
            out[k] = v
        return out
    if kind == "list":
        return list(items)
    return tuple(items)


def render(value: Any, leaf_text) -> str:
    """Python's repr of a pytree, each leaf as ``leaf_text`` gives it: ``(None, None, 0)``,
    ``(0,)``, ``[0, None]``, ``{'a': 1}`` (an explicit stack, like flatten)."""
    leaves, spec = flatten(value)
    it = iter(leaves)
    out: list[str] = []
    # each open container: [closing text, items left, keys left (a dict's)]
    open_: list = []
    for node in spec.nodes:
        if open_:
            top = open_[-1]
            if top[2]:
                out.append(f"{top[2].pop(0)!r}: ")
        if node[0] == "leaf":
            out.append(leaf_text(next(it)))
        else:
            n = node[1] if node[0] != "dict" else len(node[1])
            out.append({"tuple": "(", "list": "[", "dict": "{"}[node[0]])
            close = {"tuple": ",)" if n == 1 else ")", "list": "]", "dict": "}"}[node[0]]
            open_.append([close, n, [str(k) for k in node[1]] if node[0] == "dict" else []])
            if n:
                continue
            out.append(open_.pop()[0])
        while open_:
            top = open_[-1]
            top[1] -= 1
            if top[1] > 0:
                out.append(", ")
                break
            out.append(open_.pop()[0])
    return "".join(out)


def map_leaves(fn, value: Any) -> Any:
    leaves, spec = flatten(value)
    return unflatten([fn(v) for v in leaves], spec)


__all__ = ["CONTAINERS", "Spec", "flatten", "is_tensor", "map_leaves", "render", "unflatten"]
