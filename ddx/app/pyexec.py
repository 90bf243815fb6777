"""The REPL's Python statements, interpreted by ddx (no eval/exec/compile): if/while/for,
def/return, class, try/except/finally, raise/assert, import/from, augmented assignment, del,
global, break/continue/pass. The Evaluator hands every statement kind it does not know here
(through its surface). Blocks nest at most as deep as the parser allows, and calls of the
user's own functions at most MAX_DEPTH deep, so Python's own stack is never at risk."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxError, DdxNameError, DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from ..graph.values import Break, Continue, NoGrad, Return
from ..lang.tree import Ast
from . import pycalls, pydunder, pymodules, pymro, pysetitem, pysets, pyvalues
from .methods import TENSOR_METHODS, check_in_place
from .pyvalues import (
    PyException,
    UserClass,
    UserFunction,
    exception_matches,
    iterate,
)


def run_block(ev, stmts: list) -> Any:
    result = None
    for stmt in stmts:
        result = ev.run_inner(stmt)
    return result


def _if(ev, stmt) -> Any:
    for cond, body in stmt.extra["branches"]:
        if pydunder.truth(ev, cond, ev.evaluate(cond)):
            return run_block(ev, body)
    return run_block(ev, stmt.extra["else"])


def _body(ev, stmt) -> bool:
    """One pass of a loop's body; False when it breaks out (continue just ends the pass)."""
    try:
        run_block(ev, stmt.body)
    except Break:
        return False
    except Continue:
        pass
    return True


def _while(ev, stmt) -> Any:
    while pydunder.truth(ev, stmt.value, ev.evaluate(stmt.value)):
        if not _body(ev, stmt):
            return None
    return run_block(ev, stmt.extra["else"])


def _for(ev, stmt) -> Any:
    for item in iterate(ev, ev.evaluate(stmt.value), stmt.value):
        pyvalues.bind(ev, stmt.target, item)
        if not _body(ev, stmt):
            return None
    return run_block(ev, stmt.extra["else"])


GRAD_DECORATORS = ("no_grad", "enable_grad", "inference_mode")


def _def(ev, stmt) -> Any:
    extra = stmt.extra
    defaults = {p.name: ev.evaluate(p.default) for p in extra["params"] if p.default is not None}
    fn = UserFunction(extra["name"], extra["params"], defaults, stmt.body, ev.env,
                      ev.program, expression=False)
    value: Any = fn
    for deco in reversed(extra["decorators"]):
        d = ev.evaluate(deco)
        if isinstance(d, pymodules.Native) and d.name in GRAD_DECORATORS:
            d = pycalls.call_value(ev, deco, d, [], {})  # (@torch.no_grad: no_grad())
        if isinstance(d, NoGrad):
            fn.grad_mode = getattr(d, "grad_enabled", False)
            if fn.grad_mode is None:
                fn.grad_mode = False
        elif isinstance(d, pymodules.GradContext):  # (enable_grad(), set_grad_enabled(b))
            fn.grad_mode = d.grad_enabled
            if getattr(d, "prev", None) is not None:
                record.GRAD_MODE.enabled = d.prev
        else:
            value = pycalls.call_value(ev, deco, d, [value], {})
    pyvalues.bind_name(ev, extra["name"], value)
    return None


def _class(ev, stmt) -> Any:
    extra = stmt.extra
    bases = [ev.evaluate(b) for b in extra["bases"]]
    outer = ev.env
    scope = ev.env = pyvalues.Scope({}, outer)  # the class body's names are its attributes
    try:
        run_block(ev, stmt.body)
    finally:
        ev.env = outer
    cls = UserClass(extra["name"], bases, dict(scope))
    try:
        pymro.mro(cls)
    except pymro.MroError as exc:
        raise PyException.error("TypeError", str(exc)) from None
    for value in cls.scope.values():  # (a method's super() starts after its own class)
        fn = getattr(value, "fn", value)  # (a @property's function too)
        if isinstance(fn, UserFunction):
            fn.owner = cls
    pyvalues.bind_name(ev, extra["name"], cls)
    return None


def _try(ev, stmt) -> Any:
    extra = stmt.extra
    try:
        try:
            run_block(ev, stmt.body)
        except (Break, Continue, Return):
            raise
        except (DdxError, ValueError, IndexError, ArithmeticError) as caught:
            exc = caught if isinstance(caught, DdxError) else _foreign(caught)
            for kind, name, body in extra["handlers"]:
                wanted = ev.evaluate(kind) if kind is not None else None
                if wanted is None or exception_matches(exc, wanted):
                    if name is not None:
                        pyvalues.bind_name(ev, name, PyException.of(exc))
                    before = getattr(ev, "handling", None)
                    ev.handling = exc  # (a bare raise in the handler raises it again)
                    try:
                        run_block(ev, body)
                    finally:
                        ev.handling = before
                    break
            else:
                raise
        else:
            run_block(ev, extra["else"])
    finally:
        run_block(ev, extra["finally"])
    return None


def _foreign(exc: Exception) -> DdxError:
    """numpy's refusal inside a try (an integer to a negative power, indexes that do not
    broadcast): PyTorch's RuntimeError, or IndexError, with numpy's words."""
    err = DdxRuntimeError(str(exc) or type(exc).__name__)
    if isinstance(exc, IndexError):
        err.python_kind = "IndexError"
    return err


def _break(ev, stmt) -> Any:
    raise Break()


def _continue(ev, stmt) -> Any:
    raise Continue()


def _return(ev, stmt) -> Any:
    raise Return(ev.evaluate(stmt.value) if stmt.value is not None else None)


def _raise(ev, stmt) -> Any:
    if stmt.value is None:
        current = getattr(ev, "handling", None)
        raise current if current is not None else DdxRuntimeError(
            "No active exception to reraise")
    value = ev.evaluate(stmt.value)
    raise pyvalues.as_error(value)


def _assert(ev, stmt) -> Any:
    if not pydunder.truth(ev, stmt.value, ev.evaluate(stmt.value)):
        msg = stmt.extra["message"]
        text = pyvalues.to_str(ev, ev.evaluate(msg)) if msg is not None else ""
        raise PyException.error("AssertionError", text)
    return None


def _del(ev, stmt) -> Any:
    targets = stmt.value.kids if stmt.value.kind == "tuple" else (stmt.value,)
    for target in targets:
        if target.kind == "attr":  # (del obj.name)
            from .pyattrs import del_attr

            del_attr(ev, target, ev.evaluate(target.kids[0]), target.value)
            continue
        if target.kind == "index":  # (del lst[0], del d["k"])
            pysetitem.delete_item(ev, target)
            continue
        if target.kind != "name":
            raise DdxTypeError("del takes names here", start=target.start, end=target.end)
        if target.value not in ev.env:
            raise DdxNameError(f"name '{target.value}' is not defined", start=target.start,
                               end=target.end)
        pyvalues.unbind_name(ev, target.value)
    return None


def _global(ev, stmt) -> Any:
    env = ev.env
    if isinstance(env, pyvalues.Scope):
        env.globals_named.update(stmt.extra["names"])
    return None


def _import(ev, stmt) -> Any:
    for (path, start, end), alias in stmt.extra["modules"]:
        module = pymodules.find(path, start, end)
        if alias is not None:
            pyvalues.bind_name(ev, alias, module)
        else:  # import torch.nn: binds torch
            top = path.split(".")[0]
            pyvalues.bind_name(ev, top, pymodules.find(top, start, end))
    return None


def _from(ev, stmt) -> Any:
    path, start, end = stmt.extra["module"]
    module = pymodules.find(path, start, end)
    names = stmt.extra["names"]
    if names == "*":
        for name, value in pymodules.members(module).items():
            pyvalues.bind_name(ev, name, value)
        return None
    for name, alias in names:
        try:
            value = pymodules.member(ev, module, name, path, start, end)
        except DdxError as exc:  # (Python's ImportError; ddx's own words where it has them)
            if getattr(exc, "python_kind", None) == "AttributeError" and \
                    exc.message.startswith("module '"):
                raise PyException.error("ImportError", f"cannot import name '{name}' from "
                                        f"'{path}'") from None
            raise
        pyvalues.bind_name(ev, alias or name, value)
    return None


def _augassign(ev, stmt) -> Any:
    op = stmt.extra["op"]
    target = stmt.target
    current = ev.evaluate(target)
    other = ev.evaluate(stmt.value)
    if isinstance(current, list) and op == "+":
        current.extend(iterate(ev, other, stmt.value))
        return None
    if type(current) is set and isinstance(other, (set, frozenset)) and op in "|&-":
        pysets.update_in_place(ev, current, op, other)  # (s |= t changes s, as Python's)
        return None
    if isinstance(current, Tensor) and not current.weak and op in "+-*/" and len(op) == 1:
        recorded = record.GRAD_MODE.enabled and (current.requires_grad or isinstance(
            other, Tensor) and other.requires_grad)
        if target.kind == "name" or target.kind == "attr" and not recorded:
            return _iadd(ev, stmt, current, op, other)  # (t += v is t.add_(v): aliases see
            # it, its version goes up, a copy a node saved is stale)
        if _in_place(ev, stmt, current, op, other):  # (Python's v[i] += 1 stores the item
            ev.assign(target, current)  # back: an item of a 1-d tensor is no view of it)
            return None
    result = pyvalues.binary(ev, stmt, op, current, other)
    pyvalues.bind(ev, target, result, python=False)
    return None


def _iadd(ev, stmt, t: Tensor, op: str, other: Any) -> None:
    """``t += v``, ``-=``, ``*=``, ``/=``: Tensor.__iadd__ and its kin, the methods add_,
    sub_, mul_ and div_ (ddx/app/pyinplace.py)."""
    name = {"+": "add_", "-": "sub_", "*": "mul_", "/": "div_"}[op]
    node = Ast("method", name, (), (), stmt.start, stmt.end, stmt.start)
    TENSOR_METHODS[name](ev, node, t, [other], {})
    return None


def _in_place(ev, stmt, t: Tensor, op: str, other: Any) -> bool:
    """``t += v`` on a tensor changes it in place, as PyTorch does: refused on a leaf that
    requires grad while grad mode is on; else its values change, and every name that holds
    it sees the change. A non-leaf in grad mode is recorded as the out-of-place op (False)."""
    if t.requires_grad and record.GRAD_MODE.enabled:
        check_in_place(t)  # (a leaf, or a view of one: PyTorch's errors)
        return False
    value = other.value if isinstance(other, Tensor) else np.asarray(other)
    with np.errstate(all="ignore"):
        new = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}[op](
            t.value, value)
    if np.shape(new) != t.value.shape:
        raise DdxRuntimeError(f"output with shape {list(t.value.shape)} doesn't match the "
                              f"broadcast shape {list(np.shape(new))}")
    if t.value.dtype.kind in "iub" and np.asarray(new).dtype.kind == "f":
        raise DdxRuntimeError(f"result type Float can't be cast to the desired output type "
                              f"{pyvalues.torch_type_name(t.value.dtype)}")
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    if not t.value.flags.writeable:
        t.value = np.array(t.value)
    t.value[...] = new
    return True


HANDLERS = {
    "if": _if, "while": _while, "for": _for, "def": _def, "class": _class, "try": _try,
    "return": _return, "raise": _raise, "assert": _assert, "del": _del, "global": _global,
    "import": _import, "from": _from, "augassign": _augassign,
    "pass": lambda ev, stmt: None, "break": _break, "continue": _continue,
}


def run_stmt(ev, stmt) -> Any:
    """One statement the expression language does not have (the Evaluator's surface hook);
    a stray break/continue/return is reported by the Evaluator's run_stmt."""
    handler = HANDLERS.get(stmt.kind)
    if handler is None:
        raise DdxTypeError(f"cannot run a '{stmt.kind}' statement")
    return handler(ev, stmt)
