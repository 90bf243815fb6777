"""The REPL's type() and isinstance(): Python's answers for ddx's values (Python numbers,
weak tensors, tensors, modules, the user's classes however deep their bases), and PyTorch's
class names (torch.Tensor, torch.Size, ...)."""

from __future__ import annotations

from typing import Any

from ..graph.tensor import Tensor
from ..graph.values import DType, PyBuiltinType
from . import pyvalues
from .pyerrors import EXCEPTIONS, PARENTS, ExceptionType, PyException, user_chain
from .pymodules import Native
from .pynnclass import class_of
from .pyvalues import Instance, UserClass, type_label
from .values import PyNumber, PyType


def type_(ev, node, args, kw):
    value = args[0]
    if isinstance(value, PyException) and value.user_class is not None:
        return value.user_class  # (type(e) is MyError)
    if isinstance(value, PyException) and value.kind in EXCEPTIONS:
        return EXCEPTIONS[value.kind]  # (type(e) is RuntimeError; its __name__)
    if isinstance(value, Instance):
        return value.cls
    if getattr(value, "range_text", None) is not None:  # (range(3): pyrange.RangeList)
        return PyType("range")
    if isinstance(value, PyBuiltinType) or isinstance(value, UserClass):
        return PyType("type")  # (type(float), type(MyClass))
    cls = class_of(value)  # (type(m) is nn.Linear; type(p) is nn.Parameter)
    if cls is not None:
        return cls
    label = type_label(value)
    return PyType(pyvalues.QUALIFIED.get(label, label))


def isinstance_(ev, node, args, kw):
    value, kind = args
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        name = k.name if isinstance(k, (Native, PyBuiltinType)) else \
            _DTYPE_NAMES.get(str(k)) if isinstance(k, DType) else None  # (torch.float too)
        if name in _TYPE_CHECKS and _TYPE_CHECKS[name](value):
            return True
        if isinstance(k, Native) and getattr(value, "kind", None) == k.name:
            return True  # (a module ddx builds: nn.Linear(2, 3) is an nn.Linear)
        if isinstance(value, Instance) and _inherits(value.cls, k):
            return True
        if isinstance(value, PyException) and _is_exception(value, k):
            return True
        if getattr(k, "is_instance", None) is not None and k.is_instance(value):
            return True
    return False


def _is_exception(value: PyException, k: Any) -> bool:
    """isinstance(e, ValueError), isinstance(e, MyError): an exception value's classes."""
    if value.user_class is not None:
        mine, builtin = user_chain(value.user_class)
        return any(c is k for c in mine) or isinstance(k, ExceptionType) and \
            k.name in ("BaseException", *builtin)
    return isinstance(k, ExceptionType) and k.name in (
        value.kind, "BaseException", *PARENTS.get(value.kind, ()))


def _inherits(cls: UserClass, k: Any) -> bool:
    """Whether ``k`` is ``cls`` or one of its bases, however deep (explicit stack)."""
    stack, seen = [cls], set()
    while stack:
        c = stack.pop()
        if c is k:
            return True
        if isinstance(c, UserClass) and id(c) not in seen:
            seen.add(id(c))
            stack.extend(c.bases)
    return False


_DTYPE_NAMES = {"torch.float32": "float", "torch.float64": "float", "torch.int64": "int",
                "torch.int32": "int", "torch.bool": "bool"}
_TYPE_CHECKS = {
    "float": lambda v: isinstance(v, PyNumber) and isinstance(v.raw, float) or
    type(v) is float or isinstance(v, Tensor) and v.weak and v.value.dtype.kind == "f",
    "int": lambda v: isinstance(v, Tensor) and v.weak and v.value.dtype.kind in "iub" or
    isinstance(v, int) or isinstance(v, PyNumber) and isinstance(v.raw, int),
    "str": lambda v: isinstance(v, str), "list": lambda v: isinstance(v, list),
    "tuple": lambda v: isinstance(v, tuple), "dict": lambda v: isinstance(v, dict),
    "bool": lambda v: isinstance(v, bool),
}
