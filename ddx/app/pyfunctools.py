"""The bits of ``functools`` and ``copy`` the torch.func tutorials use, as modules ``import``
reaches: ``functools.partial(f, *args, **kw)`` (a function with some arguments given; its
``func``, ``args`` and ``keywords``), ``functools.reduce(f, iterable[, initial])``, and
``copy.deepcopy``/``copy.copy`` of tensors, containers and nn modules (a module's copy has
its own parameters and buffers, the same values; the modules are walked with an explicit
stack, each once)."""

from __future__ import annotations

import copy as pycopy
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from . import pycalls, pynn, pytree
from .pyerrors import PyException
from .pymodules import MODULES, Native, PyModule
from .pyvalues import Instance, iterate

DEEPCOPY_NONLEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
    "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


class Partial:
    """functools.partial(func, *args, **keywords)."""

    py_type_name = "partial"

    def __init__(self, func: Any, args: tuple, keywords: dict) -> None:
        self.func, self.args, self.keywords = func, args, keywords
        self.name = getattr(func, "name", "partial")

    def __repr__(self) -> str:
        inner = getattr(self.func, "name", "f")
        return f"functools.partial(<function {inner}>, ...)"

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        merged = {k: (v, None) for k, v in self.keywords.items()}
        merged.update(kw)
        return pycalls.call_value(ev, node, self.func, [*self.args, *args], merged)

    def py_attr(self, ev, node, name: str) -> Any:
        if name == "func":
            return self.func
        if name == "args":
            return self.args
        if name == "keywords":
            return dict(self.keywords)
        raise PyException.error("AttributeError",
                                f"'functools.partial' object has no attribute '{name}'")


def _partial(ev, node, args: list, kw: dict) -> Partial:
    if not args:
        raise DdxTypeError("type 'partial' takes at least one argument")
    func = args[0]
    if isinstance(func, Partial):  # partial(partial(f, a), b) is partial(f, a, b)
        keywords = dict(func.keywords)
        keywords.update({k: v for k, (v, *_r) in kw.items()})
        return Partial(func.func, (*func.args, *args[1:]), keywords)
    return Partial(func, tuple(args[1:]), {k: v for k, (v, *_r) in kw.items()})


def _reduce(ev, node, args: list, kw: dict) -> Any:
    if kw or not 2 <= len(args) <= 3:
        raise DdxTypeError(f"reduce expected at least 2 arguments, got {len(args)}")
    items = iter(list(iterate(ev, args[1], node)))
    if len(args) == 3:
        acc = args[2]
    else:
        try:
            acc = next(items)
        except StopIteration:
            raise DdxTypeError("reduce() of empty iterable with no initial value") from None
    for item in items:
        acc = pycalls.call_value(ev, node, args[0], [acc, item], {})
    return acc


def _tensor_copy(t: Tensor) -> Tensor:
    if t.grad_fn is not None:
        raise DdxRuntimeError(DEEPCOPY_NONLEAF)
    out = Tensor(np.array(t.value), t.requires_grad, name=t.name, weak=t.weak)
    if t in pynn.PARAMETERS:
        pynn.PARAMETERS.add(out)
    if t.grad is not None:
        out.grad = Tensor(np.array(t.grad.value))
    return out


def _module_copy(m: Any, memo: dict) -> Any:
    """A copy of module m and its submodules (pre-order, explicit stack)."""
    mods = [mod for _, mod in pynn.named_modules(m)]
    for mod in mods:
        if isinstance(mod, Instance):
            clone = Instance(mod.cls)
            for k, v in vars(mod).items():
                if k not in ("cls", "attrs", "py_call"):
                    setattr(clone, k, pycopy.copy(v))
            if "py_call" in vars(mod):  # (nn.Module's call, of the clone: pynn.init_instance)
                clone.py_call = _caller(clone)
        else:
            clone = pycopy.copy(mod)
            clone.state = {}
            if hasattr(mod, "buffer_names"):
                clone.buffer_names = dict(mod.buffer_names)
        memo[id(mod)] = clone
    for mod in mods:
        src = mod.attrs if isinstance(mod, Instance) else mod.state
        dst = memo[id(mod)].attrs if isinstance(mod, Instance) else memo[id(mod)].state
        for k, v in src.items():
            dst[k] = _leafwise(v, memo)
    return memo[id(m)]


def _caller(m: Instance):
    return lambda ev, node, args, kw: pynn.call_module(ev, node, m, args, kw)


def _leafwise(value: Any, memo: dict) -> Any:
    def one(v):
        if id(v) in memo:
            return memo[id(v)]
        if isinstance(v, Tensor):
            memo[id(v)] = _tensor_copy(v)
            return memo[id(v)]
        if pynn.is_module(v):
            return _module_copy(v, memo)
        return v
    return pytree.map_leaves(one, value)


def _deepcopy(ev, node, args: list, kw: dict) -> Any:
    if len(args) != 1:
        raise DdxTypeError(f"deepcopy() takes 1 positional argument but {len(args)} were given")
    return _leafwise(args[0], {})


def _copy(ev, node, args: list, kw: dict) -> Any:
    if len(args) != 1:
        raise DdxTypeError(f"copy() takes 1 positional argument but {len(args)} were given")
    value = args[0]
    if isinstance(value, (list, dict)):
        return type(value)(value) if type(value) in (list, dict) else pycopy.copy(value)
    if isinstance(value, Tensor):
        return _tensor_copy(value)
    return value


def register() -> None:
    MODULES.setdefault("functools", PyModule("functools", {
        "partial": Native("partial", _partial), "reduce": Native("reduce", _reduce)}))
    MODULES.setdefault("copy", PyModule("copy", {
        "deepcopy": Native("deepcopy", _deepcopy), "copy": Native("copy", _copy)}))


register()

__all__ = ["Partial", "register"]
