"""The chain rule made visible: per-path products for every leaf, per-node steps when paths
multiply, the axes a broadcast gradient was summed over, and where a nan or inf arose."""

from __future__ import annotations

import numpy as np

from . import fmt
from .autograd import ancestors, unbroadcast
from .ops import OPS
from .tensor import Tensor

MAX_PATHS = 32

# The partial derivative of each op with respect to each input, as text ({a}, {b}: the inputs).
LOCAL = {
    "add": ("1", "1"), "sub": ("1", "-1"), "rsub": ("-1",), "mul": ("{b}", "{a}"),
    "div": ("1/{b}", "-{a}/{b}^2"), "neg": ("-1",), "reciprocal": ("-1/{a}^2",),
    "pow": ("{b}*{a}^({b}-1)", "{a}^{b}*log({a})"), "rpow_scalar": ("{base}^{a}*log({base})",),
    "maximum": ("[{a} >= {b}]", "[{b} >= {a}]"), "minimum": ("[{a} <= {b}]", "[{b} <= {a}]"),
    "abs": ("sign({a})",), "sqrt": ("1/(2*sqrt({a}))",), "exp": ("exp({a})",),
    "log": ("1/{a}",), "log2": ("1/({a}*ln 2)",), "log10": ("1/({a}*ln 10)",),
    "sin": ("cos({a})",), "cos": ("-sin({a})",), "tan": ("1+tan({a})^2",),
    "asin": ("1/sqrt(1-{a}^2)",), "acos": ("-1/sqrt(1-{a}^2)",), "atan": ("1/(1+{a}^2)",),
    "sinh": ("cosh({a})",), "cosh": ("sinh({a})",), "tanh": ("1-tanh({a})^2",),
    "sigmoid": ("sigmoid({a})*(1-sigmoid({a}))",), "relu": ("[{a} > 0]",),
    "softplus": ("sigmoid({a})",), "sum": ("1",), "mean": ("1/n",), "max": ("[is the max]",),
    "min": ("[is the min]",), "norm": ("{a}/norm({a})",), "logsumexp": ("softmax({a})",),
    "dot": ("{b}", "{a}"), "mv": ("{b}", "{a}"), "vm": ("{b}", "{a}"), "mm": ("{b}", "{a}"),
    "transpose": ("1",), "select": ("1",), "slice": ("1",),
}

HINTS = {
    "sqrt": "sqrt is not differentiable at 0 (its slope is infinite): use sqrt(x + 1e-12), or "
            "keep x away from 0",
    "log": "log(x) needs x > 0: clamp x or add a small epsilon, log(x + 1e-12)",
    "log2": "log2(x) needs x > 0: add a small epsilon", "log10": "log10(x) needs x > 0",
    "div": "a division by zero: add an epsilon to the denominator",
    "reciprocal": "a division by zero: add an epsilon to the denominator",
    "pow": "a power with a zero or negative base: keep the base positive",
    "pow_scalar": "a fractional or negative power of zero: keep the base positive",
    "asin": "asin' is infinite at |x| = 1", "acos": "acos' is infinite at |x| = 1",
    "norm": "norm is not differentiable at the zero vector",
    "exp": "exp overflows past about 709: rescale the input (logsumexp is the stable form)",
}


def _short(t: Tensor) -> str:
    text = t.display if not t.weak else fmt.number(t.value.item())
    if text.replace("_", "").isalnum() or text.replace(".", "").replace("-", "").isdigit():
        return text
    return f"({text})"


def local_text(t: Tensor, i: int) -> str:
    """The partial derivative of node ``t`` with respect to its input ``i``, as a formula."""
    op = t.op if not t.op.startswith("stack") else "stack"
    if op == "pow_scalar":
        n = t.kw["exponent"]
        a = _short(t.inputs[0])
        if n == 2:
            return f"2*{a}"
        return f"{fmt.number(n)}*{a}^{fmt.number(n - 1)}"
    if op == "stack":
        return "1"
    names = {"a": _short(t.inputs[0])}
    if len(t.inputs) > 1:
        names["b"] = _short(t.inputs[1])
    elif op in ("rsub",):
        names["b"] = fmt.number(t.kw["other"])
    if op == "rpow_scalar":
        names["base"] = fmt.number(t.kw["base"])
    template = LOCAL.get(op, (f"d/d input {i}",) * (i + 1))
    return template[min(i, len(template) - 1)].format(**names)


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
            steps.append({"node": t.grad_fn.name, "at": t.display, "input": s.display,
                          "local": local_text(t, i), "upstream": g,
                          "gets": unbroadcast(raw, s.value.shape), "summed_axes": summed,
                          "shape": list(s.value.shape)})
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
                    "hint": HINTS.get(op, "check the inputs of this node")}
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
                    "hint": HINTS.get(t.op, "check the inputs of this node")}
    return None
