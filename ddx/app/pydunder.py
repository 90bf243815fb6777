"""The special methods of the user's classes, as Python calls them: ``__repr__``/``__str__``
(print, str, repr, f-strings), ``__len__`` (len), ``__getitem__`` (``obj[i]``), the operators
(``__add__``, ``__radd__``, ``__eq__``, ``__lt__``, ...), and ``@property``. Only methods the
user wrote are called; nothing of Python's own object model is reachable."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from . import pycalls
from .pyerrors import PyException
from .pyvalues import BoundMethod, Instance, UserClass, UserFunction, python_truth, type_label

# operator -> (method, reflected method)
OPERATORS = {"+": ("__add__", "__radd__"), "-": ("__sub__", "__rsub__"),
             "*": ("__mul__", "__rmul__"), "/": ("__truediv__", "__rtruediv__"),
             "//": ("__floordiv__", "__rfloordiv__"), "%": ("__mod__", "__rmod__"),
             "^": ("__pow__", "__rpow__"), "**": ("__pow__", "__rpow__"),
             "@": ("__matmul__", "__rmatmul__"),
             "==": ("__eq__", "__eq__"), "!=": ("__ne__", "__ne__"),
             "<": ("__lt__", "__gt__"), ">": ("__gt__", "__lt__"),
             "<=": ("__le__", "__ge__"), ">=": ("__ge__", "__le__")}


class Property:
    """``@property``: a method read as an attribute."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return "<property object>"


def method_kind(fn: Any, kind: str) -> Any:
    """@staticmethod / @classmethod: the function, marked (a class's own Function.forward
    is called with its ctx as any function is)."""
    if isinstance(fn, UserFunction):
        fn.method_kind = kind
    return fn


def bind_attr(found: Any, obj: Any, ev=None, node=None) -> Any:
    """A class attribute as ``obj.name`` gives it (``obj`` an instance or a class): a
    method bound to the instance, a classmethod to the class, a staticmethod as it is, a
    @property's value (from an instance, given the evaluator that runs it)."""
    if isinstance(found, Property) and ev is not None and isinstance(obj, Instance):
        return pycalls.call_value(ev, node, found.fn, [obj], {})
    kind = getattr(found, "method_kind", None)
    if kind == "static":
        return found
    if kind == "class":
        return BoundMethod(found, obj if isinstance(obj, UserClass) else obj.cls)
    if isinstance(obj, UserClass):
        return found
    if isinstance(found, UserFunction) or getattr(found, "bind_to_instance", False):
        return BoundMethod(found, obj)  # (a builtin base's methods bind too: nn.Module's)
    return found


def method(obj: Any, name: str) -> UserFunction | None:
    """The user's own ``name`` method of an instance's class, or None."""
    if not isinstance(obj, Instance):
        return None
    found = obj.cls.lookup(name)
    return found if isinstance(found, UserFunction) else None


def call(ev, node, obj: Instance, fn: UserFunction, args: list) -> Any:
    return pycalls.call_user(ev, node, fn, [obj, *args], {})


def text(ev, node, obj: Any, kind: str) -> str | None:
    """str(obj) (kind "str": __str__, else __repr__) or repr(obj) (kind "repr"), when the
    user's class defines them; None otherwise."""
    names = ("__str__", "__repr__") if kind == "str" else ("__repr__",)
    for name in names:
        fn = method(obj, name)
        if fn is not None:
            got = call(ev, node, obj, fn, [])
            if not isinstance(got, str):
                raise DdxTypeError(f"{name} returned non-string (type "
                                   f"{type(got).__name__})")
            return str(got)
    return None


def binary(ev, node, op: str, a: Any, b: Any) -> Any:
    """``a op b`` through the user's operator methods; NotImplemented when neither side
    has one (or it returns NotImplemented)."""
    names = OPERATORS.get(op)
    if names is None:
        return NotImplemented
    fn = method(a, names[0])
    if fn is not None:
        got = call(ev, node, a, fn, [b])
        if got is not NotImplemented:
            return got
    fn = method(b, names[1])
    if fn is not None:
        return call(ev, node, b, fn, [a])
    if op == "!=" and method(a, "__eq__") is not None:  # (Python's default __ne__: not __eq__)
        from .values import python_truth
        return not python_truth(call(ev, node, a, method(a, "__eq__"), [b]))
    if op in ("==", "!=") and (isinstance(a, Instance) or isinstance(b, Instance)):
        return (a is b) == (op == "==")
    return NotImplemented


def getitem(ev, node, obj: Any, key: Any) -> Any:
    fn = method(obj, "__getitem__")
    if fn is None:
        raise DdxTypeError(f"'{obj.cls.name}' object is not subscriptable")
    return call(ev, node, obj, fn, [key])


def length(ev, node, obj: Any) -> Any:
    fn = method(obj, "__len__")
    if fn is None:
        raise DdxTypeError(f"object of type '{obj.cls.name}' has no len()")
    return call(ev, node, obj, fn, [])


def truth(ev, node, value: Any) -> bool:
    """Python's truth of a value: a user's object through its __bool__ (or __len__)."""
    if isinstance(value, Instance):
        fn = method(value, "__bool__")
        if fn is not None:
            got = call(ev, node, value, fn, [])
            if not (isinstance(got, bool) or isinstance(got, Tensor) and got.weak and
                    got.value.dtype == bool):
                raise PyException.error("TypeError", "__bool__ should return bool, returned "
                                        f"{type_label(got)}")
            return python_truth(got)
        fn = method(value, "__len__")
        if fn is not None:
            return python_truth(call(ev, node, value, fn, []))
    return python_truth(value)


__all__ = ["OPERATORS", "Property", "binary", "getitem", "length", "method", "text", "truth"]
