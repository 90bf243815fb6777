"""torch.autograd.functional in the REPL's Python: jacobian (reverse mode, a pass per output
element), jvp (forward mode, engine/forward.py), vjp, and hessian/hvp/vhp (forward over
reverse, engine/hessian.py), on the user's own functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import reverse
from ..engine.forward import jvp_pass
from ..engine.hessian import Dual, gradient_at
from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from . import pycalls
from .pyerrors import PyException
from .pytwice import check_rows
from .values import python_truth

OPTIONS = ("create_graph", "strict", "vectorize", "strategy", "outer_jacobian_strategy", "v")


def _parse(kw: dict, what: str, names: tuple, args: list) -> dict:
    given = dict(zip(names, args))
    for name, (value, _) in kw.items():
        if name not in names and name not in OPTIONS:
            raise DdxTypeError(f"{what}() got an unexpected keyword argument '{name}'")
        given[name] = value
    for name in names[:2]:
        if name not in given:
            raise DdxTypeError(f"{what}() missing 1 required positional argument: '{name}'")
    return given


def _as_tuple(value: Any, arg: str, what: str) -> tuple[bool, list]:
    is_tuple = isinstance(value, (tuple, list))
    items = list(value) if is_tuple else [value]
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            kind = "weak" if t is None else type(t).__name__
            raise DdxTypeError(f"The {arg} given to {what} must be either a Tensor or a tuple "
                               f"of Tensors but the value at index {i} has type {kind}.")
    return is_tuple, items


def _run(ev, node, fn, inputs: list, what: str) -> tuple[bool, list, list]:
    """Fresh leaves that require grad (PyTorch's inputs are detached too), the function run on
    them with grad enabled, and its outputs."""
    return run_on(ev, node, fn, [Tensor(np.array(t.value), True, name=t.name) for t in inputs],
                  what)


def run_on(ev, node, fn, leaves: list, what: str) -> tuple[bool, list, list]:
    """The function run on ``leaves`` with grad enabled: (a tuple?, its outputs, leaves)."""
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = True
    try:
        out = pycalls.call_value(ev, node, fn, leaves, {})
    finally:
        record.GRAD_MODE.enabled = before
    is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", what)
    return is_tuple, outs, leaves


def _shape(flag: bool, items: list):
    return tuple(items) if flag else items[0]


def _vjp_rows(out: Tensor, leaves: list) -> list[np.ndarray]:
    """d out / d leaf for each leaf, by reverse mode (one pass per element of ``out``)."""
    jac = [np.zeros(out.value.shape + t.value.shape, dtype=out.value.dtype) for t in leaves]
    if not out.requires_grad:
        return jac
    with record.fp_guard():
        for i in range(out.value.size):
            g0 = np.zeros(out.value.shape, dtype=out.value.dtype)
            g0.reshape(-1)[i] = 1
            got = reverse.vjp(out, g0)
            for j, t in enumerate(leaves):
                if id(t) in got:
                    jac[j].reshape((out.value.size,) + t.value.shape)[i] = got[id(t)]
    return jac


def _jvp_columns(out: Tensor, leaves: list) -> list[np.ndarray]:
    """d out / d leaf for each leaf, by forward mode (one pass per element of each leaf):
    strategy="forward-mode", whose entries PyTorch makes column by column."""
    jac = [np.zeros(out.value.shape + t.value.shape, dtype=out.value.dtype) for t in leaves]
    order = record.ancestors(out)
    check_rows(order, "forward mode (jacobian)")
    with record.fp_guard():
        for j, t in enumerate(leaves):
            for k in range(t.value.size):
                seed = np.zeros(t.value.shape, dtype=t.value.dtype)
                seed.reshape(-1)[k] = 1
                tangents, _ = jvp_pass(order, {id(t): seed})
                got = tangents.get(id(out))
                if got is not None:
                    jac[j].reshape(out.value.size, t.value.size)[:, k] = \
                        np.asarray(got).reshape(-1)
    return jac


def _strategy(given: dict, key: str) -> bool:
    """Whether ``key`` asks for forward mode, checked as PyTorch checks it."""
    strategy = given.get(key, "reverse-mode")
    if strategy not in ("forward-mode", "reverse-mode"):
        raise PyException.error(
            "AssertionError", 'Expected strategy to be either "forward-mode" or "reverse-mode". '
            "Hint: If your function has more outputs than inputs, \"forward-mode\" tends to be "
            'more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not python_truth(given.get("vectorize", False)):
        raise PyException.error(
            "NotImplementedError", "Computing Jacobian using forward-AD or forward-over-reverse "
            "Hessian isonly implemented for `vectorize=True`.")  # (sic)
    return strategy == "forward-mode"


def fn_jacobian(ev, node, args, kw):
    given = _parse(kw, "jacobian", ("func", "inputs"), args)
    forward = _strategy(given, "strategy")
    in_tuple, inputs = _as_tuple(given["inputs"], "inputs", "jacobian")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "jacobian")
    rows = []
    for out in outs:
        got = _jvp_columns(out, leaves) if forward and out.requires_grad else \
            _vjp_rows(out, leaves)
        rows.append(_shape(in_tuple, [Tensor(j) for j in got]))
    return _shape(out_tuple, rows)


def _scalar_output(outs: list, out_tuple: bool, what: str) -> Tensor:
    if out_tuple or len(outs) != 1:
        raise DdxRuntimeError(f"The function given to {what} should return a single Tensor")
    if outs[0].value.size != 1:
        raise DdxRuntimeError(f"The Tensor returned by the function given to {what} should "
                              "contain a single element")
    return outs[0]


def _second(out: Tensor, leaves: list, seeds: dict) -> list:
    """The tangents of d out/d leaf for tangent ``seeds`` on the leaves (forward over
    reverse): one column of the Hessian per unit seed, or H v."""
    order = record.ancestors(out)
    named = {str(i): t for i, t in enumerate(leaves)}
    g0 = np.ones(out.value.shape, dtype=out.value.dtype)
    overrides = {id(t): Dual(t.value, s) for t, s in seeds.items()}
    check_rows(order, "a second derivative")
    with record.fp_guard():
        adj = gradient_at(out, order, named, overrides, g0)
    return [np.asarray(adj[id(t)].t) if isinstance(adj.get(id(t)), Dual)
            else np.zeros(t.value.shape) for t in leaves]


def fn_hessian(ev, node, args, kw):
    given = _parse(kw, "hessian", ("func", "inputs"), args)
    in_tuple, inputs = _as_tuple(given["inputs"], "inputs", "hessian")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "hessian")
    out = _scalar_output(outs, out_tuple, "hessian")
    dtype = out.value.dtype
    H = [[np.zeros(a.value.shape + b.value.shape, dtype=dtype) for b in leaves] for a in leaves]
    # PyTorch's default is reverse over reverse: row r of H[i][j] is the vjp of unit r of the
    # gradient for input i; ddx's forward over reverse gives H[.][i] times a unit seed on
    # input i, whose entries (symmetry) are that row, each made as PyTorch makes it (the signs
    # of zeros say so); outer_jacobian_strategy="forward-mode" fills columns
    by_rows = not _strategy(given, "outer_jacobian_strategy")
    if out.requires_grad:
        for i, a in enumerate(leaves):
            for r in range(a.value.size):
                seed = np.zeros(a.value.shape)
                seed.reshape(-1)[r] = 1.0
                got = _second(out, leaves, {a: seed})
                for j, b in enumerate(leaves):
                    if by_rows:
                        H[i][j].reshape(a.value.size, b.value.size)[r, :] = got[j].reshape(-1)
                    else:
                        H[j][i].reshape(b.value.size, a.value.size)[:, r] = got[j].reshape(-1)
    rows = [_shape(in_tuple, [Tensor(h) for h in row]) for row in H]
    return _shape(in_tuple, rows)


def _vectors(v: Any, like: list, arg: str, what: str) -> list:
    _, vs = _as_tuple(v, arg, what)
    if len(vs) != len(like):
        raise DdxRuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got "
                              f"{len(vs)}.")
    for a, b in zip(vs, like):
        if a.value.shape != b.value.shape:
            raise DdxRuntimeError("Mismatch in shape: the v given does not match the shape "
                                  f"of the {arg}")
    return [np.asarray(a.value) for a in vs]


def fn_vjp(ev, node, args, kw):
    given = _parse(kw, "vjp", ("func", "inputs", "v"), args)
    in_tuple, inputs = _as_tuple(given["inputs"], "inputs", "vjp")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "vjp")
    v = given.get("v")
    if v is None:
        if len(outs) != 1 or outs[0].value.size != 1:
            raise DdxRuntimeError("The vector v can only be None if the user-provided function "
                                  "returns a single Tensor with a single element.")
        vs = [np.ones_like(outs[0].value)]
    else:
        vs = _vectors(v, outs, "outputs", "vjp")
    total = [np.zeros_like(t.value) for t in leaves]
    with record.fp_guard():
        for out, g0 in zip(outs, vs):
            if not out.requires_grad:
                continue
            got = reverse.vjp(out, np.asarray(g0, dtype=out.value.dtype))
            for j, t in enumerate(leaves):
                if id(t) in got:
                    total[j] = total[j] + got[id(t)]
    values = _shape(out_tuple, [Tensor(np.array(o.value)) for o in outs])
    return values, _shape(in_tuple, [Tensor(np.asarray(g, dtype=t.value.dtype))
                                     for g, t in zip(total, leaves)])


def fn_jvp(ev, node, args, kw):
    given = _parse(kw, "jvp", ("func", "inputs", "v"), args)
    in_tuple, inputs = _as_tuple(given["inputs"], "inputs", "jvp")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "jvp")
    v = given.get("v")
    if v is None:
        if len(leaves) != 1 or leaves[0].value.size != 1:
            raise DdxRuntimeError("The vector v can only be None if the input to the "
                                  "user-provided function is a single Tensor with a single "
                                  "element.")
        vs = [np.ones_like(leaves[0].value)]
    else:
        vs = _vectors(v, leaves, "inputs", "jvp")
    result = []
    with record.fp_guard():
        for out in outs:
            check_rows(record.ancestors(out), "forward mode (jvp)")
            tangents, _ = jvp_pass(record.ancestors(out),
                                   {id(t): np.asarray(s, dtype=t.value.dtype)
                                    for t, s in zip(leaves, vs)})
            t_out = tangents.get(id(out))
            result.append(Tensor(np.zeros_like(out.value) if t_out is None
                                 else np.array(t_out, dtype=out.value.dtype)))
    values = _shape(out_tuple, [Tensor(np.array(o.value)) for o in outs])
    return values, _shape(out_tuple, result)


def _hvp(what: str):
    def call(ev, node, args, kw):
        given = _parse(kw, what, ("func", "inputs", "v"), args)
        in_tuple, inputs = _as_tuple(given["inputs"], "inputs", what)
        out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, what)
        out = _scalar_output(outs, out_tuple, what)
        v = given.get("v")
        if v is None:
            if len(leaves) != 1 or leaves[0].value.size != 1:
                raise DdxRuntimeError("The vector v can only be None if the input to the "
                                      "user-provided function is a single Tensor with a "
                                      "single element.")
            vs = [np.ones(leaves[0].value.shape)]
        else:
            vs = _vectors(v, leaves, "inputs", what)
        cols = _second(out, leaves, dict(zip(leaves, vs))) if out.requires_grad else \
            [np.zeros(t.value.shape) for t in leaves]
        return Tensor(np.array(out.value)), _shape(in_tuple, [
            Tensor(np.asarray(c, dtype=t.value.dtype)) for c, t in zip(cols, leaves)])
    return call


FUNCTIONAL = {"jacobian": fn_jacobian, "hessian": fn_hessian, "vjp": fn_vjp, "jvp": fn_jvp,
              "hvp": _hvp("hvp"), "vhp": _hvp("vhp")}

parse, as_tuple = _parse, _as_tuple  # (pyfunctional_graph's create_graph forms use them)

__all__ = ["FUNCTIONAL", "as_tuple", "parse"]
