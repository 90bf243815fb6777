"""The parts of numpy the REPL and ``ddx run`` provide: arrays as values to show, to do
arithmetic on and to hand to torch (``x.numpy()``, ``np.array([...])``, ``torch.from_numpy``),
and numpy's functions on them. An array is a value ddx shows, not a door into numpy: only the
attributes and methods below are reachable."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from .pyerrors import PyException
from .pymodules import EXTRA, NUMPY, Native, PyModule

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "^": operator.pow,
        "@": operator.matmul, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
        "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class NumpyArray:
    """numpy's array, printed as numpy prints it."""

    def __init__(self, value: np.ndarray) -> None:
        self.value = value
        self.py_array = value  # (what torch.tensor and torch.from_numpy take)

    def __repr__(self) -> str:
        return repr(self.value)

    def __str__(self) -> str:
        return str(self.value)

    def py_attr(self, ev, node, name: str) -> Any:
        v = self.value
        if name in ("shape", "ndim", "size"):
            return getattr(v, name)
        if name == "dtype":
            return str(v.dtype)
        if name == "T":
            return NumpyArray(v.T)
        if name in _METHODS:
            return Native(name, lambda ev, node, args, kw: _METHODS[name](self, args, kw))
        raise DdxTypeError(f"'numpy.ndarray' object has no attribute '{name}'")

    def py_method(self, ev, node, name: str, args: list, kw: dict) -> Any:
        if name not in _METHODS:
            raise DdxTypeError(f"'numpy.ndarray' object has no attribute '{name}'")
        return _METHODS[name](self, args, kw)

    def py_set_items(self, ev, keys: list, value: Any) -> None:
        """``a[key] = value`` in place (a tensor torch.from_numpy(a) made sees it)."""
        key = _plain(keys[0]) if len(keys) == 1 else tuple(_plain(k) for k in keys)
        if ev.journal is not None:
            ev.journal.overwrite(self.value)
        try:
            self.value[key] = _as_array(value)
        except (ValueError, TypeError, IndexError) as exc:
            raise PyException.error(type(exc).__name__, str(exc).splitlines()[0]) from None

    def py_unary(self, op: str) -> Any:
        return NumpyArray({"-": operator.neg, "+": operator.pos, "~": operator.invert}[op](
            self.value))

    def py_getitem(self, key):
        return wrap(self.value[_plain(key)])


def wrap(value: Any) -> Any:
    """A numpy result as the REPL's value: arrays as NumpyArray, scalars as Python numbers,
    tuples of them (np.nonzero, np.linalg.svd) as tuples."""
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    if isinstance(value, np.ndarray):
        return NumpyArray(value) if value.ndim else value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _plain(value: Any) -> Any:
    """A REPL value as numpy takes it: arrays, numbers, lists, slices, tuples of them."""
    if isinstance(value, NumpyArray):
        return value.value
    if isinstance(value, Tensor):
        if value.weak or value.value.ndim == 0:
            return value.value.item()
        raise DdxTypeError("a numpy array mixes with numbers and arrays here, not tensors")
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value) if isinstance(value, tuple) else \
            [_plain(v) for v in value]
    if isinstance(value, slice):
        return slice(_plain(value.start), _plain(value.stop), _plain(value.step))
    if isinstance(value, float):
        return float(value)
    return value


def _as_array(value: Any) -> Any:
    """An argument of one of numpy's functions: a tensor as its numbers (torch.Tensor's
    __array__, which refuses a tensor that requires grad), the rest as _plain."""
    if isinstance(value, Tensor) and not value.weak and value.value.ndim:
        if value.requires_grad:
            raise DdxRuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                                  "tensor.detach().numpy() instead.")
        return value.value
    if isinstance(value, (list, tuple)):
        return type(value)(_as_array(v) for v in value) if isinstance(value, tuple) else \
            [_as_array(v) for v in value]
    return _plain(value)


def binary(op: str, a: Any, b: Any) -> Any:
    """``a op b`` where one side is a numpy array (NotImplemented for an operator numpy has
    not got here)."""
    fn = _OPS.get(op)
    if fn is None:
        return NotImplemented
    with np.errstate(all="ignore"):  # (numpy's own warnings: it prints none in a REPL)
        return wrap(fn(np.asarray(_plain(a)) if isinstance(a, NumpyArray) else _plain(a),
                       np.asarray(_plain(b)) if isinstance(b, NumpyArray) else _plain(b)))


def _reduction(name: str):
    def call(arr: NumpyArray, args: list, kw: dict) -> Any:
        axis = kw.get("axis", (args[0] if args else None,))[0] if kw or args else None
        return wrap(getattr(np, name)(arr.value, axis=_plain(axis)))
    return call


def _as_method(name: str):
    """arr.NAME(...): numpy's function NAME(arr, ...)."""
    def call(arr: NumpyArray, args: list, kw: dict) -> Any:
        return _calls(getattr(np, name), _as_array)(None, None, [arr, *args], kw)
    return call


_METHODS = {
    **{name: _reduction(name) for name in ("sum", "mean", "max", "min", "std", "var", "prod",
                                           "argmax", "argmin")},
    "reshape": lambda arr, args, kw: wrap(arr.value.reshape(_plain(args[0]) if len(args) == 1
                                                            else tuple(_plain(args)))),
    "tolist": lambda arr, args, kw: arr.value.tolist(),
    "copy": lambda arr, args, kw: NumpyArray(arr.value.copy()),
    "item": lambda arr, args, kw: arr.value.item(),
    "astype": lambda arr, args, kw: NumpyArray(arr.value.astype(_dtype(args[0]))),
    **{name: _as_method(name) for name in ("argsort", "ravel", "transpose", "squeeze", "clip",
                                           "cumsum", "round", "dot", "all", "any", "nonzero")},
    "flatten": lambda arr, args, kw: NumpyArray(arr.value.flatten()),
}


def _dtype(value: Any) -> np.dtype:
    name = str(value)
    try:
        dtype = np.dtype(name.replace("numpy.", "").replace("np.", ""))
    except TypeError:
        raise DdxTypeError(f"data type {name!r} not understood") from None
    if dtype.kind not in "biuf":
        raise DdxTypeError("ddx's numpy arrays hold numbers")
    return dtype


def _array(ev, node, args, kw) -> NumpyArray:
    dtype = kw.get("dtype", (None,))[0]
    try:
        value = np.array(_plain(args[0]), dtype=None if dtype is None else _dtype(dtype))
    except (ValueError, TypeError) as exc:
        raise DdxTypeError(str(exc)) from None
    if value.dtype.kind not in "biuf":
        raise DdxTypeError("ddx's numpy arrays hold numbers")
    return NumpyArray(value)


def _shaped(fill):
    def call(ev, node, args, kw):
        dtype = kw.get("dtype", (None,))[0]
        shape = _plain(args[0] if args else kw["shape"][0])
        return NumpyArray(np.full(shape, fill, dtype=np.float64 if dtype is None
                                  else _dtype(dtype)))
    return call


def _calls(fn, plain=_plain):
    def call(ev, node, args, kw):
        got = [plain(a) for a in args]
        given = {k: _dtype(v[0]) if k == "dtype" else plain(v[0]) for k, v in kw.items()}
        try:
            with np.errstate(all="ignore"):
                return wrap(fn(*got, **given))
        except (ValueError, TypeError, IndexError) as exc:  # (numpy's refusals, one line)
            raise PyException.error(type(exc).__name__, str(exc).splitlines()[0]) from None
    return call


def _from_numpy(ev, node, args, kw) -> Tensor:
    (arr,) = args
    if not isinstance(arr, NumpyArray):
        raise DdxTypeError(f"expected np.ndarray (got {type(arr).__name__})")
    t = Tensor(arr.value)  # (the same memory, as torch.from_numpy shares it)
    t.label = "from_numpy"
    return t


def _as_tensor(ev, node, args, kw) -> Tensor:
    """torch.as_tensor: a numpy array's memory kept where no dtype asks for a copy, else
    torch.tensor's."""
    if args and isinstance(args[0], NumpyArray) and "dtype" not in kw:
        return _from_numpy(ev, node, args[:1], {})
    return ev.functions["tensor"](ev, node, args, kw)


def _numpy_function(name: str, fallback):
    """numpy.NAME: on numpy arrays (and numbers) numpy's own; on tensors ddx's op."""
    def call(ev, node, args, kw):
        if any(isinstance(a, NumpyArray) for a in args) or (
                args and all(isinstance(a, (int, float, list, tuple)) for a in args)):
            with np.errstate(all="ignore"):
                return _calls(getattr(np, name))(ev, node, args, kw)
        return fallback.fn(ev, node, args, kw)
    return Native(name, call)


def _ddx(name: str):
    def call(ev, node, args, kw):
        return ev.functions[name](ev, node, args, kw)
    return call


def _random(name: str):
    """numpy.random.NAME on numpy's own global generator, so that np.random.seed(0) gives
    numpy's numbers."""
    def call(ev, node, args, kw):
        return _calls(getattr(np.random, name))(ev, node, args, kw)
    return Native(name, call)


# numpy's functions on arrays, numbers and lists (tensors as their numbers, as numpy's
# __array__ takes them): what autograd code that calls into numpy uses (the extending notes'
# NumpySort/NumpyTake, a numpy reference to compare with). No function that reads or writes
# files, or makes arrays of Python objects.
FUNCTIONS = (
    "argsort", "sort", "take_along_axis", "take", "where", "concatenate", "stack", "vstack",
    "hstack", "dot", "matmul", "outer", "transpose", "clip", "zeros_like", "ones_like",
    "full_like", "full", "eye", "identity", "allclose", "isclose", "array_equal", "max", "min",
    "amax", "amin", "argmax", "argmin", "prod", "cumsum", "cumprod", "std", "var", "median",
    "log1p", "expm1", "log2", "log10", "sign", "floor", "ceil", "round", "around", "power",
    "reshape", "squeeze", "expand_dims", "diag", "trace", "tile", "repeat", "flip", "unique",
    "count_nonzero", "isnan", "isinf", "isfinite", "arctan2", "sinh", "cosh", "tan", "arcsin",
    "arccos", "arctan", "broadcast_to", "diff", "einsum", "all", "any", "nonzero", "negative",
    "reciprocal", "swapaxes", "moveaxis", "ravel", "absolute")
LINALG = ("norm", "inv", "det", "solve", "svd", "eigh", "qr", "pinv", "matrix_rank")


def register() -> None:
    members = NUMPY.members
    for name in FUNCTIONS:
        members[name] = Native(name, _calls(getattr(np, name), _as_array))
    members["linalg"] = PyModule("numpy.linalg", {
        name: Native(name, _calls(getattr(np.linalg, name), _as_array)) for name in LINALG})
    for name in ("exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "maximum", "minimum", "sum",
                 "mean"):
        members[name] = _numpy_function(name, members[name])
    members.update({
        "array": Native("array", _array), "asarray": Native("asarray", _array),
        "zeros": Native("zeros", _shaped(0.0)), "ones": Native("ones", _shaped(1.0)),
        "arange": Native("arange", _calls(np.arange)),
        "linspace": Native("linspace", _calls(np.linspace)),
        "square": _numpy_function("square", Native("square", _ddx("square"))),
        **{name: _numpy_function(name, Native(name, _ddx(name)))  # (out=n: numpy's in place)
           for name in ("add", "subtract", "multiply", "divide")},
        "float32": "float32", "float64": "float64", "int64": "int64", "int32": "int32",
        "bool_": "bool",
        "ndarray": "numpy.ndarray",
    })
    members["random"] = PyModule("numpy.random", {
        name: _random(name) for name in ("seed", "randn", "rand", "normal", "uniform",
                                         "randint", "standard_normal", "random")})
    EXTRA["torch"]["from_numpy"] = Native("from_numpy", _from_numpy)
    EXTRA["torch"]["as_tensor"] = Native("as_tensor", _as_tensor)


register()
