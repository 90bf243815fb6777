"""Callers for the op table's reduction rows (see ddx/graph/args.py for what a caller is):
PyTorch's ``dim`` (an int or a tuple, negative allowed), ``keepdim``, var/std's
``correction``/``unbiased``, norm's ``p``, and max/min's (values, indices).

Tables read by ddx/graph/functions.py: KINDS (a new Op.call kind -> factory(row name) ->
caller), CALLERS (row name -> its own caller), NAMED (a function that is not one row ->
caller) and NAMED_SPACES (such a function's namespaces: "torch", "Tensor", "F", "linalg")."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxNameError, DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from ..ops import OPS
from . import calls_loss, calls_nll
from .args import (
    Evaluating,
    as_tensor,
    bind,
    called_in_torch,
    dims,
    number,
    one_dim,
    refuse_number,
    truth_arg,
)
from .calls_loss import aliased, same_dtype, warn_at
from .tensor import Tensor
from .values import ReturnTypes, type_name


def reduced_input(ev: Evaluating, node: Ast, value: Any) -> Tensor:
    """The tensor a reduction works on: a plain number is a 0-d tensor of the default dtype."""
    a = as_tensor(ev, node, value)
    if a.weak:
        if called_in_torch(node):  # (torch.sum(3) is PyTorch's TypeError)
            refuse_number(node, a)
        a = Tensor(np.asarray(a.value, dtype=ev.dtype if a.value.dtype.kind != "b" else bool))
    return a


def dim_arg(ev: Evaluating, node: Ast, a: Tensor, value: Any) -> tuple[int, ...] | None:
    """``dim`` as sorted axes; () (PyTorch: every dim) is every axis; a 0-d tensor has none."""
    d = dims(ev, node, value, a.value.ndim)
    if d is None or not a.value.ndim:
        return d if d is None else ()
    return d or tuple(range(a.value.ndim))


def int_dim(ev: Evaluating, node: Ast, a: Tensor, value: Any, key: str = "dim") -> int | None:
    """A ``dim`` that must be one int (prod, max, argmax, cumsum, softmax)."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        raise DdxTypeError(f"{node.value}(): argument '{key}' must be int, not "
                           f"{type(value).__name__}", start=node.pos, end=node.end)
    return one_dim(ev, node, value, a.value.ndim)


def _floating(node: Ast, a: Tensor, what: str) -> None:
    if a.value.dtype.kind != "f":
        raise DdxRuntimeError(what.format(name=node.value, dtype=_torch_dtype(a)),
                              start=node.pos, end=node.end)


def _torch_dtype(a: Tensor) -> str:
    return {"i": "Long", "b": "Bool", "u": "Byte"}.get(a.value.dtype.kind, str(a.value.dtype))


def _not_empty(node: Ast, a: Tensor, name: str, dim, tail: str = " Specify the reduction dim "
               "with the 'dim' argument.") -> None:
    if a.value.size == 0 and dim is None:
        raise DdxRuntimeError(f"{name}(): Expected reduction dim to be specified for "
                              f"input.numel() == 0.{tail}", start=node.pos, end=node.end)


def _record(ev, name: str, node: Ast, a: Tensor, dim, keepdim: bool, extra: dict | None = None,
            dim_given: bool = False) -> Tensor:
    kw = dict(extra or {})
    if dim is not None:
        kw["dim"] = dim
    if keepdim:
        kw["keepdim"] = True
    row = OPS[name]
    grad_fn = row.variants.get("dim", row.grad_fn) if dim_given or dim is not None or keepdim \
        else row.grad_fn
    return ev.op(name, node, [a], kw, grad_fn=grad_fn)


def reduction(name: str, needs_float: bool = False):
    """sum mean amax amin logsumexp all any: (input, dim=None, keepdim=False)."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim", "dtype"))
        a = reduced_input(ev, node, given["input"])
        a = same_dtype(node, a, given.get("dtype"))
        if needs_float:
            _floating(node, a, "{name}(): could not infer output dtype. Input dtype must be "
                               "either a floating point or complex dtype. Got: {dtype}")
        dim = dim_arg(ev, node, a, given.get("dim"))
        keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
        if name in ("amax", "amin"):
            _not_empty(node, a, name, dim)
        return _record(ev, name, node, a, dim, keepdim, dim_given=given.get("dim") is not None)
    return call


def _prod(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim", "dtype"))
    a = reduced_input(ev, node, given["input"])
    a = same_dtype(node, a, given.get("dtype"))
    dim = int_dim(ev, node, a, given.get("dim"))
    keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
    if not a.value.ndim:  # (a 0-d tensor's one dim is itself)
        return ev.op("prod", node, [a], {}, grad_fn="ProdBackward0" if dim is None
                     else "ProdBackward1")
    return _record(ev, "prod", node, a, dim, keepdim)


def _named(name: str, fields: tuple, items: tuple):
    """PyTorch's named result (torch.return_types.max)."""
    return ReturnTypes(name, fields, items)


def extreme(name: str):
    """max/min: of everything; (values, indices) along a dim; or with a tensor, maximum."""
    pair = "maximum" if name == "max" else "minimum"

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        kw = aliased(node, kw)
        other = kw.get("other")
        if other is not None or (len(args) == 2 and "dim" not in kw and isinstance(args[1], Tensor)
                                 and not args[1].weak):
            given = bind(node, args, kw, ("input", "other"), required=2)
            a, b = (as_tensor(ev, node, given[k]) for k in ("input", "other"))
            ev.check_broadcast(Ast("bin", pair, (), (), start=node.start, end=node.end,
                                   pos=node.pos), a, b)
            return ev.op(pair, node, [a, b])
        given = bind(node, args, kw, ("input", "dim", "keepdim"))
        a = reduced_input(ev, node, given["input"])
        dim = int_dim(ev, node, a, given.get("dim"))
        keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
        if dim is None:
            if "keepdim" in given:
                raise DdxTypeError(f"{name}(): keepdim needs a dim", start=node.pos, end=node.end)
            _not_empty(node, a, name, None)
            return ev.op(name, node, [a])
        if a.value.shape and a.value.shape[dim] == 0:
            raise DdxRuntimeError(f"{name}(): Expected reduction dim {dim} to have non-zero size.",
                                  start=node.pos, end=node.end)
        if not a.value.ndim:
            values = ev.op(name, node, [a], {}, grad_fn=OPS[name].variants["dim"])
        else:
            values = _record(ev, name, node, a, dim, keepdim)
        indices = _record(ev, "arg" + name, node, a, dim if a.value.ndim else None, keepdim)
        return _named(name, ("values", "indices"), (values, indices))
    return call


def _index(name: str):
    """argmax/argmin: (input, dim=None, keepdim=False), int64, no gradient."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim"))
        a = reduced_input(ev, node, given["input"])
        dim = int_dim(ev, node, a, given.get("dim"))
        keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
        _not_empty(node, a, name, dim, tail="")
        if dim is not None and a.value.ndim and a.shape[dim] == 0:
            raise DdxRuntimeError(f"{name}(): Expected reduction dim {dim} to have non-zero size.",
                                  start=node.pos, end=node.end)
        if not a.value.ndim:
            dim = None
        kw2 = {"dim": dim} if dim is not None else {}
        if keepdim:
            kw2["keepdim"] = True
        return ev.op(name, node, [a], kw2)
    return call


def spread_args(ev: Evaluating, node: Ast, args: list, kw: dict, what: str) -> tuple:
    """var/std's arguments, (input, dim=None, *, correction=1, keepdim=False), and PyTorch's
    older forms (input, unbiased) and (input, dim, unbiased, keepdim): (input, dims, keepdim,
    correction), with PyTorch's warning (naming ``what``) when no degree of freedom is left."""
    if len(args) >= 2 and isinstance(args[1], bool):
        names = ("input", "unbiased", "dim", "keepdim", "correction")
    else:
        names = ("input", "dim", "unbiased", "keepdim", "correction")
    given = bind(node, args, aliased(node, kw), names)
    a = reduced_input(ev, node, given["input"])
    _floating(node, a, "std and var only support floating point and complex dtypes")
    correction = 1.0
    if given.get("correction") is not None:
        correction = number(node, "correction", given["correction"])
    if "unbiased" in given:
        correction = 1.0 if truth_arg(node, "unbiased", given["unbiased"]) else 0.0
    dim = dim_arg(ev, node, a, given.get("dim"))
    keepdim = truth_arg(node, "keepdim", given["keepdim"]) \
        if given.get("keepdim") is not None else False
    n = a.value.size if dim is None else int(np.prod([a.shape[d] for d in dim]))
    if n - correction <= 0:
        warn_at(ev, node, f"{what}(): degrees of freedom is <= 0. Correction should be "
                          "strictly less than the reduction factor (input numel divided by "
                          "output numel).")
    return a, dim, keepdim, correction


def _spread(name: str):
    """var/std."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        a, dim, keepdim, correction = spread_args(ev, node, args, kw, name)
        extra = {"correction": correction} if correction != 1 else {}
        return _record(ev, name, node, a, dim, keepdim, extra)
    return call


_P_NAMES = {"fro": 2.0}


def _p_arg(node: Ast, value: Any) -> float:
    if value is None:
        return 2.0
    if isinstance(value, str):
        if value in _P_NAMES:
            return _P_NAMES[value]
        if value == "nuc":
            raise DdxNameError("norm(p='nuc') (the nuclear norm) is not supported by ddx",
                               start=node.pos, end=node.end)
        raise DdxRuntimeError(f"linalg.vector_norm: Order {value} not supported.",
                              start=node.pos, end=node.end)
    if isinstance(value, Tensor) and value.weak:
        return float(value.value.item())
    raise DdxTypeError(f"{node.value}(): argument 'p' must be a number or 'fro', not "
                       f"{type_name(value)}", start=node.pos, end=node.end)


def _called_as_linalg(node: Ast) -> bool:
    """Whether the call is spelled torch.linalg.norm(...) (its ord on a matrix is a matrix norm)."""
    return node.kind == "method" and bool(node.kids) and node.kids[0].kind == "attr" and \
        node.kids[0].value == "linalg"


def _norm_with(names: tuple):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        linalg = names[1] == "p" and _called_as_linalg(node)
        if linalg or ("ord" in kw and names[1] == "p"):  # linalg.norm(A, ord, dim, keepdim)
            given = bind(node, args, kw, ("input", "ord", "dim", "keepdim"))
            a = reduced_input(ev, node, given["input"])
            order, dim = given.get("ord"), given.get("dim")
            matrix = (dim is None and a.value.ndim == 2) or \
                (isinstance(dim, (tuple, list)) and len(dim) == 2)
            if order is not None and matrix and order != "fro":
                raise DdxNameError("torch.linalg.norm of a matrix with ord (a matrix norm) is not "
                                   "supported by ddx; torch.linalg.vector_norm is",
                                   start=node.pos, end=node.end)
            given["p"] = given.pop("ord", None)
        else:
            given = bind(node, args, kw, names)
            if names[1] == "ord":
                given["p"] = given.pop("ord", None)
        a = reduced_input(ev, node, given["input"])
        _floating(node, a, "linalg.vector_norm: Expected a floating point or complex tensor "
                           "as input. Got {dtype}")
        p = _p_arg(node, given.get("p"))
        dim = dim_arg(ev, node, a, given.get("dim"))
        keepdim = truth_arg(node, "keepdim", given.get("keepdim", False))
        if p < 0 and a.value.size == 0:
            raise DdxRuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty "
                                  "tensor because the operation does not have an identity",
                                  start=node.pos, end=node.end)
        extra = {"p": p} if p != 2 else {}
        return _record(ev, "norm", node, a, dim, keepdim, extra)
    return call


def _cumulative(name: str):
    """cumsum/cumprod: (input, dim)."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input", "dim", "dtype"), required=2)
        a = reduced_input(ev, node, given["input"])
        a = same_dtype(node, a, given.get("dtype"))
        dim = int_dim(ev, node, a, given["dim"])
        return ev.op(name, node, [a], {"dim": dim})
    return call


CALLERS: dict = {
    "sum": reduction("sum"),
    "mean": reduction("mean", needs_float=True),
    "amax": reduction("amax"),
    "amin": reduction("amin"),
    "logsumexp": reduction("logsumexp"),
    "all": reduction("all"),
    "any": reduction("any"),
    "prod": _prod,
    "max": extreme("max"),
    "min": extreme("min"),
    "argmax": _index("argmax"),
    "argmin": _index("argmin"),
    "var": _spread("var"),
    "std": _spread("std"),
    "norm": _norm_with(("input", "p", "dim", "keepdim")),
    "cumsum": _cumulative("cumsum"),
    "cumprod": _cumulative("cumprod"),
}
KINDS: dict = {}
# torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False): the norm row
NAMED: dict = {"vector_norm": _norm_with(("input", "ord", "dim", "keepdim"))}
NAMED_SPACES: dict = {"vector_norm": ("linalg",)}

# softmax and the losses: their callers are in calls_loss.py and calls_nll.py
for _module in (calls_loss, calls_nll):
    CALLERS.update(_module.CALLERS)
    NAMED.update(_module.NAMED)
    NAMED_SPACES.update(_module.NAMED_SPACES)
