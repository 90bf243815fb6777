"""The REPL's Python values and expressions: scopes, the user's functions, lambdas and classes,
exceptions, truth, iteration, binding, calls, f-strings, comprehensions, dicts and sets.
Numbers stay ddx's plain numbers (weak 0-d tensors), so they mix with tensors as in PyTorch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import (
    DdxTypeError,
    DdxValueError,
)
from ..graph.binding import pair_targets
from ..graph.tensor import AccumulateGrad, Function, Tensor
from ..graph.values import DType, NamedTuple, weak
from ..lang.tree import Ast
from . import pymro, pynumpy, pypercent
from .pyerrors import EXCEPTIONS, PyException, as_error, exception_matches
from .pynumpy import NumpyArray
from .pyrange import RangeList
from .values import NOTHING, Device, DictView, PyNumber, Size, Str, python_truth

MAX_DEPTH = 40  # calls of the user's own functions, nested (Python's RecursionError past it)


class Scope(dict):
    """A function's local names, falling back to the module's (``outer``) for reads; writes
    stay local unless the name is declared ``global``."""

    def __init__(self, local: dict, outer: dict) -> None:
        super().__init__(local)
        self.outer = outer
        self.globals_named: set[str] = set()
        self.comprehension = False  # (a comprehension's own: a walrus binds around it)

    def __missing__(self, name: str) -> Any:
        return self.outer[name]

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self.outer

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __setitem__(self, name: str, value: Any) -> None:
        if name in self.globals_named:
            self.outer[name] = value
        else:
            dict.__setitem__(self, name, value)


class UserFunction:
    """A def or a lambda: parameters, defaults (evaluated once, at definition), the body and
    the scope it was defined in."""

    def __init__(self, name: str, params: list, defaults: dict, body, scope: dict, program,
                 *, expression: bool) -> None:
        self.name = name
        self.params = params
        self.defaults = defaults
        self.body = body  # a list of statements, or an expression (a lambda)
        self.scope = scope
        self.program = program
        self.expression = expression
        self.grad_mode: bool | None = None  # @torch.no_grad(): False

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class UserClass:
    def __init__(self, name: str, bases: list, scope: dict) -> None:
        self.name, self.bases, self.scope = name, bases, scope

    def __repr__(self) -> str:
        return f"<class '__main__.{self.name}'>"

    def lookup(self, name: str) -> Any:
        """A class attribute, searched in Python's order (ddx/app/pymro.py)."""
        return pymro.attr_in(pymro.mro(self), name)


class _ObjectClass(UserClass):
    """``object``, the base of ``class Point(object):`` (no attributes of its own)."""

    def __repr__(self) -> str:
        return "<class 'object'>"


OBJECT = _ObjectClass("object", [], {})


class Instance:
    """An object of a user's class: its attributes (and a builtin base's state, for nn.Module)."""

    def __init__(self, cls: UserClass) -> None:
        self.cls = cls
        self.attrs: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<__main__.{self.cls.name} object>"


class BoundMethod:
    def __init__(self, fn: Any, obj: Any) -> None:
        self.fn, self.obj = fn, obj


# --- truth, iteration, strings ----------------------------------------------------------
def iterate(ev, value: Any, node: Ast | None = None) -> Iterator:
    """What ``for`` walks: Python containers, ranges and iterators as Python does; a tensor
    along its first dimension (each row a view, as unbind gives them)."""
    if isinstance(value, Tensor) and not value.weak:
        if value.value.ndim == 0:
            raise DdxTypeError("iteration over a 0-d tensor")
        n = value.value.shape[0]
        spot = node or Ast("name", "", (), (), 0, 0)
        return iter([ev.op("select", spot, [value], {"key": (i,)}, grad_fn="UnbindBackward0")
                     for i in range(n)])
    if isinstance(value, dict):
        return iter(list(value))
    if isinstance(value, str):
        return iter(list(value))
    if isinstance(value, (list, tuple, range, set)) or hasattr(value, "__next__"):
        return iter(list(value) if isinstance(value, (list, set)) else value)
    if hasattr(value, "py_iter_ev"):  # (a DataLoader of the user's dataset: read here)
        return value.py_iter_ev(ev)
    if hasattr(value, "py_iter"):
        return value.py_iter()
    raise DdxTypeError(f"'{type_label(value)}' object is not iterable")


def type_label(value: Any) -> str:
    if isinstance(value, (Function, AccumulateGrad)):
        return value.name  # (type(y.grad_fn) is <class 'MulBackward0'>)
    if isinstance(value, Tensor):
        if value.weak:
            kind = value.value.dtype.kind
            return "bool" if kind == "b" else "int" if kind in "iu" else "float"
        return "Tensor"
    if value is None or value is NOTHING:
        return "NoneType"
    if isinstance(value, UserFunction):
        return "function"
    if isinstance(value, Instance):
        return value.cls.name
    if isinstance(value, UserClass):
        return "type"  # (a class: Python's type object)
    if isinstance(value, list):
        return "list"
    if isinstance(value, PyNumber):
        return type(value.raw).__name__
    if isinstance(value, Str):
        return "str"
    if isinstance(value, DType):
        return "dtype"
    if isinstance(value, Device):
        return "device"
    if isinstance(value, NamedTuple):
        return value.name  # (forward_ad's UnpackedDualTensor)
    shown = getattr(type(value), "py_type_name", None)  # (torch.func's functions: 'function')
    return shown if shown else type(value).__name__


# type(x)'s module-qualified names, where Python's differ from type_label's
QUALIFIED = {"Tensor": "torch.Tensor", "Size": "torch.Size", "dtype": "torch.dtype",
             "device": "torch.device", "NumpyArray": "numpy.ndarray",
             "TensorDataset": "torch.utils.data.dataset.TensorDataset",
             "DataLoader": "torch.utils.data.dataloader.DataLoader",
             "_SingleProcessDataLoaderIter":
                 "torch.utils.data.dataloader._SingleProcessDataLoaderIter"}


def to_str(ev, value: Any) -> str:
    """str(value), as Python and PyTorch give it."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, PyException):
        return value.message
    if isinstance(value, NumpyArray):  # print(x.numpy()): numpy's str
        return str(value)
    if isinstance(value, Device):  # print(torch.device('cpu')): cpu
        return str(value)
    if isinstance(value, Instance):  # (the user's __str__ or __repr__)
        got = ev.surface.user_text(ev, value, "str")
        if got is not None:
            return got
    return ev.surface.show(ev, value)


def number_of(value: Any):
    """A plain Python number for a ddx number (or an .item()), else None."""
    if isinstance(value, PyNumber):
        return value.raw
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.weak:
        return value.value.item()
    if isinstance(value, (int, float)):  # (a Python number a method gave: numel(), dim())
        return value
    return None


def format_value(ev, value: Any, conv: str | None, spec: str) -> str:
    if conv == "r":
        text = repr(value) if isinstance(value, str) else ev.surface.show(ev, value)
        return format(text, spec) if spec else text
    if conv is None and isinstance(value, Tensor) and not value.weak and \
            value.value.ndim == 0 and value.value.dtype.kind in "fiub":
        # PyTorch's Tensor.__format__: a 0-d tensor formats as its number (f"{z}" is 7.0)
        return format(value.value.item(), spec)
    if conv in ("s", "a") or not spec:
        return to_str(ev, value) if conv != "r" else ev.surface.show(ev, value)
    n = number_of(value)
    if n is None and isinstance(value, Tensor) and value.value.size == 1:
        n = value.value.item()  # PyTorch formats a one-element tensor by its number
    if n is not None:
        try:
            return format(n, spec)
        except ValueError as exc:
            raise DdxValueError(str(exc)) from None
    if isinstance(value, str):
        return format(str(value), spec)
    raise DdxTypeError(f"unsupported format string passed to {type_label(value)}.__format__")


def fstring(ev, node: Ast) -> str:
    from ..lang.syntax import parse

    out = []
    for part in node.value:
        if isinstance(part, str):
            out.append(part)
            continue
        source, _, conv, spec = part
        program = parse(source.strip())
        if len(program.stmts) != 1 or program.stmts[0].kind != "expr":
            raise DdxValueError("f-string: expecting an expression", start=node.start,
                                end=node.end)
        value = ev.evaluate(program.stmts[0].value)
        if "{" in spec:  # a nested field in the spec: {x:{width}}
            spec = fstring(ev, Ast("fstr", _spec_parts(spec), (), (), 0, 0))
        out.append(format_value(ev, value, conv, spec))
    return Str("".join(out))


def _spec_parts(spec: str) -> tuple:
    from ..lang.pybuild import fstring_parts

    return fstring_parts("'" + spec + "'", 0)


# --- binding ----------------------------------------------------------------------------
def bind_name(ev, name: str, value: Any) -> None:
    if ev.journal is not None and not isinstance(ev.env, Scope):
        ev.journal.bind(ev.env, name, value)
    else:
        ev.env[name] = value


def unbind_name(ev, name: str) -> None:
    env = ev.env
    if ev.journal is not None and not isinstance(env, Scope):
        ev.journal.bind(env, name, env[name])
    del env[name]


def bind(ev, target: Ast, value: Any, *, python: bool = True) -> None:
    """A for loop's or a with's target: names take the value as it is (a loop's numbers stay
    numbers, not leaves); attributes, items and tuples as an assignment does them."""
    work = [(target, value)]
    while work:
        tgt, val = work.pop()
        if tgt.kind == "name" and (python or not isinstance(val, Tensor) or val.weak):
            bind_name(ev, tgt.value, val)
        elif tgt.kind in ("tuple", "vec"):
            work.extend(reversed(pair_targets(tgt, list(iterate(ev, val, tgt)))))
        else:
            ev.assign(tgt, val)


# --- operators on Python values ---------------------------------------------------------
def python_binary(ev, node, op: str, a: Any, b: Any) -> Any:
    """Python's meaning of an operator on strings, lists and tuples; NotImplemented where
    ddx's arithmetic applies (numbers and tensors)."""
    if isinstance(a, NumpyArray) or isinstance(b, NumpyArray):
        return pynumpy.binary(op, a, b)
    if isinstance(a, str) and isinstance(b, str):
        if op == "+":
            return Str(a + b)
        if op in ("==", "!="):
            return (a == b) == (op == "==")
    if isinstance(a, tuple) and isinstance(b, tuple) and op == "+" and \
            (isinstance(a, Size) or isinstance(b, Size)):  # (x.shape[:-1] + (2, 4))
        return Size(int(number_of(v)) if number_of(v) is not None else v for v in (*a, *b))
    if isinstance(a, (list, tuple)) and type(a) is type(b) and op == "+":
        return a + b
    if isinstance(a, (list, tuple, str)) and op == "*" and number_of(b) is not None:
        got = a * int(number_of(b))
        return Size(got) if isinstance(a, Size) else got
    if isinstance(a, str) and op == "%":
        items = b if isinstance(b, tuple) else (b,)
        try:
            return Str(a % tuple(pypercent.arg(x, number_of(x), lambda v: to_str(ev, v))
                                 for x in items))
        except TypeError as exc:
            raise DdxTypeError(str(exc)) from None
        except ValueError as exc:
            raise PyException.error("ValueError", str(exc)) from None
    if op in ("==", "!=") and (getattr(a, "is_class_value", False) or
                               getattr(b, "is_class_value", False)):
        return (a is b) == (op == "==")  # (type(m) == nn.Linear: pynnclass.NNClass)
    if op in ("==", "!=") and (isinstance(a, (DType, Device)) or isinstance(b, (DType, Device))):
        return (a == b) == (op == "==")  # (x.dtype == torch.float32, x.device == 'cpu')
    if op in ("==", "!=") and (isinstance(a, DictView) or isinstance(b, DictView)):
        return _view_equal(a, b) == (op == "==")
    if op in ("==", "!=") and (a is None or b is None or isinstance(a, (list, tuple, str)) or
                               isinstance(b, (list, tuple, str))):
        same = a is b or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and
                          _sequence_kind(a) == _sequence_kind(b) and
                          _plain(a) == _plain(b))  # (x.shape == (2, 3): a Size is a tuple)
        return same == (op == "==")
    return NotImplemented


def _view_equal(a, b) -> bool:
    """== of a dict's view, as Python's: keys and items equal a set (or a keys or items view)
    of the same members, never a list or a tuple (d.keys() == ['a'] is False); a values view
    equals only itself."""
    view, other = (a, b) if isinstance(a, DictView) else (b, a)
    if view.kind.endswith("values"):
        return a is b
    if not (isinstance(other, (set, frozenset)) or (
            isinstance(other, DictView) and not other.kind.endswith("values"))):
        return False

    def member(m):  # (ddx's numbers as numbers; an item's key and value too)
        if isinstance(m, tuple):
            return tuple(x if number_of(x) is None else number_of(x) for x in m)
        return m if number_of(m) is None else number_of(m)
    try:
        return {member(m) for m in view} == {member(m) for m in other}
    except TypeError:  # (unhashable members, as a tensor value: taken as unequal)
        return False


def _sequence_kind(v) -> str:
    """What Python's == tells apart: a tuple (torch.Size too), a range, a list (a ``[..]``
    literal too): range(3) == (0, 1, 2) and [0, 1] == (0, 1) are False."""
    if isinstance(v, tuple):
        return "tuple"
    return "range" if isinstance(v, RangeList) and v.range_text is not None else "list"


def _plain(items) -> list:
    """A list's or tuple's items as Python compares them: ddx's numbers as numbers, nested
    lists and tuples as (kind, items) (explicit stack)."""
    out: list = []
    stack = [(items, out)]
    while stack:
        seq, dest = stack.pop()
        for item in seq:
            if isinstance(item, (list, tuple)) and not isinstance(item, str):
                sub: list = []
                dest.append((type(item) is list, sub))
                stack.append((item, sub))
            else:
                n = number_of(item)
                dest.append(item if n is None else n)
    return out


def binary(ev, node, op: str, a: Any, b: Any) -> Any:
    """``a op b`` for augmented assignment: Python's meaning, else ddx's arithmetic."""
    got = python_binary(ev, node, op, a, b)
    if got is not NotImplemented:
        return got
    sym = {"**": "^"}.get(op, op)
    fake = Ast("bin", sym, (), (), start=node.start, end=node.end,
               pos=getattr(node, "pos", node.start))
    return ev.binary(fake, a, b)


def torch_type_name(dtype) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long", "bool": "Bool",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte"}.get(
        np.dtype(dtype).name, np.dtype(dtype).name)


__all__ = ["EXCEPTIONS", "MAX_DEPTH", "PyException", "Size", "as_error", "exception_matches",
           "python_truth",
           "weak"]
