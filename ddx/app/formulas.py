"""The formulas of a derivative request, written out: simplified (SymPy) or as ddx derives
them, shared subexpressions named once, numbers at the point, and the --swell measures."""

from __future__ import annotations

import numpy as np

from ..engine import algebra, symbolic
from ..engine import formula as engine
from ..fmt import jsonable

INLINE_MAX = 20_000  # operations: a formula larger than this as a tree is written shared only


def sympy_ok() -> bool:
    return algebra.available()


def _avoid(trace) -> set[str]:
    return set(trace.evaluator.env) | {"e", "pi"}


def write(syms: list, avoid: set[str], use_sympy: bool, variables=frozenset()) -> dict:
    """Texts for formulas (valid ddx input): ``inline`` (None when too large), ``shared``
    (let-statements and the formulas in their names, or None when nothing is shared),
    ``exprs`` (SymPy's, when used) and how they were simplified."""
    names = frozenset(variables)
    tree = sum(engine.tree_ops(s) for s in syms)
    out: dict = {"tree_ops": tree, "dag_ops": engine.dag_ops(syms), "exprs": None,
                 "simplified": None}
    dag_lets, dag_outs = engine.shared(syms, avoid)
    if use_sympy and tree <= INLINE_MAX:
        try:
            exprs = [algebra.simplify(e) for e in algebra.to_sympy(syms)]
            out["inline"] = [algebra.text(e, names) for e in exprs]
            out["exprs"] = exprs
            out["simplified"] = "sympy"
            out["ops"] = sum(algebra.ops(e) for e in exprs)
            lets, reduced = algebra.cse(exprs, avoid)
            cse_ops = sum(algebra.ops(v) for _, v in lets) + sum(algebra.ops(r) for r in reduced)
            out["cse_ops"] = cse_ops
            if lets and cse_ops < out["ops"] and cse_ops <= out["dag_ops"]:
                out["shared"] = {"let": [[str(k), algebra.text(v, names)] for k, v in lets],
                                 "formulas": [algebra.text(r, names) for r in reduced],
                                 "ops": cse_ops, "by": "cse"}
                return out
        except (symbolic.Unsupported, RecursionError):
            out["exprs"] = None
            out["simplified"] = None
    if out["simplified"] is None:
        out["inline"] = [symbolic.text(s) for s in syms] if tree <= INLINE_MAX else None
        out["ops"] = tree
    if dag_lets and (out["inline"] is None or out["dag_ops"] < out["ops"]):
        out["shared"] = {"let": [list(p) for p in dag_lets], "formulas": dag_outs,
                         "ops": out["dag_ops"], "by": "ddx"}
    else:
        out["shared"] = None
    return out


def program(let: list, body: str) -> str:
    """A let-form as one ddx program: ``t1 = ...; t2 = ...; body``."""
    return "; ".join([f"{k} = {v}" for k, v in let] + [body])


def derive(d, trace, bindings: dict, unbound: dict, want: list, dtype: str, swell: bool) -> dict:
    """The result document of a Derivatives request (see derivative.py)."""
    from .derivative import build

    rw = d.rewrite
    chain = single = d.chain is not None
    if not trace.output.requires_grad:
        grad = None
    else:
        grad = engine.gradient(trace.output, trace.leaves)
    avoid = _avoid(trace)
    conditions: list[str] = list(grad.conditions) if grad is not None else []
    formulas: dict[str, str] = {}
    shared = None
    if chain:
        steps = [v for v, t in d.chain for _ in range(t)]
        text, t = None, trace
        g = grad
        for k, var in enumerate(steps):
            if g is None or var not in g.grads:
                text = "0"
                break
            w = write([g.grads[var]], avoid, d.sympy, set(t.evaluator.env))
            text = w["inline"][0] if w["inline"] is not None else program(
                w["shared"]["let"], w["shared"]["formulas"][0])
            if k + 1 < len(steps):
                t, _ = build(rw, text, {**bindings, **unbound}, dtype=dtype)
                g = engine.gradient(t.output, t.leaves) if t.output.requires_grad else None
                if g is not None:
                    conditions += [c for c in g.conditions if c not in conditions]
        formulas[",".join(steps)] = text
        keys = {",".join(steps): text}
    else:
        names = list(d.wanted)
        syms = [grad.grads[v] if grad is not None and v in grad.grads else
                symbolic.number(0.0) for v in names]
        w = write(syms, avoid, d.sympy, set(trace.evaluator.env))
        for k, v in enumerate(names):
            formulas[v] = w["inline"][k] if w["inline"] is not None else program(
                w["shared"]["let"], w["shared"]["formulas"][k])
        if w["shared"] is not None:
            shared = {"let": w["shared"]["let"],
                      "formulas": dict(zip(names, w["shared"]["formulas"])),
                      "by": w["shared"]["by"]}
        keys = formulas
    result = {"expression": rw.text.strip(), "output": trace.output_name,
              "variables": d.variables, "unbound": list(unbound), "formulas": formulas,
              "conditions": conditions, "simplified": "sympy" if d.sympy else None,
              "single": single}
    if unbound:
        result["point"] = dict(unbound)
    greek = _greek(rw.source)
    if greek:
        result["names"] = greek  # how the user wrote them: the terminal view shows them so
    if shared is not None:
        result["shared"] = shared
    if not unbound:
        result["values"] = _values(keys, bindings, dtype)
        if not chain and grad is not None:
            trace.backward()
            result["gradients"] = {v: jsonable(trace.grads.get(v)) for v in keys}
            result["agrees"] = all(np.allclose(np.asarray(result["values"][v], dtype=float),
                                               np.asarray(trace.grads[v], dtype=float),
                                               rtol=1e-6, atol=1e-9, equal_nan=True)
                                   for v in keys if trace.grads.get(v) is not None
                                   and not isinstance(result["values"][v], str))
    if swell and grad is not None:
        every = not chain and names == list(grad.grads)
        result["swell"] = measure(trace, grad, avoid, d.sympy, w if every else None)
    return result


def _greek(source: str) -> dict[str, str]:
    """The Greek names the user typed, by their ddx spelling (theta -> θ), where that
    spelling is not also a name of its own in the text."""
    if source.isascii():
        return {}
    from ..lang.calculator import GREEK, ascii_name, tokens

    toks = [t for k, t, _, _ in tokens(source) if k in ("name", "fn")]
    greek = {ascii_name(t): t for t in toks if t[0] in GREEK and t != "π"}
    return {a: g for a, g in greek.items() if a not in toks}


def _values(formulas: dict, bindings: dict, dtype: str) -> dict:
    from .api import Trace

    out = {}
    for key, text in formulas.items():
        t = Trace(text, bindings, dtype=dtype)
        out[key] = jsonable(np.asarray(t.value))
    return out


def measure(trace, grad, avoid: set[str], use_sympy: bool, w: dict | None = None) -> dict:
    """--swell: sizes (SymPy's count_ops) of the derivative written several ways."""
    syms = list(grad.grads.values())
    if w is None:
        w = write(syms, avoid, use_sympy, set(trace.evaluator.env))
    simplified = w["ops"] if w["inline"] is not None and w["simplified"] else None
    rows = {"naive": w["tree_ops"], "simplified": simplified,
            "shared_ddx": w["dag_ops"], "shared_cse": w.get("cse_ops")}
    rows["shared"] = min(v for v in (rows["shared_ddx"], rows["shared_cse"]) if v is not None)
    rows["ad"] = grad.forward_ops + grad.vjps
    rows["ad_forward"], rows["ad_vjps"] = grad.forward_ops, grad.vjps
    rows["sympy_diff"] = rows["sympy_cse"] = None
    if use_sympy and engine.tree_ops(grad.output) <= INLINE_MAX // 4:
        sp = algebra.sympy_module()
        (f,) = algebra.to_sympy([grad.output])
        env = {str(s): s for s in f.free_symbols}
        diffs = [sp.diff(f, env[v]) if v in env else sp.Integer(0) for v in grad.grads]
        rows["sympy_diff"] = sum(algebra.ops(e) for e in diffs)
        lets, reduced = algebra.cse(diffs, avoid)
        rows["sympy_cse"] = sum(algebra.ops(v) for _, v in lets) + \
            sum(algebra.ops(r) for r in reduced)
    return rows
