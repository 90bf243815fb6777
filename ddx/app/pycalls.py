"""Calling values in the REPL's Python: the user's functions (parameters bound as Python
binds them, a frame per call, at most MAX_DEPTH deep), classes, bound methods, exception types
and the functions ddx provides."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..graph import record
from ..graph.values import Return
from ..lang.tree import Ast
from .pyerrors import ExceptionType, PyException, user_chain
from .pyvalues import (
    MAX_DEPTH,
    BoundMethod,
    Instance,
    Scope,
    UserClass,
    UserFunction,
    to_str,
    type_label,
)


# --- calls ------------------------------------------------------------------------------
def call_value(ev, node: Ast, fn: Any, args: list, kw: dict) -> Any:
    """Call a value: the user's functions and classes, bound methods, exception types, the
    builtins and modules' functions ddx provides (plain Python callables taking ``ev``)."""
    if isinstance(fn, UserFunction):
        return call_user(ev, node, fn, args, kw)
    if isinstance(fn, BoundMethod):
        return call_value(ev, node, fn.fn, [fn.obj, *args], kw)
    if isinstance(fn, UserClass):
        return instantiate(ev, node, fn, args, kw)
    if isinstance(fn, ExceptionType):
        text = " ".join(to_str(ev, a) for a in args) if len(args) != 1 else to_str(ev, args[0])
        return PyException(fn.name, text)
    native = getattr(fn, "py_call", None)
    if native is not None:
        return native(ev, node, args, kw)
    if callable(fn) and getattr(fn, "ddx_function", False):
        return fn(ev, node, args, kw)
    raise DdxTypeError(f"'{type_label(fn)}' object is not callable", start=node.pos,
                       end=node.end)


def call_user(ev, node: Ast, fn: UserFunction, args: list, kw: dict) -> Any:
    local = _bind_params(node, fn, args, kw)
    if len(ev.frames) >= MAX_DEPTH:
        raise PyException.error("RecursionError", "maximum recursion depth exceeded")
    outer_env, outer_program = ev.env, ev.program
    ev.env = Scope(local, fn.scope)
    ev.program = fn.program
    ev.frames.append(fn)
    before = record.GRAD_MODE.enabled
    if fn.grad_mode is not None:
        record.GRAD_MODE.enabled = fn.grad_mode
    try:
        if fn.expression:
            return ev.evaluate(fn.body)
        try:
            for stmt in fn.body:
                ev.run_inner(stmt)
        except Return as ret:
            return ret.value
        return None
    finally:
        record.GRAD_MODE.enabled = before
        ev.frames.pop()
        ev.env, ev.program = outer_env, outer_program


def _qualname(fn: UserFunction) -> str:
    """The name Python's messages give a function: its __qualname__ (``Net.forward``,
    ``<lambda>``)."""
    name = "<lambda>" if fn.name == "lambda" else fn.name
    owner = getattr(fn, "owner", None)
    return f"{owner.name}.{name}" if owner is not None else name


def _bind_params(node: Ast, fn: UserFunction, args: list, kw: dict) -> dict:
    local: dict = {}
    rest = list(args)
    extra_kw = dict(kw)
    names = {p.name for p in fn.params if p.kind == "pos"}
    if not any(p.kind == "kwstar" for p in fn.params):
        for key in kw:
            if key not in names:
                raise DdxTypeError(f"{_qualname(fn)}() got an unexpected keyword argument '{key}'",
                                   start=node.pos, end=node.end)
    star = kwstar = None
    for p in fn.params:
        if p.kind == "kwonly":  # def f(a, *, b): no more positional parameters
            star = "*"
            if rest:
                break
        elif p.kind == "star":
            star = p.name
            local[p.name] = tuple(rest)
            rest = []
        elif p.kind == "kwstar":
            kwstar = p.name
        elif rest and star is None:
            local[p.name] = rest.pop(0)
            if p.name in extra_kw:
                raise DdxTypeError(f"{_qualname(fn)}() got multiple values for argument '{p.name}'",
                                   start=node.pos, end=node.end)
        elif p.name in extra_kw:
            local[p.name] = extra_kw.pop(p.name)[0]
        elif p.name in fn.defaults:
            local[p.name] = fn.defaults[p.name]
        elif star is not None:
            raise DdxTypeError(f"{_qualname(fn)}() missing 1 required keyword-only argument: "
                               f"'{p.name}'", start=node.pos, end=node.end)
        else:
            raise DdxTypeError(f"{_qualname(fn)}() missing 1 required positional argument: "
                               f"'{p.name}'", start=node.pos, end=node.end)
    if rest:
        given = len(args)
        kinds = [p.kind for p in fn.params]
        cut = min([kinds.index(k) for k in ("star", "kwonly") if k in kinds] or [len(kinds)])
        takes = len([k for k in kinds[:cut] if k == "pos"])
        raise DdxTypeError(f"{_qualname(fn)}() takes {takes} positional argument"
                           f"{'s' if takes != 1 else ''} but {given} "
                           f"{'was' if given == 1 else 'were'} given",
                           start=node.pos, end=node.end)
    if extra_kw:
        if kwstar is None:
            name = next(iter(extra_kw))
            raise DdxTypeError(f"{_qualname(fn)}() got an unexpected keyword argument '{name}'",
                               start=node.pos, end=node.end)
        local[kwstar] = {k: v for k, (v, _) in extra_kw.items()}
    elif kwstar is not None:
        local[kwstar] = {}
    return local


def instantiate(ev, node: Ast, cls: UserClass, args: list, kw: dict) -> Any:
    if user_chain(cls)[1] and cls.lookup("__init__") is None:  # class MyError(ValueError)
        text = " ".join(to_str(ev, a) for a in args) if len(args) != 1 else to_str(ev, args[0])
        return PyException(cls.name, text, user_class=cls)
    obj = Instance(cls)
    base = next((b for b in _all_bases(cls) if hasattr(b, "init_instance")), None)
    if base is not None:
        base.init_instance(obj)
    init = cls.lookup("__init__")
    if isinstance(init, UserFunction):
        call_user(ev, node, init, [obj, *args], kw)
    elif args or kw:
        raise DdxTypeError(f"{cls.name}() takes no arguments", start=node.pos, end=node.end)
    return obj


def _all_bases(cls: UserClass) -> list:
    out, stack = [], list(cls.bases)
    while stack:
        b = stack.pop()
        out.append(b)
        if isinstance(b, UserClass):
            stack.extend(b.bases)
    return out
