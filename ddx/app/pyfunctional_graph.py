"""torch.autograd.functional with ``create_graph=True``: the function's outputs keep their
graph, and the results are differentiable, with the grad_fn PyTorch's double backward ends in.

- jacobian: as PyTorch builds it, each row a create_graph gradient of one output element
  (pyautograd.fn_grad), then stack and view (ViewBackward0);
- vjp: torch.autograd.grad(outputs, inputs, v, create_graph=True);
- jvp: PyTorch's double-backward trick ends in the backward of the output's own op
  (``x.exp().sum(dim=1)``: SqueezeBackward1); the node's VJP is the mixed second derivative
  through the function's graph (forward over reverse, engine/hessian.py);
- hessian, hvp, vhp: the values as without create_graph, in a node named as PyTorch's; their
  derivative would be a third derivative, which ddx does not compute: a backward through one is
  an error saying so.
A derivative that does not depend on the leaves (the Hessian of ``x * x``, the Jacobian of
``3 * q``) has no grad_fn, as PyTorch's (pydegree.py tells)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.hessian import Dual, gradient_at
from ..errors import DdxRuntimeError
from ..graph import record
from ..graph.tensor import Function, Tensor
from ..graph.values import truth, weak
from ..ops import Op
from . import pyautograd, pydegree, pyfunctional, pymodules
from .pymodules import Native

# the node PyTorch's double backward of an elementwise op ends in, for jvp and vhp
BACKWARD_NODE = {"tanh": "TanhBackwardBackward0", "sigmoid": "SigmoidBackwardBackward0",
                 "relu": "ThresholdBackwardBackward0"}
# jvp: the node the double-backward trick ends in, by the output's own op
JVP_NODE = {"sum": "SumBackward0", "mean": "SumBackward0", "mm": "MmBackward0",
            "matmul": "MmBackward0", "view": "ViewBackward0", "reshape": "ViewBackward0",
            "t": "TBackward0", "transpose": "TransposeBackward0"}


def _constant(t: Tensor) -> Tensor:
    """A derivative that does not depend on the leaves: PyTorch's has no grad_fn."""
    t.requires_grad, t.grad_fn = False, None
    return t


def _leaves(inputs: list) -> list:
    """PyTorch's _grad_preprocess with create_graph: an input that requires grad is used
    itself (its graph reaches the caller's leaves); the others are fresh leaves."""
    return [t if t.requires_grad and t.grad_fn is None else Tensor(np.array(t.value), True,
                                                                 name=t.name) for t in inputs]


def _run(ev, node, fn, inputs: list, what: str) -> tuple[bool, list, list]:
    return pyfunctional.run_on(ev, node, fn, _leaves(inputs), what)


def _grads(ev, node, out: Tensor, leaves: list, v=None) -> list:
    """torch.autograd.grad(out, leaves, v, create_graph=True, allow_unused=True), zeros where
    a leaf is not reached, and no grad_fn where the gradient does not depend on the leaves."""
    if not out.requires_grad:
        return [Tensor(np.zeros_like(t.value)) for t in leaves]
    mono = pydegree.monomials(out, leaves)
    kw = {"create_graph": (True, node.pos), "allow_unused": (True, node.pos),
          "retain_graph": (True, node.pos)}
    if v is not None:
        kw["grad_outputs"] = (v, node.pos)
    got = pyautograd.fn_grad(ev, node, [out, tuple(leaves)], kw)
    return [Tensor(np.zeros_like(t.value)) if g is None else
            g if pydegree.first_depends(mono, k) else _constant(g)
            for k, (g, t) in enumerate(zip(got, leaves))]


def _shape(flag: bool, items: list):
    return tuple(items) if flag else items[0]


def _method(ev, node, t: Tensor, name: str, *args) -> Tensor:
    """t.name(*args) for an op of the table (x.reshape, x.view)."""
    return ev.functions[name](ev, node, [t, *(weak(a) if isinstance(a, int) else a
                                              for a in args)], {})


def jacobian(ev, node, given: dict) -> Any:
    in_tuple, inputs = pyfunctional.as_tuple(given["inputs"], "inputs", "jacobian")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "jacobian")
    rows = []
    for out in outs:
        flat = _method(ev, node, out, "reshape", -1)
        per_leaf: list[list] = [[] for _ in leaves]
        for j in range(out.value.size):
            for k, g in enumerate(_grads(ev, node, ev.op("select", node, [flat], {"key": j}),
                                         leaves)):
                per_leaf[k].append(g)
        jac = []
        for k, t in enumerate(leaves):
            shape = out.value.shape + t.value.shape
            if not per_leaf[k]:
                jac.append(Tensor(np.zeros(shape, dtype=out.value.dtype)))
                continue
            stacked = ev.functions["stack"](ev, node, [per_leaf[k]], {})
            jac.append(_method(ev, node, stacked, "view", *shape))
        rows.append(_shape(in_tuple, jac))
    return _shape(out_tuple, rows)


def vjp(ev, node, given: dict) -> Any:
    in_tuple, inputs = pyfunctional.as_tuple(given["inputs"], "inputs", "vjp")
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, "vjp")
    v = given.get("v")
    if v is None and (len(outs) != 1 or outs[0].value.size != 1):
        raise DdxRuntimeError("The vector v can only be None if the user-provided function "
                              "returns a single Tensor with a single element.")
    if len(outs) != 1:
        raise DdxRuntimeError("ddx's create_graph takes one output tensor")
    vs = None if v is None else pyfunctional.as_tuple(v, "v", "vjp")[1][0]
    return _shape(out_tuple, outs), _shape(in_tuple, _grads(ev, node, outs[0], leaves, vs))


def _node(result: Tensor, leaves: list, name: str, rule) -> Tensor:
    """Give ``result`` a grad_fn ``name`` whose VJP for leaf k is ``rule(k, g)``."""
    def vjp_of(k: int):
        def vjp(g, value, *args, **kw):
            return np.asarray(rule(k, np.asarray(g)), dtype=leaves[k].value.dtype)
        return vjp
    op = Op("create_graph_functional", name, lambda *a: None,
            tuple(vjp_of(k) for k in range(len(leaves))), saves=False, elementwise=False)
    result.requires_grad = True
    result.grad_fn = Function(op, op.grad_fn, tuple(leaves), {}, result)
    return result


def _third(what: str):
    def rule(k, g):
        raise DdxRuntimeError(f"the {what} made with create_graph=True is a second derivative; "
                              "differentiating it again (a third derivative) is not supported "
                              "by ddx")
    return rule


def _jvp_name(out: Tensor) -> str:
    """The last node of PyTorch's double-backward trick: the backward of the output's op."""
    t = out
    while True:
        if t.op in ("add", "sub") and t.inputs:
            grads = [s for s in t.inputs if s.requires_grad]
            if len(grads) == 1:
                t = grads[0]
                continue
            return "AddBackward0"
        if t.op == "mul" and len(t.inputs) == 2 and all(s.requires_grad for s in t.inputs):
            return "AddBackward0"
        break
    if t.op == "sum" and t.kw.get("dim") is not None:
        return "SumBackward1" if t.kw.get("keepdim") else "SqueezeBackward1"
    return JVP_NODE.get(t.op, BACKWARD_NODE.get(t.op, "MulBackward0"))


def _leaf_name(out: Tensor, leaves: list) -> str:
    """vhp's last node: the double backward of the op that reads the leaf."""
    order = record.ancestors(out)
    ids = {id(t) for t in leaves}
    uses = [t for t in order for s in t.inputs if id(s) in ids and t.requires_grad]
    return BACKWARD_NODE.get(uses[0].op, "MulBackward0") if len(uses) == 1 else "MulBackward0"


def _with_graph(what: str, plain):
    """The functional ``what``: PyTorch's create_graph form when asked for, else ``plain``."""
    def call(ev, node, args, kw):
        names = ("func", "inputs", "v")[:3 if what not in ("jacobian", "hessian") else 2]
        given = pyfunctional.parse(kw, what, names, args)
        if not truth(given.get("create_graph") or False) or not record.GRAD_MODE.enabled:
            return plain(ev, node, args, kw)
        if what == "jacobian":
            return jacobian(ev, node, given)
        if what == "vjp":
            return vjp(ev, node, given)
        return _second_order(ev, node, what, given, plain, args, kw)
    return call


def _second_order(ev, node, what: str, given: dict, plain, args, kw):
    """jvp, hessian, hvp, vhp: ``plain``'s values, the outputs with their graph, and the
    results as nodes."""
    in_tuple, inputs = pyfunctional.as_tuple(given["inputs"], "inputs", what)
    out_tuple, outs, leaves = _run(ev, node, given["func"], inputs, what)
    rest = {k: v for k, v in kw.items() if k != "create_graph"}
    got = plain(ev, node, [given["func"], _shape(in_tuple, leaves),
                           *([given["v"]] if "v" in given and len(args) > 2 else [])], rest)
    mono = pydegree.monomials(outs[0], leaves)
    if what == "hessian":
        for i, row in enumerate(got if in_tuple else [got]):
            for j, h in enumerate(row if in_tuple else [row]):
                if pydegree.second_depends(mono, i, j):
                    _node(h, leaves, "ViewBackward0", _third("hessian"))
        return got
    values, results = got
    results_list = list(results) if isinstance(results, tuple) else [results]
    if what == "jvp":
        vs = [np.asarray(t.value) for t in pyfunctional.as_tuple(
            given.get("v", Tensor(np.ones_like(leaves[0].value))), "v", what)[1]]
        for out, r in zip(outs, results_list):
            m = pydegree.monomials(out, leaves)
            if any(pydegree.first_depends(m, k) for k in range(len(leaves))):
                _node(r, leaves, _jvp_name(out), _mixed(out, leaves, vs))
        return _shape(out_tuple, outs), results
    for k, r in enumerate(results_list):
        if any(pydegree.second_depends(mono, j, k) for j in range(len(leaves))):
            terms = sum(pydegree.second_nonzero(mono, j, k) for j in range(len(leaves)))
            name = "AddBackward0" if terms > 1 else \
                _leaf_name(outs[0], leaves) if what == "vhp" else "MulBackward0"
            _node(r, leaves, name, _third(what))
    return outs[0], results


def _mixed(out: Tensor, leaves: list, vs: list):
    """The VJP of jvp's result J v with upstream u at each leaf: sum_k u_k H_k v, the tangent
    of the reverse pass seeded with u, the leaves' tangents v."""
    order = record.ancestors(out)
    named = {str(i): t for i, t in enumerate(leaves)}

    def rule(k, g):
        seeds = {id(t): Dual(t.value, np.asarray(v, dtype=np.float64))
                 for t, v in zip(leaves, vs)}
        with record.fp_guard():
            adj = gradient_at(out, order, named, seeds, np.asarray(g, dtype=out.value.dtype))
        got = adj.get(id(leaves[k]))
        return np.asarray(got.t) if isinstance(got, Dual) else np.zeros_like(leaves[k].value)
    return rule


def register() -> None:
    functional = pymodules.MODULES["torch.autograd.functional"]
    for what, plain in pyfunctional.FUNCTIONAL.items():
        functional.members[what] = Native(what, _with_graph(what, plain))


register()

__all__ = ["jacobian", "vjp"]
