"""The REPL's tensor methods (x.backward(), x.item(), x.size(), ...) and their argument checks."""

from __future__ import annotations

import numpy as np

from ..engine import reverse
from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError
from ..graph import calls_create, create_dropout, record
from ..graph.args import check_arity
from ..graph.program import Evaluator
from ..graph.tensor import Tensor, changed_in_place
from ..graph.values import truth, type_name
from ..lang.tree import Ast
from .pynumpy import NumpyArray
from .pyvalues import type_label
from .values import NOTHING, PyNumber, Size


def kw_arg(kw: dict, name: str, default=None):
    return kw[name][0] if name in kw else default


def check_kw(node: Ast, kw: dict, allowed: tuple) -> None:
    for name, (_, pos) in kw.items():
        if name not in allowed:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{name}'",
                               start=pos, end=pos + len(name))



def detach(ev: Evaluator, node: Ast, t: Tensor) -> Tensor:
    out = Tensor(t.value)
    out.label = ev.label(node)
    ev.nodes.append(out)
    return out


def m_backward(ev, node, t, args, kw):
    check_kw(node, kw, ("gradient", "retain_graph", "create_graph", "inputs"))
    gradient = args[0] if args else kw_arg(kw, "gradient")
    retain = kw_arg(kw, "retain_graph", None)
    retain = truth(retain) if retain is not None else False
    if gradient is not None and not isinstance(gradient, Tensor):
        raise DdxTypeError(f"gradient must be a tensor, got {type_name(gradient)}")
    g = None if gradient is None else gradient.value
    inputs = backward_inputs(kw_arg(kw, "inputs"))
    if ev.journal is not None:
        _journal_backward(ev.journal, t)
        for s in inputs or ():
            ev.journal.keep(s, "retains_grad")
    try:
        with record.fp_guard():
            reverse.backward(t, g, retain_graph=retain, inputs=inputs)
    except DdxRuntimeError as exc:
        if exc.message.startswith("grad can be implicitly"):
            exc.hint = f"pass gradient=ones_like({t.display}) to weight the outputs"
        raise
    ev.warnings.extend(msg for _, msg in record.WARNINGS)
    record.WARNINGS.clear()
    return NOTHING


def backward_inputs(value) -> list[Tensor] | None:
    """backward()'s ``inputs=``: a tensor or a non-empty sequence of them (None: not given)."""
    if value is None:
        return None
    items = [value] if isinstance(value, Tensor) else list(value) \
        if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise DdxRuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for item in items:
        if not isinstance(item, Tensor) or item.weak:
            raise DdxRuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                                  f"{type_label(item)}")
    return items


def _journal_backward(journal, root: Tensor) -> None:
    """What backward() through ``root`` may change: the .grad of every leaf and retaining node
    it reaches, and the freed flag of every Function (as much work as the pass itself)."""
    for t in record.ancestors(root):
        if t.requires_grad and (t.grad_fn is None or t.retains_grad):
            journal.keep(t, "grad")
        if t.grad_fn is not None:
            journal.keep(t.grad_fn, "freed")


def m_retain_grad(ev, node, t, args, kw):
    check_arity(node, args, 0, kw)
    if ev.journal is not None:
        ev.journal.keep(t, "retains_grad")
    t.retain_grad()
    return NOTHING


def m_requires_grad_(ev, node, t, args, kw):
    check_kw(node, kw, ("requires_grad",))
    flag = truth(args[0]) if args else truth(kw_arg(kw, "requires_grad", True))
    if ev.journal is not None:
        ev.journal.keep(t, "requires_grad")
    t.set_requires_grad(flag, via="method")
    return t


def m_detach(ev, node, t, args, kw):
    check_arity(node, args, 0, kw)
    return detach(ev, node, t)


def m_item(ev, node, t, args, kw):
    check_arity(node, args, 0, kw)
    v = t.item()
    return PyNumber(v)


def check_in_place(t: Tensor) -> None:
    """PyTorch's refusals of an in-place change in grad mode: of a leaf that requires grad,
    and of a view of one (x[0].zero_(), x.view(6).zero_(): they share its memory)."""
    if not (t.requires_grad and record.GRAD_MODE.enabled):
        return
    if t.is_leaf:
        raise DdxRuntimeError("a leaf Variable that requires grad is being used in an in-place "
                              "operation.")
    if t.value.base is not None:
        for s in record.ancestors(t):
            if s.is_leaf and s.requires_grad and np.shares_memory(s.value, t.value):
                raise DdxRuntimeError("a view of a leaf Variable that requires grad is being "
                                      "used in an in-place operation.")


def m_zero_(ev, node, t, args, kw):
    check_arity(node, args, 0, kw)
    check_in_place(t)
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    t.value[...] = 0
    changed_in_place(ev.journal, t)
    return t


def m_size(ev, node, t, args, kw):
    check_kw(node, kw, ("dim",))
    if len(args) > 1:
        raise DdxTypeError(f"size() takes at most 1 argument ({len(args)} given)",
                           start=node.pos, end=node.end)
    dim = args[0] if args else kw_arg(kw, "dim")
    if dim is None:
        return Size(t.value.shape)
    d = ev.int_arg(dim, node)
    nd = t.value.ndim
    if nd == 0:
        raise DdxShapeError(f"Dimension specified as {d} but tensor has no dimensions",
                            start=node.pos, end=node.end)
    if not -nd <= d < nd:
        raise DdxShapeError(f"Dimension out of range (expected to be in range of [{-nd}, "
                            f"{nd - 1}], but got {d})", start=node.pos, end=node.end)
    return Tensor(np.asarray(t.value.shape[d]), weak=True)  # (a Python int, as x.size(0))


def m_numpy(ev, node, t, args, kw):
    """x.numpy(force=False): refused on a tensor that requires grad while grad mode is on
    (PyTorch's check reads both: under no_grad, or in a custom Function's forward, it works)."""
    force = truth(kw["force"][0]) if "force" in kw else False
    if t.requires_grad and record.GRAD_MODE.enabled and not force:
        raise DdxRuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                              "tensor.detach().numpy() instead.")
    return NumpyArray(t.value)


TENSOR_METHODS = {
    "backward": m_backward,
    "retain_grad": m_retain_grad,
    "requires_grad_": m_requires_grad_,
    "detach": m_detach,
    "item": m_item,
    "zero_": m_zero_,
    "size": m_size,
    "numpy": m_numpy,
    **calls_create.TENSOR_METHODS,  # normal_, uniform_, new_ones, ...
    **create_dropout.TENSOR_METHODS,  # bernoulli_
}
TENSOR_ATTRS = ["grad", "grad_fn", "requires_grad", "is_leaf", "shape", "dtype", "ndim", "data", "device",
                "T"]
