"""Symbolic values: the op table's VJP rules run on them to give derivatives as formulas.

A ``Sym`` is a formula in ddx's language together with its value at the point in question.
numpy's protocols route every function a rule calls here (``__array_ufunc__``,
``__array_function__``); each ufunc is found in the op table (``ops.UFUNCS``) and written as
that row writes itself (``Op.text``, or ``name(args)``). Masks and comparisons are decided by
the values (the formula holds around this point), and a branch that is not taken, or a side of
``maximum`` that is not the larger one, drops out. So the local derivative of any row is
derived from its rules, never written down twice; the conditions a mask stood for are kept
(``Mask``, ``CONDITIONS``). Formulas are simplified as they are built:
numbers folded, ``0``/``1`` identities, ``x*x`` as ``x^2``. Printed formulas are valid ddx
input (``symbolic.text``)."""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from ..ops import OPS, UFUNCS
from .symtext import ATOM, Unsupported, formula_text, same

__all__ = ["ATOM", "Unsupported", "Sym", "Mask", "make", "name", "number", "lift", "text"]


class Sym(NDArrayOperatorsMixin):
    """A formula (``e``: a number, a name, or (row name, args, kw)) and its value ``v``."""

    __slots__ = ("e", "v")
    __array_priority__ = 100

    def __init__(self, e, v) -> None:
        self.e = e
        self.v = np.asarray(v)

    shape = property(lambda self: self.v.shape)
    ndim = property(lambda self: self.v.ndim)
    size = property(lambda self: self.v.size)
    dtype = property(lambda self: self.v.dtype)

    @property
    def T(self) -> Sym:  # noqa: N802 - numpy's name
        return self if self.v.ndim < 2 else make("transpose", (self,), {})

    def __getitem__(self, key) -> Sym:
        return Sym(self.e, self.v[key])  # (the same formula for every element)

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if method != "__call__":
            raise Unsupported(f"{ufunc.__name__}.{method}")
        out = kw.pop("out", None)
        if out is not None:  # in place (r *= k): the result, stored into the target
            target = out[0]
            # (a copy of the target as an operand: its formula must not contain itself)
            inputs = tuple(Sym(x.e, x.v) if x is target else x for x in inputs)
            result = self.__array_ufunc__(ufunc, method, *inputs, **kw)
            if not isinstance(target, Sym) or not isinstance(result, Sym):
                raise Unsupported("an in-place mask")
            target.e, target.v = result.e, result.v
            return target
        values = [x.v if isinstance(x, Sym) else np.asarray(x) for x in inputs]
        with np.errstate(all="ignore"):
            value = ufunc(*values)
        if value.dtype == np.bool_:  # a mask: decided by the values, its condition kept
            return _mask(ufunc, inputs, value)
        if any(isinstance(x, Mask) for x in inputs):  # g * (o > 0): the mask was consulted
            for x in inputs:
                if isinstance(x, Mask):
                    x.consult()
        if ufunc is np.matmul:
            return make("mm", tuple(inputs), {}, value)
        row = UFUNCS.get(ufunc)
        if row is None:
            raise Unsupported(ufunc.__name__)
        return make(row.name, tuple(inputs), {}, value)

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCS.get(func)
        if handler is None:
            raise Unsupported(func.__name__)
        return handler(*args, **kwargs)


def _value(x) -> np.ndarray:
    return x.v if isinstance(x, (Sym, Mask)) else np.asarray(x)


# --- masks: comparisons decided by the values, with the conditions they stand for -----------

CONDITIONS: list[str] | None = None  # set by a caller (formula.py) that wants them reported
_FLIP = {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "=="}
_COMPARE = dict(zip((np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
                     np.not_equal), _FLIP))


class Mask:
    """A comparison's bool array and the conditions it stands for (``x > 0``), reported to
    ``CONDITIONS`` only when a rule consults it."""

    __slots__ = ("v", "conds")

    def __init__(self, v, conds: tuple) -> None:
        self.v = np.asarray(v, dtype=bool)
        self.conds = conds

    __array__ = lambda self, dtype=None, copy=None: self.v if dtype is None else \
        self.v.astype(dtype)  # noqa: E731
    shape = property(lambda self: self.v.shape)

    def consult(self) -> None:
        if CONDITIONS is not None and (self.v.all() or not self.v.any()):
            for c in self.conds:
                if c not in CONDITIONS:
                    CONDITIONS.append(c)

    def _combine(self, other, fn, short: bool):
        o = other if isinstance(other, Mask) else Mask(other, ())
        v = fn(self.v, o.v)
        decided = [m for m in (self, o) if (m.v.all() if short else not m.v.any())]
        # (a & b false because a is: only a's condition counts; likewise a | b true)
        return Mask(v, decided[0].conds if decided else self.conds + o.conds)

    __and__ = __rand__ = lambda self, other: self._combine(other, np.logical_and, False)
    __or__ = __ror__ = lambda self, other: self._combine(other, np.logical_or, True)

    def __invert__(self):
        return Mask(~self.v, tuple(_negate(c) for c in self.conds))


def _negate(cond: str) -> str:
    op = next(o for o in (" >= ", " <= ", " == ", " != ", " > ", " < ") if o in cond)
    return cond.replace(op, f" {_FLIP[op.strip()]} ", 1)


def _mask(ufunc, inputs, value) -> Mask:
    sign = _COMPARE.get(ufunc)
    if sign is None or len(inputs) != 2 or all(_const(x) is not None for x in inputs) or \
            not (value.all() or not value.any()):
        return Mask(value, ())
    sign = sign if value.all() else _FLIP[sign]  # (x != 0 holds almost everywhere: unsaid)
    return Mask(value, () if sign == "!=" else (f"{text(inputs[0])} {sign} {text(inputs[1])}",))


def note(cond: str) -> None:  # a condition a simplification relied on (maximum's side)
    if CONDITIONS is not None and cond not in CONDITIONS:
        CONDITIONS.append(cond)


def _const(x):
    """The number a formula is, or None."""
    if isinstance(x, Sym):
        e = x.e
        return e if isinstance(e, float) else None
    arr = np.asarray(x)
    if arr.dtype.kind in "biuf" and (arr.ndim == 0 or (arr.size and np.all(arr == arr.flat[0]))):
        return float(arr.flat[0]) if arr.size else None
    return None


def number(v: float, shape=()) -> Sym:
    return Sym(float(v), np.full(shape, v, dtype=np.float64))


def name(text: str, value) -> Sym:  # a variable
    return Sym(text, value)

def lift(x) -> Sym:
    if isinstance(x, Sym):
        return x
    c = _const(x)
    if c is None:
        raise Unsupported("an array of different numbers")
    return Sym(c, np.asarray(x, dtype=np.float64))


def make(op_name: str, args: tuple, kw: dict, value=None) -> Sym:
    """Row ``op_name`` applied to ``args``, simplified."""
    if value is None:
        with np.errstate(all="ignore"):
            value = OPS[op_name].fn(*[_value(a) for a in args], **kw)
    value = np.asarray(value)
    consts = [_const(a) for a in args]
    if all(c is not None for c in consts):
        return Sym(float(value.flat[0]) if value.size else 0.0, value)
    simple = _simplify(op_name, args, consts, value)
    if simple is not None:
        return simple
    return Sym((op_name, tuple(lift(a) if not isinstance(a, Sym) else a for a in args), kw),
               value)


def _same(a, b) -> bool:
    return isinstance(a, Sym) and isinstance(b, Sym) and same(a.e, b.e)

def _with_value(x, value) -> Sym:
    return Sym(lift(x).e, value)

def _simplify(op_name: str, args: tuple, consts: list, value) -> Sym | None:
    """The identities that keep rules' formulas short (one operand is a number)."""
    if op_name == "mm":
        if any(c is not None and np.ndim(_value(a)) for a, c in zip(args, consts)):
            raise Unsupported("a matrix product with a constant matrix")
        return None
    if op_name == "mul":
        a, b = args
        ca, cb = consts
        if ca == 0 or cb == 0:
            return number(0.0, value.shape)
        if ca == 1:
            return _with_value(b, value)
        if cb == 1:
            return _with_value(a, value)
        if _same(a, b):
            return Sym(("pow_scalar", (a,), {"exponent": 2.0}), value)
        if isinstance(a, Sym) and isinstance(a.e, tuple):  # (c*u)*u is c*u^2, u^n*u is u^(n+1)
            kind, inner, kw = a.e
            if kind == "pow_scalar" and _same(inner[0], b):
                return Sym(("pow_scalar", inner, {"exponent": kw["exponent"] + 1}), value)
            if kind == "mul" and _const(inner[0]) is not None and \
                    isinstance(b, Sym) and _same(inner[1], b):
                square = Sym(("pow_scalar", (b,), {"exponent": 2.0}), b.v * b.v)
                return Sym(("mul", (inner[0], square), {}), value)
        for x, y in ((a, b), (b, a)):  # (-x)*y is -(x*y)
            if isinstance(x, Sym) and isinstance(x.e, tuple) and x.e[0] == "neg":
                return make("neg", (make("mul", (x.e[1][0], y), {}),), {}, value)
        if ca == -1:
            return make("neg", (b,), {}, value)
        if cb == -1:
            return make("neg", (a,), {}, value)
        if cb is not None and ca is None:  # numbers first: 2*x
            return Sym(("mul", (lift(b), a), {}), value)
    elif op_name == "add":
        a, b = args
        if consts[0] == 0:
            return _with_value(b, value)
        if consts[1] == 0:
            return _with_value(a, value)
        if isinstance(b, Sym) and isinstance(b.e, tuple) and b.e[0] == "neg":
            return make("sub", (a, b.e[1][0]), {}, value)
        if consts[1] is not None and consts[1] < 0:
            return make("sub", (a, number(-consts[1])), {}, value)
    elif op_name == "sub":
        a, b = args
        if consts[1] == 0:
            return _with_value(a, value)
        if consts[0] == 0:
            return make("neg", (b,), {}, value)
    elif op_name == "div":
        a, b = args
        if consts[1] == 1:
            return _with_value(a, value)
        if consts[0] == 0:
            return number(0.0, value.shape)
    elif op_name == "neg":
        (a,) = args
        if isinstance(a, Sym) and isinstance(a.e, tuple) and a.e[0] == "neg":
            return _with_value(a.e[1][0], value)
    elif op_name in ("maximum", "minimum"):
        # the side that is the larger (smaller) one everywhere here: the formula around here
        a, b = (_value(x) for x in args)
        first = np.all(a > b) if op_name == "maximum" else np.all(a < b)
        second = np.all(b > a) if op_name == "maximum" else np.all(b < a)
        sign = ">" if op_name == "maximum" else "<"
        if first:
            note(f"{text(args[0])} {sign} {text(args[1])}")
            return _with_value(args[0], value)
        if second:
            note(f"{text(args[1])} {sign} {text(args[0])}")
            return _with_value(args[1], value)
    return None


# --- numpy's array functions that rules use --------------------------------------------------

def _where(cond, x, y):
    c = np.asarray(_value(cond), dtype=bool)
    if isinstance(cond, Mask):
        cond.consult()
    if np.all(c):
        return x if isinstance(x, Sym) else lift(x)
    if not np.any(c):
        return y if isinstance(y, Sym) else lift(y)
    raise Unsupported("a mask that differs between elements")


def _same_formula(a, *args, **kw):
    """Shape plumbing (broadcast, expand_dims): the formula per element is the same."""
    fn = kw.pop("_fn")
    return Sym(lift(a).e, fn(_value(a), *args, **kw))


def _shape_fn(fn):
    return lambda a, *args, **kw: _same_formula(a, *args, _fn=fn, **kw)


def _stack_one(arrays, axis=0, **kw):
    """np.stack of one number: a new axis, the same formula (a whole reduction's result kept
    for broadcasting; a reduction over dim= is declined)."""
    if len(arrays) != 1 or np.ndim(_value(arrays[0])) != 0:  # (prod(x, dim=1)/x: declined)
        raise Unsupported("stack")
    return _same_formula(arrays[0], axis, _fn=np.expand_dims)


def _outer(a, b):
    if _const(a) == 1 and np.ndim(_value(a)) == 0:
        return lift(b)
    if _const(b) == 1 and np.ndim(_value(b)) == 0:
        return lift(a)
    raise Unsupported("outer")


_FUNCS = {
    np.where: _where,
    np.outer: _outer,
    np.broadcast_to: _shape_fn(np.broadcast_to),
    np.expand_dims: _shape_fn(np.expand_dims),
    np.reshape: _shape_fn(np.reshape), np.squeeze: _shape_fn(np.squeeze),
    np.stack: _stack_one,
    np.transpose: lambda a, *r, **k: make("transpose", (a,), {}) if np.ndim(_value(a)) > 1 else a,
    np.shape: lambda a: np.shape(_value(a)),
    np.ndim: lambda a: np.ndim(_value(a)),
    np.count_nonzero: lambda a, **kw: np.count_nonzero(_value(a), **kw),
}


def text(x) -> str:
    """The formula in ddx's language (ddx/engine/symtext.py)."""
    return formula_text(x.e if isinstance(x, Sym) else lift(x).e)
