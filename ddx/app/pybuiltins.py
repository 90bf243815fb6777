"""The Python builtins the REPL provides, and only these: print, len, range, enumerate, zip,
list, tuple, dict, set, float, int, str, bool, abs, min, max, sum, round, isinstance, sorted,
reversed, any, all, map, filter, super, type, repr, hasattr, getattr, callable, iter, next, divmod.
Where a name is also one of ddx's ops (sum, max, min, abs, round), a tensor argument goes to
the op, as ``torch.sum`` would, and Python values to Python's meaning."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import DdxTypeError, DdxValueError
from ..graph.tensor import Tensor
from ..graph.values import weak
from . import pycalls, pydunder, pymro, pyorder, pysets, pyvalues, pyvmapstate
from .pyerrors import EXCEPTIONS, PyException
from .pymodules import Native
from .pyrange import RangeList
from .pytypes import isinstance_ as _isinstance
from .pytypes import type_ as _type
from .pyvalues import Instance, UserClass, UserFunction, iterate, number_of, to_str, type_label
from .values import Size, Str


def _print(ev, node, args, kw):
    sep = kw["sep"][0] if "sep" in kw else " "
    end = kw["end"][0] if "end" in kw else "\n"
    for key in kw:
        if key not in ("sep", "end", "flush", "file"):
            raise DdxTypeError(f"'{key}' is an invalid keyword argument for print()")
    text = (getattr(ev, "partial", "") or "") + str(sep).join(
        to_str(ev, a) for a in args) + str(end)
    lines = text.split("\n")
    ev.printed.extend(lines[:-1])
    ev.partial = lines[-1]
    return None


def _number(value, name: str):
    n = number_of(value)
    if n is None and isinstance(value, Tensor) and value.value.size == 1:
        n = value.value.item()
    if n is None and isinstance(value, str):
        try:
            return float(value) if name == "float" else int(value)
        except ValueError:
            raise PyException.error("ValueError", f"could not convert string to {name}: "
                                                  f"{value!r}" if name == "float" else
                                    f"invalid literal for int() with base 10: {value!r}") \
                from None
    if n is None:
        raise DdxTypeError(f"{name}() argument must be a string or a real number, not "
                           f"'{type_label(value)}'")
    return n


SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to "
                  "unexpected behavior.\nConsider using tensor.detach() first.")


def _scalar_of(ev, args: list) -> None:
    """float(t), int(t) of a tensor that requires grad: PyTorch's UserWarning (inside vmap,
    of a mapped tensor: vmap's refusal)."""
    if args:
        pyvmapstate.check_number(args[0])
    if args and isinstance(args[0], Tensor) and not args[0].weak and args[0].requires_grad:
        ev.warnings.append(SCALAR_WARNING)


def _float(ev, node, args, kw):
    _scalar_of(ev, args)
    return weak(float(_number(args[0], "float"))) if args else weak(0.0)


def _int(ev, node, args, kw):
    _scalar_of(ev, args)
    return weak(int(_number(args[0], "int"))) if args else weak(0)


def _len(ev, node, args, kw):
    (value,) = args
    if isinstance(value, Tensor) and not value.weak:
        if value.value.ndim == 0:
            raise DdxTypeError("len() of a 0-d tensor")
        return weak(value.value.shape[0])
    if isinstance(value, (list, tuple, dict, str, set, range, Size)):
        return weak(len(value))
    if hasattr(value, "py_len"):
        return weak(value.py_len())
    if pydunder.method(value, "__len__") is not None:
        return pydunder.length(ev, node, value)
    raise DdxTypeError(f"object of type '{type_label(value)}' has no len()")


def _ints(args) -> list[int]:
    out = []
    for a in args:
        n = number_of(a)
        if n is None and isinstance(a, Tensor) and a.value.size == 1 and \
                a.value.dtype.kind in "iu":
            n = a.value.item()
        if n is None or isinstance(n, float) and not n.is_integer() or isinstance(n, float):
            raise DdxTypeError(f"'{type_label(a)}' object cannot be interpreted as an integer")
        out.append(int(n))
    return out


def _range(ev, node, args, kw):
    r = range(*_ints(args))
    return RangeList([weak(i) for i in r], r) if len(r) <= 10**7 else _too_long()


def _too_long():
    raise DdxValueError("range() of more than 10,000,000 numbers")


def _enumerate(ev, node, args, kw):
    start = int(number_of(args[1])) if len(args) > 1 else int(number_of(kw["start"][0])) \
        if "start" in kw else 0
    return [(weak(i), x) for i, x in enumerate(iterate(ev, args[0], node), start)]


def _zip(ev, node, args, kw):
    return [tuple(items) for items in zip(*(list(iterate(ev, a, node)) for a in args))]


def _list(ev, node, args, kw):
    return list(iterate(ev, args[0], node)) if args else []


def _tuple(ev, node, args, kw):
    return tuple(iterate(ev, args[0], node)) if args else ()


def _dict(ev, node, args, kw):
    out = dict(args[0]) if args and isinstance(args[0], dict) else \
        {k: v for k, v in iterate(ev, args[0], node)} if args else {}
    out.update({k: v for k, (v, _) in kw.items()})
    return out


def _str(ev, node, args, kw):
    return Str(to_str(ev, args[0])) if args else Str("")


def _bool(ev, node, args, kw):
    return pydunder.truth(ev, node, args[0]) if args else False


def _repr(ev, node, args, kw):
    return Str(repr(args[0]) if isinstance(args[0], str) else ev.surface.show(ev, args[0]))


def _op_or_python(name: str, python):
    """sum/max/min/abs/round: ddx's op for a tensor, Python's for Python values."""
    def call(ev, node, args, kw):
        tensors = [a for a in args if isinstance(a, Tensor) and not a.weak]
        if tensors and not (name in ("max", "min") and len(args) > 1 and
                            all(isinstance(a, Tensor) and a.value.size == 1 for a in args)
                            and any(a.weak for a in args)):
            return ev.functions[name](ev, node, args, kw)
        return python(ev, node, args, kw)
    return call


def _num(value):
    n = number_of(value)
    if n is None and isinstance(value, Tensor) and value.value.size == 1:
        return value.value.item()
    if n is None:
        raise DdxTypeError(f"'<' not supported for '{type_label(value)}'")
    return n


def _py_abs(ev, node, args, kw):
    return weak(abs(_num(args[0])))


def _py_round(ev, node, args, kw):
    n = _num(args[0])
    if len(args) > 1 or "ndigits" in kw:
        digits = int(_num(args[1] if len(args) > 1 else kw["ndigits"][0]))
        return weak(round(n, digits))
    return weak(round(n))


def _map(ev, node, args, kw):
    fn, *its = args
    return [pycalls.call_value(ev, node, fn, list(items), {})
            for items in zip(*(list(iterate(ev, i, node)) for i in its))]


def _filter(ev, node, args, kw):
    fn, it = args
    return [x for x in iterate(ev, it, node)
            if pyvalues.python_truth(x if fn is None else
                                     pycalls.call_value(ev, node, fn, [x], {}))]


def _super(ev, node, args, kw):
    """super() inside a method (the classes after the method's own, in the object's MRO),
    or super(Class, obj)."""
    if args:
        if len(args) != 2 or not isinstance(args[0], UserClass):
            raise DdxTypeError("super() takes no arguments or a class and an object here")
        owner, obj = args
    else:
        frame = ev.frames[-1] if ev.frames else None
        obj = ev.env.get("self") if frame is not None else None
        owner = getattr(frame, "owner", None)
    if obj is None or not isinstance(obj, (Instance, UserClass)):
        raise DdxTypeError("super(): no arguments")
    cls = obj if isinstance(obj, UserClass) else obj.cls
    return SuperProxy(obj, pymro.after(cls, owner) if owner is not None else
                      pymro.mro(cls)[1:])


class SuperProxy:
    """What super() gives: attributes looked up in ``rest`` (the MRO after the method's
    class), bound to the object."""

    def __init__(self, obj, rest: list) -> None:
        self.obj, self.rest = obj, rest

    def py_method(self, ev, node, name, args, kw):
        found = pymro.attr_in(self.rest, name)
        if name == "__init__" and not isinstance(found, UserFunction):
            return None  # (a builtin base was set up when the object was made)
        if found is None:
            raise PyException.error("AttributeError", f"'super' object has no attribute "
                                                      f"'{name}'")
        return pycalls.call_value(ev, node, pydunder.bind_attr(found, self.obj, ev, node),
                                  args, kw)


def _iter_next(ev, node, args, kw):
    it = args[0]
    if isinstance(it, list) or hasattr(it, "__next__") and hasattr(it, "py_iterator"):
        try:
            return it.pop(0) if isinstance(it, list) else next(it)
        except (IndexError, StopIteration):
            if len(args) > 1:  # (next(it, default))
                return args[1]
            raise PyException.error("StopIteration", "") from None
    raise DdxTypeError(f"'{type_label(it)}' object is not an iterator")


def _iter(ev, node, args, kw):
    found = iterate(ev, args[0], node)
    return found if hasattr(found, "py_iterator") else list(found)


def _callable(ev, node, args, kw):
    return isinstance(args[0], (UserFunction, UserClass, Native, pyvalues.BoundMethod))


def _any_all(pick):
    def call(ev, node, args, kw):
        truths = (pyvalues.python_truth(x) for x in iterate(ev, args[0], node))
        return any(truths) if pick == "any" else all(truths)
    return call


def _divmod(ev, node, args, kw):
    a, b = _num(args[0]), _num(args[1])
    q, r = divmod(a, b)
    return (weak(q), weak(r))


def _printf(ev, node, args, kw):
    """Java's System.out.printf (the seed's Java listings): %s as Python's str (a tensor's
    repr), %b as Java's true/false, %d, %f and %.Nf, %n a newline, %% a percent sign."""
    fmt, *values = args
    if not isinstance(fmt, str):
        raise DdxTypeError("printf() takes a format string first")
    out, k, i = [], 0, 0
    spec = re.compile(r"%(-?\d*(?:\.\d+)?)([sbdfxneg%])")
    for m in spec.finditer(fmt):
        out.append(fmt[i:m.start()])
        i = m.end()
        flag, conv = m.group(1), m.group(2)
        if conv == "n":
            out.append("\n")
            continue
        if conv == "%":
            out.append("%")
            continue
        value = values[k]
        k += 1
        if conv == "b":
            text = "true" if pyvalues.python_truth(value) else "false"
            out.append(f"%{flag}s" % text)
        elif conv == "s":  # (Java's null for None: an undefined grad; a 0-d tensor as its
            # number, as the chapter shows its output)
            out.append(f"%{flag}s" % ("null" if value is None else
                                      pyvalues.format_value(ev, value, None, "")))
        else:
            out.append(f"%{flag}{conv}" % _num(value))
    out.append(fmt[i:])
    return _print(ev, node, ["".join(out)], {"end": ("", None)})


class TensorOptions(dict):
    """JavaCPP's TensorOptions builder (the seed's Java): each setter returns the options;
    dtype and requires_grad reach tensor() as its keyword arguments."""

    def py_method(self, ev, node, name, args, kw):
        if name in ("dtype", "requires_grad") and args:
            self[name] = args[0]
        elif name not in ("layout", "device", "memory_format", "pinned_memory"):
            raise DdxTypeError(f"TensorOptions has no method '{name}'")
        return self


def _pow(ev, node, args, kw):
    if len(args) == 3:  # pow(base, exp, mod): Python's, on ints
        b, e, m = (_num(a) for a in args)
        if not all(isinstance(v, int) for v in (b, e, m)):
            raise DdxTypeError("pow() 3rd argument not allowed unless all arguments are "
                               "integers")
        return weak(pow(b, e, m))
    return pyvalues.binary(ev, node, "**", args[0], args[1])


_PLAIN = {
    "print": _print, "len": _len, "range": _range, "enumerate": _enumerate, "zip": _zip,
    "list": _list, "tuple": _tuple, "dict": _dict, "str": _str, "bool": _bool,
    "float": _float, "int": _int, "repr": _repr, "isinstance": _isinstance, "sorted": pyorder.sorted_,
    "reversed": lambda ev, node, args, kw: list(reversed(list(iterate(ev, args[0], node)))),
    "map": _map, "filter": _filter, "super": _super, "type": _type, "next": _iter_next,
    "iter": _iter,
    "callable": _callable, "any": _any_all("any"), "all": _any_all("all"),
    "divmod": _divmod, "pow": _pow, "printf": _printf,
    "TensorOptions": lambda ev, node, args, kw: TensorOptions(),
    "staticmethod": lambda ev, node, args, kw: pydunder.method_kind(args[0], "static"),
    "property": lambda ev, node, args, kw: pydunder.Property(args[0]),
    "classmethod": lambda ev, node, args, kw: pydunder.method_kind(args[0], "class"),
    "hasattr": lambda ev, node, args, kw: _hasattr(ev, node, args),
}


def _hasattr(ev, node, args) -> bool:
    obj, name = args
    if not isinstance(name, str) or name.startswith("__"):
        return False
    from ..lang.tree import Ast

    attr = Ast("attr", str(name), (), (), node.start, node.end, node.pos)
    try:  # (the surface's lookup: tensors' and grad_fn nodes' attributes too)
        return ev.surface.get_attr(ev, attr, obj) is not NotImplemented
    except Exception:  # noqa: BLE001 - hasattr is False on any error, as Python's
        return False


def _getattr(ev, node, args, kw):
    """getattr(obj, name[, default]): the attribute as ``obj.name`` reads it; a dunder name is
    refused, as ``obj.__dict__`` is."""
    if kw or len(args) not in (2, 3):
        raise DdxTypeError(f"getattr expected 2 or 3 arguments, got {len(args) + len(kw)}")
    obj, name = args[0], args[1]
    if not isinstance(name, str):
        raise DdxTypeError("attribute name must be string, not "
                           f"'{type_label(name)}'")
    if name.startswith("__") and name != "__name__":
        raise DdxTypeError(f"'{name}' is not available in ddx (no dunder attributes)",
                           start=node.pos, end=node.end)
    from ..lang.tree import Ast

    attr = Ast("attr", str(name), (), (), node.start, node.end, node.pos)
    if len(args) == 2:
        return ev.surface.get_attr(ev, attr, obj)
    try:
        return ev.surface.get_attr(ev, attr, obj)
    except DdxTypeError as exc:  # (an AttributeError: the default)
        if "has no attribute" not in exc.message:
            raise
        return args[2]


BUILTINS: dict[str, Any] = {name: Native(name, fn) for name, fn in _PLAIN.items()}
BUILTINS.update({
    "sum": Native("sum", _op_or_python("sum", pyorder.sum_)),
    "max": Native("max", _op_or_python("max", pyorder.extreme("max"))),
    "min": Native("min", _op_or_python("min", pyorder.extreme("min"))),
    "abs": Native("abs", _op_or_python("abs", _py_abs)),
    "round": Native("round", _op_or_python("round", _py_round)),
    "getattr": Native("getattr", _getattr),
    "object": pyvalues.OBJECT,
    "set": Native("set", pysets.make),
    **EXCEPTIONS,
})
# print stays the REPL's own (sep=, end=), any/all Python's (a bool, also of a tensor); the ddx ops
# sum/max/min/abs/round win in calls by
# name only through these wrappers, looked up before the op table (surface.builtin)
OVERRIDES = frozenset(("print", "sum", "max", "min", "abs", "round", "printf", "any", "all", "pow"))

__all__ = ["BUILTINS", "OVERRIDES", "math"]
