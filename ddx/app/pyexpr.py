"""The REPL's Python expressions (the Evaluator hands them to its surface): lambdas,
conditional and boolean expressions, ``not``, f-strings, comprehensions, dicts and sets, ``*``
in calls; and attributes and methods of Python values (lists, dicts, strings, the user's
objects, modules)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..errors import DdxTypeError, DdxValueError
from ..graph.tensor import Tensor
from ..graph.values import Starred
from ..lang.tree import Ast
from . import (
    pycalls,
    pydisplay,
    pydunder,
    pyformat,
    pymodules,
    pymro,
    pyorder,
    pysets,
    pyvalues,
)
from .pyerrors import ExceptionType
from .pyvalues import (
    Instance,
    UserClass,
    UserFunction,
    iterate,
    number_of,
    to_str,
    type_label,
)
from .values import DictView, PyType, Str

MAX_NESTING = 100  # lazily evaluated parts (x if c else y, and/or) nested this deep at most


def compound(ev, node: Ast, values: list) -> Any:
    kind = node.kind
    if kind == "star" or kind == "dstar":
        return Starred(values[0], kind == "dstar")
    if kind == "fstr":
        return pyvalues.fstring(ev, node)
    if kind == "walrus":
        return pydisplay.walrus(ev, node.value, values[0])
    if kind == "dict":
        return pydisplay.dict_display(values)
    if kind == "set":
        return {_key(v) for v in values}
    if kind == "not":
        return not pydunder.truth(ev, node, values[0])
    if kind == "lambda":
        params, body = node.value
        defaults = dict(zip([p.name for p in params if p.default is not None], values))
        return UserFunction("<lambda>", params, defaults, body, ev.env, ev.program,
                            expression=True)
    depth = ev.frames_lazy = getattr(ev, "frames_lazy", 0) + 1
    try:
        if depth > MAX_NESTING:
            raise DdxValueError("expression nested too deeply", start=node.start, end=node.end)
        if kind == "ifexp":
            then, orelse = node.value
            return ev.evaluate(then if pydunder.truth(ev, node, values[0]) else orelse)
        if kind == "boolop":
            op, right = node.value
            left = values[0]
            if (op == "and") != pydunder.truth(ev, node, left):
                return left
            return ev.evaluate(right)
        if kind == "comp":
            return _comprehension(ev, node, values[0])
    finally:
        ev.frames_lazy -= 1
    raise DdxTypeError(f"cannot evaluate {kind}")  # pragma: no cover - grammar's kinds only


_key = pysets.member  # (a dict key or set item: 2 and 2.0 are one key, as in Python)


def _comprehension(ev, node: Ast, iterable: Any) -> Any:
    """A comprehension's loops, nested left to right (one iterator per ``for`` clause on an
    explicit stack); its variables are its own."""
    kind, expr, target, _, conds, more = node.value
    clauses = [(target, None, conds), *more]
    out: list = []
    outer = ev.env
    ev.env = pyvalues.Scope({}, outer)  # (its own scope: a lambda made in it keeps it)
    ev.env.comprehension = True
    end = object()
    try:
        loops = [iter(iterate(ev, iterable, node))]
        while loops:
            item = next(loops[-1], end)
            if item is end:
                loops.pop()
                continue
            tgt, _, tests = clauses[len(loops) - 1]
            pyvalues.bind(ev, tgt, item)
            if not all(pydunder.truth(ev, c, ev.evaluate(c)) for c in tests):
                continue
            if len(loops) < len(clauses):
                loops.append(iter(iterate(ev, ev.evaluate(clauses[len(loops)][1]), node)))
            elif kind == "dict":
                out.append((_key(ev.evaluate(expr[0])), ev.evaluate(expr[1])))
            else:
                out.append(ev.evaluate(expr))
    finally:
        ev.env = outer
    if kind == "set":
        return {_key(v) for v in out}
    return dict(out) if kind == "dict" else out


# --- attributes and methods of Python values --------------------------------------------
def _list_method(ev, node, obj: list, name: str, args: list, kw: dict) -> Any:
    if name == "append" and len(args) == 1:
        _journal(ev, obj)
        obj.append(args[0])
        return None
    if name == "extend" and len(args) == 1:
        _journal(ev, obj)
        obj.extend(iterate(ev, args[0], node))
        return None
    if name == "pop":
        _journal(ev, obj)
        if not obj:
            raise pyvalues.PyException.error("IndexError", "pop from empty list")
        return obj.pop(int(number_of(args[0])) if args else -1)
    if name == "insert" and len(args) == 2:
        _journal(ev, obj)
        obj.insert(int(number_of(args[0])), args[1])
        return None
    if name == "clear":
        _journal(ev, obj)
        obj.clear()
        return None
    if name == "copy":
        return list(obj)
    if name == "index" and args:
        return pyvalues.weak(_index_of(obj, args[0]))
    if name == "count" and args:
        return pyvalues.weak(sum(1 for x in obj if _same(x, args[0])))
    if name == "reverse":
        _journal(ev, obj)
        obj.reverse()
        return None
    if name == "sort":
        _journal(ev, obj)
        pyorder.sort_list(ev, node, obj, args, kw)
        return None
    if name == "remove" and len(args) == 1:
        _journal(ev, obj)
        i = next((i for i, x in enumerate(obj) if _same(x, args[0])), None)
        if i is None:
            raise pyvalues.PyException.error("ValueError", "list.remove(x): x not in list")
        del obj[i]
        return None
    raise _no_attribute("list", name)


def _journal(ev, obj: list) -> None:
    """A list changed in place: undone with the statement if it fails."""
    if ev.journal is not None:
        old = list(obj)
        ev.journal.undo.append((_refill_list, obj, old, None))


def _refill_list(obj: list, old: list, _: Any) -> None:
    obj[:] = old


def _refill_dict(obj: dict, old: dict, _: Any) -> None:
    obj.clear()
    obj.update(old)


def _same(a: Any, b: Any) -> bool:
    na, nb = number_of(a), number_of(b)
    if na is not None and nb is not None:
        return na == nb
    return a is b or (isinstance(a, str) and a == b)


def _index_of(obj: list, value: Any) -> int:
    for i, x in enumerate(obj):
        if _same(x, value):
            return i
    raise pyvalues.PyException.error("ValueError", "value is not in list")


def _dict_method(ev, node, obj: dict, name: str, args: list, kw: dict) -> Any:
    prefix = "odict_" if isinstance(obj, OrderedDict) else "dict_"
    if name == "items":
        return DictView([(k, v) for k, v in obj.items()], prefix + "items")
    if name == "keys":
        return DictView(list(obj), prefix + "keys")
    if name == "values":
        return DictView(list(obj.values()), prefix + "values")
    if name == "get" and args:
        return obj.get(_key(args[0]), args[1] if len(args) > 1 else None)
    if name in ("update", "clear", "popitem"):
        if ev.journal is not None:
            ev.journal.undo.append((_refill_dict, obj, dict(obj), None))
        if name == "update":  # (d.update(other, k=v))
            obj.update(*args, **{k: v for k, (v, _) in kw.items()})
            return None
        if name == "clear":
            obj.clear()
            return None
        if not obj:
            raise pyvalues.PyException.error("KeyError", "'popitem(): dictionary is empty'")
        return obj.popitem()
    if name == "pop" and args:
        return obj.pop(_key(args[0]), *args[1:2])
    if name == "setdefault" and args:
        return obj.setdefault(_key(args[0]), args[1] if len(args) > 1 else None)
    if name == "copy" and not args:
        return dict(obj)
    raise _no_attribute("dict", name)


# the methods of lists, dicts and strings that ``obj.name`` gives as a value (key=d.get)
BOUND = {list: ("append", "extend", "pop", "insert", "clear", "copy", "index", "count",
                "reverse", "sort", "remove"),
         dict: ("items", "keys", "values", "get", "update", "pop", "setdefault", "copy",
                "clear", "popitem"),
         set: pysets.NAMES,
         str: ("format", "join", "upper", "lower", "strip", "split", "startswith", "endswith",
               "replace", "find", "count", "title", "capitalize", "isdigit")}


class PyMethod:
    """A list's, dict's or string's method as a value (``key=d.get``, ``map(s.upper, ...)``)."""

    def __init__(self, obj: Any, name: str) -> None:
        self.obj, self.name = obj, name

    def __repr__(self) -> str:
        return f"<built-in method {self.name}>"

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        return call_method(ev, node, self.obj, self.name, args, kw)


def _str_method(ev, node, obj: str, name: str, args: list, kw: dict) -> Any:
    if name == "format":
        return Str(pyformat.str_format(ev, node, obj, args, kw))
    if name == "join" and len(args) == 1:
        return Str(obj.join(to_str(ev, x) for x in iterate(ev, args[0], node)))
    plain = {"upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "split",
             "startswith", "endswith", "replace", "center", "ljust", "rjust", "zfill",
             "splitlines", "find", "count", "isdigit", "partition", "rpartition", "rfind",
             "rsplit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isnumeric",
             "swapcase", "casefold", "removeprefix", "removesuffix", "index", "rindex"}
    if name in plain:
        raw = [to_str(ev, a) if isinstance(a, str) else int(number_of(a)) for a in args]
        try:
            got = getattr(str, name)(obj, *raw)
        except ValueError as exc:  # ("ab".index("z"): substring not found)
            raise pyvalues.PyException.error("ValueError", str(exc)) from None
        if isinstance(got, list):
            return [Str(x) for x in got]
        if isinstance(got, tuple):
            return tuple(Str(x) for x in got)
        if isinstance(got, bool):
            return got
        return Str(got) if isinstance(got, str) else pyvalues.weak(got)
    raise _no_attribute("str", name)


def _no_attribute(kind: str, name: str):
    return pyvalues.PyException.error("AttributeError",
                                      f"'{kind}' object has no attribute '{name}'")


def call_method(ev, node: Ast, obj: Any, name: str, args: list, kw: dict) -> Any:
    """obj.name(...) for Python values; NotImplemented for the rest (tensors, grad_fns)."""
    native = getattr(obj, "py_method", None)
    if native is not None:
        return native(ev, node, name, args, kw)
    if isinstance(obj, list):
        return _list_method(ev, node, obj, name, args, kw)
    if isinstance(obj, dict):
        return _dict_method(ev, node, obj, name, args, kw)
    if isinstance(obj, str):
        return _str_method(ev, node, obj, name, args, kw)
    if isinstance(obj, set):
        return pysets.method(ev, node, obj, name, args, kw)
    if type(obj) is tuple and name in ("count", "index") and len(args) == 1:
        items = [number_of(x) if number_of(x) is not None else x for x in obj]
        want = number_of(args[0]) if number_of(args[0]) is not None else args[0]
        if name == "count":
            return sum(1 for x in items if x is want or x == want)
        if want not in items:
            raise pyvalues.PyException.error("ValueError", "tuple.index(x): x not in tuple")
        return items.index(want)
    if isinstance(obj, (Instance, UserClass, pymodules.PyModule)):
        return pycalls.call_value(ev, node, get_attr(ev, node, obj, name), args, kw)
    return NotImplemented


def get_attr(ev, node: Ast, obj: Any, name: str) -> Any:
    if name == "__name__":  # (a name ddx gave: type(e).__name__, f.__name__, cls.__name__)
        named = _name_of(obj)
        if named is not None:
            return Str(named)
    if name == "__class__" and isinstance(obj, Instance):  # (self.__class__.__name__)
        return obj.cls
    if name == "__init__" and isinstance(obj, (Instance, UserClass)):  # (Base.__init__(self))
        cls = obj if isinstance(obj, UserClass) else obj.cls
        found = cls.lookup("__init__")
        if isinstance(found, UserFunction):
            return pydunder.bind_attr(found, obj)
    if name.startswith("__") and name.endswith("__"):
        raise pyvalues.PyException.error("AttributeError",
                                         f"'{type_label(obj)}' attribute '{name}' is not "
                                         "available in ddx")
    if isinstance(obj, pymodules.PyModule):
        return pymodules.member(ev, obj, name)
    if isinstance(obj, Instance):
        if name in obj.attrs:
            return obj.attrs[name]
        found = obj.cls.lookup(name)
        if isinstance(found, pydunder.Property):  # @property: the method's value
            return pycalls.call_value(ev, node, found.fn, [obj], {})
        if found is not None:
            return pydunder.bind_attr(found, obj)
        raise _no_attribute(obj.cls.name, name)
    if isinstance(obj, UserClass):
        for base in pymro.mro(obj)[1:]:  # (a builtin base's class-bound attribute:
            # Function.apply, also of a subclass of a user's Function)
            hook = getattr(base, "bound_class_attr", None)
            got = hook(obj, name) if hook is not None else None
            if got is not None:
                return got
        found = obj.lookup(name)
        if found is None:
            raise pyvalues.PyException.error(
                "AttributeError", f"type object '{obj.name}' has no attribute '{name}'")
        return pydunder.bind_attr(found, obj)
    if isinstance(obj, pyvalues.PyException):
        if name == "args":
            return (Str(obj.message),)
    native = getattr(obj, "py_attr", None)
    if native is not None:
        return native(ev, node, name)
    for kind, names in BOUND.items():
        if isinstance(obj, kind) and name in names:
            return PyMethod(obj, name)
    return NotImplemented


def set_attr(ev, node: Ast, obj: Any, name: str, value: Any) -> bool:
    hook = getattr(obj, "py_setattr", None)
    if hook is not None and not isinstance(obj, Instance):  # (a custom Function's ctx)
        hook(name, value)
        return True
    if isinstance(obj, Instance):
        hook = getattr(obj, "on_set", None)
        if hook is not None:
            hook(name, value)
        if ev.journal is not None:
            ev.journal.bind(obj.attrs, name, value)
        else:
            obj.attrs[name] = value
        return True
    if isinstance(obj, UserClass):  # Point.count += 1: a class attribute
        if name.startswith("__"):
            raise DdxTypeError(f"cannot set '{name}' on a class in ddx")
        if ev.journal is not None:
            ev.journal.bind(obj.scope, name, value)
        else:
            obj.scope[name] = value
        return True
    return False


__all__ = ["Tensor", "call_method", "compound", "get_attr", "set_attr"]


def _name_of(obj: Any) -> str | None:
    if isinstance(obj, PyType):
        return obj.short
    if isinstance(obj, (UserFunction, UserClass, ExceptionType)) or \
            getattr(obj, "is_class_value", False) or isinstance(obj, pymodules.Native):
        return obj.name  # (type(m).__name__ of an nn.Conv2d, torch.sin.__name__)
    return None
