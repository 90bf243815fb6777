"""torch.autograd.grad and torch.autograd.backward in the REPL's Python, with PyTorch's errors.

With ``create_graph=True`` a returned gradient is itself differentiable: its grad_fn is a node
whose VJP with upstream ``u`` is the Hessian-vector product, computed from the original graph
by forward over reverse (dual numbers through the op table's VJP rules, engine/hessian.py).
There is no second derivative table. The mixed partials are symmetric, so seeding the tangent
``u`` at the differentiated leaves gives, in one pass, the VJP for every leaf of the graph."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..engine import reverse
from ..engine.hessian import Dual, gradient_at
from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Function, Tensor
from ..graph.values import truth
from ..ops import OPS, Op
from . import pyhooks
from .methods import kw_arg, m_backward
from .pycustom_twice import OWNERS
from .pymodules import Native
from .pytwice import check_rows

# ops whose VJP for an input that requires grad does not read a value that requires grad:
# a graph made only of these has a constant gradient (PyTorch's has no grad_fn then)
LINEAR = frozenset((
    "add", "sub", "rsub", "neg", "sum", "mean", "reshape", "view", "transpose", "permute",
    "expand", "select", "index", "getitem", "cat", "stack", "squeeze", "unsqueeze", "flatten",
    "clone", "contiguous", "broadcast_to", "t", "movedim", "flip", "roll", "narrow", "split",
    "chunk", "repeat", "tile", "cumsum", "diag", "trace", "tril", "triu"))
BILINEAR = frozenset(("mul", "matmul", "mm", "mv", "dot", "outer", "linear", "bmm", "div",
                      "einsum"))
# the node PyTorch's double backward ends in for a gradient reaching a leaf through one op
BACKWARD_NODE = {"tanh": "TanhBackwardBackward0", "sigmoid": "SigmoidBackwardBackward0",
                 "log": "DivBackward0", "reciprocal": "MulBackward0"}


def tensors_of(value: Any, what: str) -> list:
    """A tensor, or a tuple/list of them, as a list."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        items = list(value)
        for item in items:
            if not isinstance(item, Tensor) and item is not None:
                raise DdxTypeError(f"{what} must be a Tensor or a sequence of Tensors")
        return items
    raise DdxTypeError(f"{what} must be a Tensor or a sequence of Tensors")


def _flag(kw: dict, name: str, default):
    value = kw_arg(kw, name, default)
    return default if value is None else truth(value)


GRAD_KW = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs",
           "allow_unused", "is_grads_batched", "materialize_grads")


def fn_grad(ev, node, args, kw) -> tuple:
    """torch.autograd.grad(outputs, inputs, grad_outputs=None, retain_graph=None,
    create_graph=False, allow_unused=None, materialize_grads=False)."""
    for name in kw:
        if name not in GRAD_KW:
            raise DdxTypeError(f"grad() got an unexpected keyword argument '{name}'")
    names = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph")
    given = dict(zip(names, args))
    for name in names:
        if name in kw:
            given[name] = kw[name][0]
    if "outputs" not in given or "inputs" not in given:
        missing = "outputs" if "outputs" not in given else "inputs"
        raise DdxTypeError(f"grad() missing 1 required positional argument: '{missing}'")
    outputs = tensors_of(given["outputs"], "outputs")
    inputs = tensors_of(given["inputs"], "inputs")
    create = truth(given.get("create_graph") or False)
    retain = given.get("retain_graph")
    retain = create if retain is None else truth(retain)
    materialize = _flag(kw, "materialize_grads", False)
    allow_unused = _flag(kw, "allow_unused", None)
    if allow_unused is None:
        allow_unused = materialize
    elif materialize and not allow_unused:
        raise DdxRuntimeError("Expected allow_unused to be True or not passed when "
                              "materialize_grads=True")
    gos = given.get("grad_outputs")
    gos = [None] * len(outputs) if gos is None else tensors_of(gos, "grad_outputs")
    if len(gos) != len(outputs):
        raise DdxRuntimeError(f"grad requires one grad_output per output: got "
                              f"{len(gos)} grad_outputs and {len(outputs)} outputs")
    for t in inputs:
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise DdxRuntimeError("One of the differentiated Tensors does not require grad")
    with pyhooks.running(ev):
        if _flag(kw, "is_grads_batched", False):
            if create:
                raise DdxRuntimeError("ddx's is_grads_batched=True does not take "
                                      "create_graph=True")
            grads = _batched(ev, outputs, inputs, gos, retain)
        else:
            grads = gradients(ev, outputs, inputs, gos, retain)
    result = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if not allow_unused:
                raise DdxRuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor(np.zeros_like(t.value)) if materialize else None)
            continue
        out = Tensor(g)
        out.label = f"grad({t.display})"
        if create and record.GRAD_MODE.enabled:
            differentiable(out, outputs, gos, inputs, t)
        result.append(out)
    return tuple(result)


def _batched(ev, outputs: list, inputs: list, gos: list, retain: bool) -> list:
    """grad(..., is_grads_batched=True): each grad_output's first dim is a batch of seeds;
    the gradients for each, stacked (PyTorch vmaps the backward over that dim)."""
    if any(go is None for go in gos):
        raise DdxRuntimeError("is_grads_batched=True needs grad_outputs, one batch of "
                              "gradients per output")
    sizes = {go.value.shape[0] if go.value.ndim else None for go in gos}
    if len(sizes) != 1 or None in sizes:
        raise DdxRuntimeError("If `is_grads_batched=True`, we interpret the first dimension "
                              "of each grad_output as the batch dimension. The sizes of the "
                              "first dimensions of every grad_output must match.")
    rows = []
    n = sizes.pop()
    for b in range(n):
        seeds = [Tensor(np.ascontiguousarray(go.value[b])) for go in gos]
        rows.append(gradients(ev, outputs, inputs, seeds, retain or b < n - 1))
    if not rows:  # (a batch of none)
        return [np.zeros((0,) + t.value.shape, t.value.dtype) for t in inputs]
    return [None if any(r[i] is None for r in rows) else np.stack([r[i] for r in rows])
            for i in range(len(inputs))]


def gradients(ev, outputs: list, inputs: list, gos: list, retain: bool) -> list:
    """The gradients of sum(<go, output>) at each input (None where it is not reached)."""
    want = {id(t): i for i, t in enumerate(inputs)}
    found: list = [None] * len(inputs)

    def add(i: int, g) -> None:
        g = np.asarray(g, dtype=inputs[i].value.dtype)
        found[i] = g if found[i] is None else found[i] + g

    def sink(t: Tensor, g) -> None:
        if id(t) in want:
            add(want[id(t)], g)

    roots = []
    for k, (out, go) in enumerate(zip(outputs, gos)):
        if not isinstance(out, Tensor) or not out.requires_grad:
            raise DdxRuntimeError(f"element {k} of tensors does not require grad and does not "
                                  "have a grad_fn")
        roots.append((out, reverse.initial_grad(out, None if go is None else go.value)))
    freed = []
    with record.fp_guard():
        for out, g0 in roots:
            seen: dict = {}
            reverse.propagate(out, g0, sink, retain_graph=True, record=seen,
                              retain_grads=False)
            for t in inputs:  # a non-leaf input: the gradient arriving at its node
                if t.grad_fn is not None and t.grad_fn in seen and id(t) in want:
                    add(want[id(t)], seen[t.grad_fn])
            freed.extend(seen)
    if not retain:
        for fn in freed:
            if ev.journal is not None:
                ev.journal.keep(fn, "freed")
            fn.freed = True
    ev.warnings.extend(msg for _, msg in record.WARNINGS)
    record.WARNINGS.clear()
    return found


# --- create_graph: gradients that can be differentiated again ------------------------------
def _graph_leaves(order: list) -> list:
    leaves = []
    for t in order:
        if not t.inputs and t.requires_grad:
            if t.grad_fn is not None:
                raise DdxRuntimeError(
                    "ddx differentiates a create_graph gradient once: a third derivative "
                    "(create_graph through a gradient made with create_graph) is not supported")
            leaves.append(t)
    return leaves


def _is_linear(order: list) -> bool:
    for t in order:
        if not t.inputs or not t.requires_grad:
            continue
        if t.op in LINEAR:
            continue
        grads = [s for s in t.inputs if s.requires_grad]
        if t.op in BILINEAR and len(grads) == 1 and (t.op != "div" or grads[0] is t.inputs[0]):
            continue
        return False
    return True


def _node_name(order: list, x: Tensor) -> str | None:
    """The grad_fn PyTorch's create_graph gradient at x shows: the one use's backward op, or
    where that use broadcast x, the sum_to that brings the gradient back to x's shape (sum()
    to a 0-d x, a kept-dims sum, that sum then viewed where x has fewer dims)."""
    uses = [(t, s) for t in order for s in t.inputs if s is x and t.requires_grad]
    if len(uses) != 1:
        return "AddBackward0"
    use = uses[0][0]
    twice = OWNERS.get(use.grad_fn) if use.grad_fn is not None else None
    if twice is not None:  # (a custom Function: what its backward records, or None)
        return twice.grad_name(use.inputs.index(x))
    shape, wide = x.value.shape, use.value.shape
    if shape != wide and use.op in OPS:
        return "SumBackward0" if not shape else "ViewBackward0" if len(wide) > len(shape) \
            else "SumBackward1"
    return BACKWARD_NODE.get(use.op, "MulBackward0")


def differentiable(out: Tensor, outputs: list, gos: list, inputs: list, x: Tensor) -> None:
    """Give the gradient ``out`` (of outputs[0] at ``x``) a grad_fn whose VJP is the
    Hessian-vector product through the original graph."""
    if len(outputs) != 1:
        raise DdxRuntimeError("ddx's create_graph takes one output tensor")
    y = outputs[0]
    order = record.ancestors(y)
    # (a non-leaf x is an input of the gradient's node too: its VJP there goes on through
    # x's own graph; the other inputs' VJPs count the paths that do not pass through x)
    leaves = _graph_leaves(order) + ([x] if x.grad_fn is not None else [])
    if _is_linear(order):
        return  # a constant gradient: PyTorch's requires no grad either
    g0 = np.ones_like(y.value) if gos[0] is None else np.asarray(gos[0].value)
    memo: dict = {}

    def hvp(u) -> dict:
        key = id(u)
        if key not in memo:
            memo.clear()
            seed = {id(x): Dual(x.value, np.asarray(u, dtype=np.float64))}
            named = {str(i): t for i, t in enumerate(leaves)}
            check_rows(order, "a second derivative")
            adj = gradient_at(y, order, named, seed, g0)
            memo[key] = (u, adj)
        return memo[key][1]

    def rule(leaf: Tensor):
        def vjp(g, value, *args, **kw):
            got = hvp(g).get(id(leaf))
            if not isinstance(got, Dual):
                return np.zeros_like(leaf.value)
            return np.asarray(got.t, dtype=leaf.value.dtype)
        return vjp

    name = _node_name(order, x)
    if name is None:
        return  # (PyTorch's gradient has no graph: a custom backward of values kept on ctx)
    op = Op("create_graph_gradient", name, lambda *a: None,
            tuple(rule(t) for t in leaves), saves=False, elementwise=False)
    out.requires_grad = True
    out.grad_fn = Function(op, op.grad_fn, tuple(leaves), {}, out)


# --- torch.autograd.backward ---------------------------------------------------------------
def fn_backward(ev, node, args, kw) -> None:
    """torch.autograd.backward(tensors, grad_tensors=None, retain_graph=None, ...)."""
    for name in kw:
        if name not in ("tensors", "grad_tensors", "retain_graph", "create_graph", "inputs"):
            raise DdxTypeError(f"backward() got an unexpected keyword argument '{name}'")
    if not args and "tensors" not in kw:
        raise DdxTypeError("backward() missing 1 required positional argument: 'tensors'")
    names = ("tensors", "grad_tensors", "retain_graph", "create_graph")
    given = dict(zip(names, args))
    given.update({k: v[0] for k, v in kw.items()})
    tensors = tensors_of(given.get("tensors"), "tensors")
    gts = given.get("grad_tensors")
    gts = [None] * len(tensors) if gts is None else tensors_of(gts, "grad_tensors")
    retain = given.get("retain_graph")
    retain = truth(given.get("create_graph") or False) if retain is None else truth(retain)
    for k, (t, g) in enumerate(zip(tensors, gts)):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise DdxRuntimeError(f"element {k} of tensors does not require grad and does "
                                  "not have a grad_fn")
        last = k == len(tensors) - 1
        more = {"inputs": kw["inputs"]} if "inputs" in kw else {}
        with pyhooks.running(ev):
            m_backward(ev, node, t, [] if g is None else [g],
                       {"retain_graph": (retain or not last, node.pos), **more})
    return None


# --- loss.backward(create_graph=True): a differentiable .grad ---------------------------------
GRAD_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # leaf -> its .grad tensor


CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to "
    "reset the .grad fields of your parameters to None after use to break the cycle and avoid "
    "the leak.")


WARNED: list = []


def grad_tensor(t: Tensor) -> Tensor | None:
    """The differentiable tensor backward(create_graph=True) left in ``t.grad``, while it is
    still what ``t.grad`` holds (None otherwise)."""
    got = GRAD_GRAPHS.get(t)
    if got is not None and got.value is not t.grad:  # .grad was replaced: let the graph go
        del GRAD_GRAPHS[t]
        return None
    return got


def _backward_create_graph(method):
    def run(ev, node, t, args, kw):
        flag = kw.get("create_graph")
        if flag is None or not truth(flag[0]) or not record.GRAD_MODE.enabled or \
                not isinstance(t, Tensor) or not t.requires_grad:
            return method(ev, node, t, args, kw)
        leaves = [s for s in record.ancestors(t) if s.grad_fn is None and s.requires_grad]
        fresh = [s for s in leaves if s.grad is None]
        # a plain .grad already there: PyTorch's AccumulateGrad adds (old + new: AddBackward0)
        added = [s for s in leaves if s.grad is not None and grad_tensor(s) is None]
        if "retain_graph" not in kw:  # create_graph keeps the graph, as PyTorch's does
            kw = {**kw, "retain_graph": (True, node.pos)}
        result = method(ev, node, t, args, kw)
        gradient = args[0] if args else kw["gradient"][0] if "gradient" in kw else None
        for leaf in fresh + added:
            if leaf.grad is None:
                continue
            out = Tensor(leaf.grad)
            out.label = f"{leaf.display}.grad"
            differentiable(out, [t], [gradient], leaves, leaf)
            if out.grad_fn is not None:  # (a rolled-back statement restores .grad: no match)
                # (AccumulateGrad's copy of a fresh grad, or its sum with the one there)
                first = any(leaf is s for s in fresh)
                out.grad_fn.name = "CopyBackwards" if first else "AddBackward0"
                GRAD_GRAPHS[leaf] = out
        if not WARNED:  # a UserWarning: Python shows it once
            WARNED.append(True)
            ev.warnings.append(CREATE_GRAPH_WARNING)
        return result
    return run


def register() -> None:
    """torch.autograd.grad/backward and torch.autograd.functional, as the REPL imports them."""
    from . import pyfunctional, pymodules
    from .methods import TENSOR_METHODS

    TENSOR_METHODS["backward"] = _backward_create_graph(TENSOR_METHODS["backward"])

    members = {"grad": Native("grad", fn_grad), "backward": Native("backward", fn_backward)}
    functional = pymodules.PyModule("torch.autograd.functional", {
        name: Native(name, fn) for name, fn in pyfunctional.FUNCTIONAL.items()})
    pymodules.EXTRA["torch.autograd"].update(members, functional=functional)
    pymodules.MODULES["torch.autograd.functional"] = functional


register()

__all__ = ["fn_backward", "fn_grad", "gradients", "tensors_of"]
