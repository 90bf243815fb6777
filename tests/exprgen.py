"""Random expression trees for property tests: printed as ddx text, evaluated by a reference."""

from __future__ import annotations

import math

from hypothesis import strategies as st

VARS = ("a", "b", "c")
UNARY = {"sin": math.sin, "cos": math.cos, "tanh": math.tanh, "atan": math.atan,
         "sigmoid": lambda v: 1 / (1 + math.exp(-v)) if v > -700 else 0.0,
         "exp": lambda v: math.exp(v) if v < 700 else math.inf,
         "softplus": lambda v: math.log1p(math.exp(v)) if v <= 20 else v}
BINARY = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}

leaf = st.one_of(st.sampled_from(VARS).map(lambda v: ("var", v)),
                 st.integers(1, 5).map(lambda n: ("num", n)))


def _extend(children):
    return st.one_of(
        st.tuples(st.sampled_from(sorted(BINARY)), children, children),
        st.tuples(st.sampled_from(sorted(UNARY)), children),
        st.tuples(st.just("sq"), children),
        st.tuples(st.just("neg"), children),
    )


exprs = st.recursive(leaf, _extend, max_leaves=12)


def to_text(node, parens: bool) -> str:
    """ddx text; with ``parens`` every operation is parenthesised, otherwise minimally."""
    kind = node[0]
    if kind == "var":
        return node[1]
    if kind == "num":
        return str(node[1])
    if kind in UNARY:
        return f"{kind}({to_text(node[1], parens)})"
    if kind == "sq":
        inner = to_text(node[1], parens)
        simple = node[1][0] in ("var", "num") or node[1][0] in UNARY
        return f"({inner})^2" if parens or not simple else f"{inner}^2"
    if kind == "neg":
        inner = to_text(node[1], parens)
        return f"(-({inner}))" if parens else f"-({inner})"
    left, right = to_text(node[1], parens), to_text(node[2], parens)
    if parens:
        return f"({left} {kind} {right})"
    if node[2][0] in BINARY or kind in ("-", "*"):
        right = f"({right})"
    if kind == "*":
        left = f"({left})"
    return f"{left} {kind} {right}"


def reference(node, env: dict[str, float]) -> float:
    kind = node[0]
    if kind == "var":
        return env[node[1]]
    if kind == "num":
        return float(node[1])
    if kind in UNARY:
        return UNARY[kind](reference(node[1], env))
    if kind == "sq":
        return reference(node[1], env) ** 2
    if kind == "neg":
        return -reference(node[1], env)
    return BINARY[kind](reference(node[1], env), reference(node[2], env))


def torch_eval(node, env, torch):
    kind = node[0]
    if kind == "var":
        return env[node[1]]
    if kind == "num":
        return node[1]
    if kind in UNARY:
        fn = {"sigmoid": torch.sigmoid, "softplus": torch.nn.functional.softplus}.get(
            kind, getattr(torch, kind, None))
        inner = torch_eval(node[1], env, torch)
        if not isinstance(inner, torch.Tensor):  # ddx folds functions of numbers, as math.sin
            return UNARY[kind](float(inner))
        return fn(inner)
    if kind == "sq":
        return torch_eval(node[1], env, torch) ** 2
    if kind == "neg":
        return -torch_eval(node[1], env, torch)
    x, y = torch_eval(node[1], env, torch), torch_eval(node[2], env, torch)
    return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y}[kind]()
