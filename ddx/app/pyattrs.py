"""Attributes set and deleted as Python does it: ``setattr(obj, name, value)``,
``delattr(obj, name)``, ``del obj.name``, and attributes of the modules ddx provides
(``model.weight = nn.Parameter(...)``; after ``delattr(model, 'weight')`` any tensor, which is
then no parameter: forward AD's way of putting dual tensors in a module). A dunder name is
refused, as in getattr."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from .pybuiltins import BUILTINS
from .pyerrors import PyException
from .pymodules import Native
from .pynn import PARAMETERS, Builtin, is_module
from .pyvalues import Instance, type_label

_TENSOR_TYPES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                 "int64": "torch.LongTensor", "int32": "torch.IntTensor", "bool": "torch.BoolTensor"}


_KINDS = {"Namespace": "a module", "PyModule": "a module", "Native": "a builtin function"}


def _name(node, name: Any, what: str) -> str:
    if not isinstance(name, str):
        raise DdxTypeError(f"attribute name must be string, not '{type_label(name)}'")
    if name.startswith("__"):
        raise DdxTypeError(f"'{name}' is not available in ddx (no dunder attributes)",
                           start=node.pos, end=node.end)
    return str(name)


def set_module_attr(m: Builtin, name: str, value: Any) -> None:
    """``m.name = value`` on a module ddx provides, with nn.Module's rule for a parameter's
    name (a Parameter or None only)."""
    old = m.state.get(name)
    if isinstance(old, Tensor) and old in PARAMETERS and value is not None and not (
            isinstance(value, Tensor) and value in PARAMETERS):
        kind = _TENSOR_TYPES.get(value.value.dtype.name, "torch.Tensor") if isinstance(
            value, Tensor) and not value.weak else type_label(value)
        raise PyException.error("TypeError", f"cannot assign '{kind}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
    if is_module(old) and value is not None and not is_module(value):
        raise PyException.error("TypeError", f"cannot assign '{type_label(value)}' as child "
                                f"module '{name}' (torch.nn.Module or None expected)")
    m.state[name] = value


def del_attr(ev, node, obj: Any, name: str) -> None:
    """``del obj.name``: the user's object's attribute, a module's parameter, buffer or
    submodule, a custom Function ctx's attribute."""
    _name(node, name, "del")
    if isinstance(obj, Instance):
        if name not in obj.attrs:
            raise PyException.error("AttributeError", f"'{obj.cls.name}' object has no "
                                    f"attribute '{name}'")
        if ev.journal is not None:
            ev.journal.bind(obj.attrs, name, obj.attrs[name])  # (put back on a rollback)
        del obj.attrs[name]
        return
    if isinstance(obj, Builtin) and name in obj.state and name != "training":
        del obj.state[name]
        return
    hook = getattr(obj, "py_delattr", None)  # (a custom Function's ctx)
    if hook is not None and hook(name):
        return
    if isinstance(obj, Builtin) or hook is not None:
        kind = obj.kind if isinstance(obj, Builtin) else "FunctionCtx"
        raise PyException.error("AttributeError", f"'{kind}' object has no attribute '{name}'")
    kind = _KINDS.get(type_label(obj), f"a {type_label(obj)}")
    raise DdxTypeError(f"ddx cannot delete attribute '{name}' of {kind}", start=node.pos,
                       end=node.end)


def _setattr(ev, node, args: list, kw: dict) -> None:
    if kw or len(args) != 3:
        raise DdxTypeError(f"setattr expected 3 arguments, got {len(args) + len(kw)}")
    obj, name, value = args
    name = _name(node, name, "setattr")
    if not ev.surface.set_attr(ev, node, obj, name, value):
        kind = _KINDS.get(type_label(obj), f"a {type_label(obj)}")
        raise DdxTypeError(f"ddx cannot set attribute '{name}' of {kind}", start=node.pos,
                           end=node.end)
    return None


def _delattr(ev, node, args: list, kw: dict) -> None:
    if kw or len(args) != 2:
        raise DdxTypeError(f"delattr expected 2 arguments, got {len(args) + len(kw)}")
    obj, name = args
    del_attr(ev, node, obj, _name(node, name, "delattr"))
    return None


BUILTINS["setattr"] = Native("setattr", _setattr)
BUILTINS["delattr"] = Native("delattr", _delattr)

__all__ = ["del_attr", "set_module_attr"]
