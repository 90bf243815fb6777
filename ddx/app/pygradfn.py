"""A grad_fn node called as a function, as PyTorch's ``y.grad_fn(torch.ones(2))``: the node's
VJP of the given gradient, one result per next_functions entry (a tensor for one, a tuple
for more, None where the next function is None); and ``grad_fn.metadata``, the node's own
dict.

PyTorch computes a node's gradient with differentiable ops, so a result that reads a value
requiring grad (``x.exp()``'s node gives ``g * result``) has a grad_fn of its own
(MulBackward0). ddx names that node as PyTorch's formula ends (RESULT_NODE); a backward
through such a result is refused, since ddx does not record the formula itself."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..engine.reverse import FREED_TEXT, unbroadcast
from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import AccumulateGrad, Function, Tensor
from ..graph.values import truth
from ..ops import Op
from .pyautograd import BILINEAR, GRAD_GRAPHS, LINEAR

# the op PyTorch's backward formula of a node ends in, by the forward op (MulBackward0 else)
RESULT_NODE = {"tanh": "TanhBackwardBackward0", "sigmoid": "SigmoidBackwardBackward0",
               "log": "DivBackward0", "sqrt": "DivBackward0",
               "relu": "ThresholdBackwardBackward0", "mm": "MmBackward0",
               "matmul": "MmBackward0"}
METADATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def metadata(fn: Function | AccumulateGrad) -> dict:
    """``grad_fn.metadata``: a dict that stays with the node."""
    got = METADATA.get(fn)
    if got is None:
        got = METADATA[fn] = {}
    return got


def _refuse(*_args, **_kw):
    raise DdxRuntimeError("ddx does not differentiate the result of calling a grad_fn "
                          "(PyTorch records its backward formula; ddx computes it numerically)")


def _result_name(op: str, i: int) -> str:
    if op == "div":
        return "DivBackward0" if i == 0 else "MulBackward0"
    return RESULT_NODE.get(op, "MulBackward0")


def _reads_grad(fn: Function, i: int) -> bool:
    """Whether input ``i``'s VJP reads a value that requires grad (so PyTorch's result of it
    requires grad): never for a linear op; for a bilinear one, the other inputs'."""
    op = fn.op.name
    if op in LINEAR:
        return False
    if op in BILINEAR:
        others = [t for k, t in enumerate(fn.inputs) if k != i]
        return any(t.requires_grad for t in others) or op == "div" and i == 1
    return True


def call_node(ev, node, fn: Any, args: list, kw: dict) -> Any:
    """``fn(grad)`` for a grad_fn node."""
    if isinstance(fn, AccumulateGrad):
        raise DdxTypeError("calling an AccumulateGrad node is not supported by ddx",
                           start=node.pos, end=node.end)
    if kw or len(args) != 1 or not isinstance(args[0], Tensor) or args[0].weak:
        raise DdxTypeError(f"ddx calls {fn.name} with one gradient tensor, as "
                           f"{fn.name}(torch.ones(...))", start=node.pos, end=node.end)
    g = args[0]
    if g.value.shape != fn.value.shape:
        raise DdxRuntimeError(f"Function {fn.name} was given a gradient of shape "
                              f"{list(g.value.shape)}; its output has shape "
                              f"{list(fn.value.shape)}", start=node.pos, end=node.end)
    if fn.freed and fn.op.saves:
        raise DdxRuntimeError(FREED_TEXT, start=node.pos, end=node.end)
    gv = g.value.astype(fn.value.dtype, copy=False)
    vals = [t.value.item() if t.weak else t.value for t in fn.inputs]
    outs: list = []
    for i, t in enumerate(fn.inputs):
        if t.edge() is None:
            outs.append(None)
            continue
        gi = fn.op.vjp[i](gv, fn.value, *vals, **fn.kw)
        if gi is None:  # (a custom Function's backward gave None for it)
            outs.append(None)
            continue
        gi = np.asarray(gi)
        if gi.shape != t.value.shape:
            gi = unbroadcast(gi, t.value.shape)
        out = Tensor(np.asarray(gi, dtype=t.value.dtype))
        if record.GRAD_MODE.enabled and (g.requires_grad or _reads_grad(fn, i)):
            stub = Op("grad_fn_call", _result_name(fn.op.name, i), lambda *a: None,
                      tuple(_refuse for _ in fn.inputs), saves=False, elementwise=False)
            out.requires_grad = True
            out.grad_fn = Function(stub, stub.grad_fn, fn.inputs, {}, out)
        outs.append(out)
    return outs[0] if len(outs) == 1 else tuple(outs)


# --- _saved_* of the shape nodes pysaved does not list -----------------------------------
_SIZES = ("self_sym_sizes", "sizes", None)
MORE_SAVED = {
    "UnsqueezeBackward0": (("dim", "kw", ("dim", None)),),
    "TransposeBackward0": (("dim0", "kw", ("dim0", None)), ("dim1", "kw", ("dim1", None))),
    "PermuteBackward0": (("dims", "kw", ("dims", None)),),
    "SqueezeBackward1": (("dim", "kw", ("dim", None)), _SIZES),
    "RepeatBackward0": (("repeats", "kw", ("sizes", None)), _SIZES),
    "SplitBackward0": (("dim", "kw", ("dim", 0)), _SIZES, ("split_size", "kw", ("size", None))),
    "SelectBackward0": (("dim", "key", None), ("index", "key", None), _SIZES),
    "SliceBackward0": (("dim", "key", None), ("end", "key", None), _SIZES,
                       ("start", "key", None), ("step", "key", None)),
}
_INT64_MAX = 2**63 - 1


def _c_int(n: int) -> int:
    """An int64 PyTorch saved, as its Python binding reads it back (unsigned: -1 shows as
    2**64 - 1)."""
    return n if n >= 0 else 2**64 + n


def _key_part(fn: Function, attr: str) -> Any:
    """dim/index/start/end/step of a select's or slice's key with one entry that is not a
    whole dimension (x[0], x[:, 1], x[1:], x[..., ::2]); NotImplemented for other keys."""
    key = fn.kw.get("key")
    ndim = fn.inputs[0].value.ndim if fn.inputs else 0
    if not isinstance(key, tuple):
        return NotImplemented
    whole = slice(None)
    dims: list = []
    if Ellipsis in key:
        at = key.index(Ellipsis)
        after = len(key) - at - 1
        dims = [(i, k) for i, k in enumerate(key[:at])] + \
            [(ndim - after + j, k) for j, k in enumerate(key[at + 1:])]
    else:
        dims = list(enumerate(key))
    parts = [(d, k) for d, k in dims if k != whole]
    if len(parts) != 1 or any(k is None for _, k in dims):
        return NotImplemented
    dim, k = parts[0]
    if attr == "dim":
        return dim
    if isinstance(k, slice):
        if attr == "start":
            return _c_int(int(k.start or 0))
        if attr == "end":
            return _INT64_MAX if k.stop is None else _c_int(int(k.stop))
        if attr == "step":
            return int(k.step or 1)
        return NotImplemented
    return _c_int(int(k)) if attr == "index" else NotImplemented


def saved_more(fn: Function, name: str) -> Any:
    """grad_fn._saved_<attr> of the nodes in MORE_SAVED; NotImplemented otherwise."""
    attr = name[len("_saved_"):]
    for key, kind, arg in MORE_SAVED.get(fn.name, ()):
        if key != attr:
            continue
        if kind == "kw":
            value = fn.kw.get(arg[0], arg[1])
            return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else \
                value.item() if isinstance(value, np.generic) else value
        if kind == "sizes":
            return tuple(int(n) for n in fn.inputs[0].value.shape)
        return _key_part(fn, attr)
    return NotImplemented


def _m_grad_fn(ev, node, t: Tensor, args: list, kw: dict) -> Any:
    """``y.grad_fn(g)``: parsed as a method call; the node called."""
    if t.grad_fn is None:
        raise DdxTypeError("'NoneType' object is not callable", start=node.pos, end=node.end)
    return call_node(ev, node, t.grad_fn, args, kw)


def _grads_kept_in_place(method):
    """backward() without create_graph adds into a leaf's .grad in place (PyTorch's
    AccumulateGrad under no grad mode), so a .grad that backward(create_graph=True) made
    differentiable keeps its grad_fn (CopyBackwards) and takes the new values."""
    def run(ev, node, t, args, kw):
        kept = [(leaf, got) for leaf, got in list(GRAD_GRAPHS.items())
                if got.value is leaf.grad]
        result = method(ev, node, t, args, kw)
        flag = kw.get("create_graph")
        if flag is None or not truth(flag[0]):
            for leaf, got in kept:
                if leaf.grad is not None and leaf.grad is not got.value and \
                        leaf.grad.shape == got.value.shape:
                    got.value = leaf.grad
        return result
    return run


def register() -> None:
    from .methods import TENSOR_METHODS

    TENSOR_METHODS.setdefault("grad_fn", _m_grad_fn)
    TENSOR_METHODS["backward"] = _grads_kept_in_place(TENSOR_METHODS["backward"])


register()

__all__ = ["METADATA", "MORE_SAVED", "call_node", "metadata", "saved_more"]
