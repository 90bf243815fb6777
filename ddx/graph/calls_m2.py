"""Functions of PyTorch's documentation (issue 15, round 7) whose results autograd does not
track (bool and integer results, index and dtype queries, creation functions): logical_* and
bitwise_*, signbit, isposinf/isneginf, isin, gcd/lcm, frexp, heaviside, argwhere,
unravel_index, is_floating_point, promote_types, can_cast, logspace and range
(with ATen's arithmetic: double steps), tril_indices/triu_indices. Each computes with numpy in
the inputs' dtype, as ATen's kernels do for these exact operations."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from . import record
from .args import Evaluating, bind
from .calls_loss import aliased
from .calls_shape import fail, int_of, tensor_arg
from .create_args import OPTIONS, number_arg, options, torch_type
from .tensor import Tensor
from .values import DType


def _pair(ev: Evaluating, node: Ast, args: list, kw: dict, names=("input", "other")):
    given = bind(node, args, aliased(node, {k: v for k, v in kw.items() if k != "out"}), names,
                 len(names))
    xs = [given[n] for n in names]
    if not any(isinstance(x, Tensor) and not x.weak for x in xs):
        raise fail(node, f"{node.value}(): argument '{names[0]}' (position 1) must be Tensor, "
                         f"not {type(xs[0]).__name__}", DdxTypeError)
    vals = []
    strong = [x for x in xs if isinstance(x, Tensor) and not x.weak]
    for x in xs:
        if isinstance(x, Tensor) and not x.weak:
            vals.append(x.value)
        else:  # (a plain number takes the tensor's dtype, as PyTorch's wrapped scalars do,
            # unless its kind is higher: a bool tensor & 1 is int64)
            v = x.value if isinstance(x, Tensor) else x
            dtype = strong[0].value.dtype
            if dtype.kind == "b" and np.asarray(v).dtype.kind in "iu":
                dtype = np.dtype(np.int64)
            vals.append(np.asarray(v, dtype=dtype))
    return vals


def _out(node: Ast, kw: dict, value: np.ndarray) -> Tensor:
    """``out=``: the result cast into the given tensor (PyTorch's out= of a bool result)."""
    out = kw.get("out", (None,))[0]
    if out is None:
        return Tensor(np.asarray(value, order="C"))  # (ascontiguousarray makes a 0-d 1-d)
    if not isinstance(out, Tensor) or out.value.shape != value.shape:
        raise fail(node, f"{node.value}(): out= must be a tensor of shape {list(value.shape)}")
    out.value = np.asarray(value).astype(out.value.dtype)
    return out


def _logical(fn):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        a, b = _pair(ev, node, args, kw)
        return _out(node, kw, fn(a.astype(bool), b.astype(bool)))
    return call


def call_logical_not(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k != "out"}, ("input",))
    a = tensor_arg(ev, node, given["input"])
    return _out(node, kw, np.logical_not(a.value))


def _integral(name: str, fn, bools: bool = True):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        a, b = _pair(ev, node, args, kw)
        dtype = np.result_type(a.dtype, b.dtype)
        if dtype.kind == "f" or (dtype.kind == "b" and not bools):
            raise fail(node, f'"{name}_cpu" not implemented for '
                             f"'{torch_type(dtype).split('.')[-1].capitalize()}'")
        return _out(node, kw, fn(a.astype(dtype), b.astype(dtype)))
    return call


def _shift(left: bool):
    def fn(a, b):
        bits = a.dtype.itemsize * 8
        big = (b < 0) | (b >= bits)
        b = np.where(big, 0, b)
        if left:
            return np.where(big, 0, np.left_shift(a, b)).astype(a.dtype)
        return np.where(big, np.where(a < 0, -1, 0), np.right_shift(a, b)).astype(a.dtype)
    return fn


def call_bitwise_not(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k != "out"}, ("input",))
    a = tensor_arg(ev, node, given["input"])
    if a.value.dtype.kind == "f":
        raise fail(node, "\"bitwise_not_cpu\" not implemented for "
                         f"'{torch_type(a.value.dtype).split('.')[-1].capitalize()}'")
    return _out(node, kw, np.invert(a.value))


def _float_test(name: str, fn):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, {k: v for k, v in kw.items() if k != "out"}, ("input",))
        a = tensor_arg(ev, node, given["input"])
        return _out(node, kw, fn(a.value))
    return call


def call_isin(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("elements", "test_elements", "assume_unique", "invert"), 2)
    a, b = (tensor_arg(ev, node, given[k]) for k in ("elements", "test_elements"))
    return Tensor(np.isin(a.value, b.value, invert=bool(given.get("invert", False))))


def call_frexp(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input",))["input"])
    if a.value.dtype.kind != "f":
        raise fail(node, "torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(a.value)
    from .values import ReturnTypes

    return ReturnTypes("frexp", ("mantissa", "exponent"),
                       (Tensor(m.astype(a.value.dtype)), Tensor(e.astype(np.int32))))


def call_heaviside(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "values"), 2)
    x, v = (tensor_arg(ev, node, given[k]) for k in ("input", "values"))
    if record.GRAD_MODE.enabled and (x.requires_grad or v.requires_grad):
        raise fail(node, "the derivative for 'heaviside' is not implemented.")
    if x.value.dtype != v.value.dtype:
        raise fail(node, "heaviside is not yet implemented for tensors with different dtypes")
    out = np.where(x.value == 0, v.value, (x.value > 0).astype(x.value.dtype))
    return Tensor(np.asarray(out, dtype=x.value.dtype))


def call_argwhere(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    a = tensor_arg(ev, node, bind(node, args, kw, ("input",))["input"])
    return Tensor(np.argwhere(a.value).astype(np.int64).reshape(-1, a.value.ndim))


def call_unravel_index(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
    given = bind(node, args, kw, ("indices", "shape"), 2)
    idx = given["indices"]
    if not isinstance(idx, Tensor) or idx.value.dtype.kind not in "iu":
        raise fail(node, "expected 'indices' to be integer dtype, but got "
                         f"{getattr(getattr(idx, 'value', None), 'dtype', 'a number')}",
                   DdxTypeError)
    shape = given["shape"]
    shape = tuple(int_of(ev, node, s) for s in (shape if isinstance(shape, (tuple, list))
                                                 else (shape,)))
    total = math.prod(shape)
    v = idx.value.astype(np.int64)
    if ((v < -total) | (v >= total)).any():
        raise fail(node, "index out of bounds in unravel_index")
    parts = np.unravel_index(np.where(v < 0, v + total, v), shape)
    return tuple(Tensor(np.asarray(p, dtype=np.int64)) for p in parts)


def call_is_floating_point(ev: Evaluating, node: Ast, args: list, kw: dict) -> bool:
    a = bind(node, args, kw, ("input",))["input"]
    if not isinstance(a, Tensor) or a.weak:
        raise fail(node, "is_floating_point(): argument 'input' (position 1) must be Tensor",
                   DdxTypeError)
    return a.value.dtype.kind == "f"


def _dtype_pair(node: Ast, args: list, kw: dict, names: tuple) -> tuple[np.dtype, np.dtype]:
    given = bind(node, args, kw, names, 2)
    out = []
    for n in names:
        d = given[n]
        if not isinstance(d, DType):
            raise fail(node, f"{node.value}(): argument '{n}' must be torch.dtype", DdxTypeError)
        out.append(np.dtype(d.np))
    return out[0], out[1]


_KIND = {"b": 0, "u": 1, "i": 1, "f": 2}


def call_promote_types(ev: Evaluating, node: Ast, args: list, kw: dict) -> DType:
    a, b = _dtype_pair(node, args, kw, ("type1", "type2"))
    if a.kind == "u" and b.kind == "i" or a.kind == "i" and b.kind == "u":
        u, s = (a, b) if a.kind == "u" else (b, a)
        out = s if s.itemsize > u.itemsize else np.dtype(f"int{min(u.itemsize * 16, 64)}")
    elif (a.kind == "f") != (b.kind == "f"):  # (a float type wins over any integer type)
        out = a if a.kind == "f" else b
    else:
        out = np.promote_types(a, b)
    return DType(out)


def call_result_type(ev: Evaluating, node: Ast, args: list, kw: dict) -> DType:
    """PyTorch's promotion of two operands: tensors with dimensions first, then 0-d tensors,
    then plain numbers; a later kind counts only where its category (bool, integer, float)
    is higher, a plain float then giving the default dtype."""
    given = bind(node, args, kw, ("tensor1", "tensor2"), 2)
    ranked: dict[int, list[np.dtype]] = {0: [], 1: [], 2: []}
    for v in (given["tensor1"], given["tensor2"]):
        if isinstance(v, Tensor) and not v.weak:
            ranked[0 if v.value.ndim else 1].append(v.value.dtype)
        else:
            x = v.value if isinstance(v, Tensor) else v
            kind = "b" if isinstance(x, bool) or np.asarray(x).dtype.kind == "b" else \
                "f" if np.asarray(x).dtype.kind == "f" else "i"
            ranked[2].append({"b": np.dtype(bool), "i": np.dtype(np.int64),
                              "f": np.dtype(ev.dtype)}[kind])
    out = None
    for level in (0, 1, 2):
        for d in ranked[level]:
            if out is None:
                out = d
            elif _KIND[d.kind] > _KIND[out.kind]:
                out = d if level < 2 or d.kind != "f" else np.dtype(ev.dtype)
            elif level == 0 or (level == 1 and not ranked[0]):
                out = np.dtype(call_promote_types(ev, node, [DType(out), DType(d)], {}).np)
    return DType(out)


def call_can_cast(ev: Evaluating, node: Ast, args: list, kw: dict) -> bool:
    a, b = _dtype_pair(node, args, kw, ("from_", "to"))
    return _KIND[a.kind] <= _KIND[b.kind] and not (a.kind != "b" and b.kind == "b")


def call_logspace(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """ATen's logspace_out: pow(base, start + step * i) in double for the first half,
    pow(base, end - step * (steps - i - 1)) for the second (start, end and end - start in the
    result's dtype, the step in double), then cast."""
    rest = {k: v for k, v in kw.items() if k not in OPTIONS}
    given = bind(node, args, rest, ("start", "end", "steps", "base"), 3)
    start, end, base = (number_arg(node, k, given.get(k, 10.0)) for k in ("start", "end",
                                                                           "base"))
    steps = int_of(ev, node, given["steps"])
    if steps < 0:
        raise fail(node, "number of steps must be non-negative")
    dtype, grad = options(node, kw, ev.dtype)
    b = float(base)
    if steps == 1:
        vals = [math.pow(b, float(start))]
    else:  # (start and end in the result's dtype; their difference too, then a double step)
        s_, e_ = dtype.type(start), dtype.type(end)
        step = float(dtype.type(e_ - s_)) / (steps - 1) if steps > 1 else 0.0
        half = steps // 2
        vals = [math.pow(b, float(s_) + step * i) if i < half else
                math.pow(b, float(e_) - step * (steps - i - 1)) for i in range(steps)]
    out = Tensor(np.asarray(vals, dtype=dtype))
    if grad:
        out.set_requires_grad(True, via="init")
    return out


def call_range(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """torch.range (not a named function: the bare range is Python's; app/pyfns7.py)."""
    rest = {k: v for k, v in kw.items() if k not in OPTIONS}
    given = bind(node, args, rest, ("start", "end", "step"), 2)
    start, end, step = (number_arg(node, k, given.get(k, 1)) for k in ("start", "end", "step"))
    dtype, grad = options(node, kw, ev.dtype)
    if step == 0:
        raise fail(node, "step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise fail(node, "upper bound and lower bound inconsistent with step sign")
    n = int((end - start) / step) + 1
    out = Tensor(np.asarray([start + step * i for i in range(n)], dtype=dtype))
    if grad:
        out.set_requires_grad(True, via="init")
    return out


def _tri_indices(lower: bool):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        rest = {k: v for k, v in kw.items() if k not in OPTIONS}
        given = bind(node, args, rest, ("row", "col", "offset"), 2)
        r, c = int_of(ev, node, given["row"]), int_of(ev, node, given["col"])
        k = int_of(ev, node, given.get("offset", 0))
        if r < 0 or c < 0:
            raise DdxRuntimeError(f"row must be non-negative, got{r}", start=node.pos,
                                  end=node.end)
        dtype, _ = options(node, kw, np.int64)
        mask = np.tri(r, c, k, dtype=bool) if lower else ~np.tri(r, c, k - 1, dtype=bool)
        return Tensor(np.asarray(np.nonzero(mask), dtype=dtype).reshape(2, -1))
    return call


NAMED: dict = {
    "logical_and": _logical(np.logical_and), "logical_or": _logical(np.logical_or),
    "logical_xor": _logical(np.logical_xor), "logical_not": call_logical_not,
    "bitwise_and": _integral("bitwise_and", np.bitwise_and),
    "bitwise_or": _integral("bitwise_or", np.bitwise_or),
    "bitwise_xor": _integral("bitwise_xor", np.bitwise_xor),
    "bitwise_left_shift": _integral("lshift", _shift(True), False),
    "bitwise_right_shift": _integral("rshift", _shift(False), False),
    "bitwise_not": call_bitwise_not,
    "gcd": _integral("gcd", np.gcd, False), "lcm": _integral("lcm", np.lcm, False),
    "signbit": _float_test("signbit", np.signbit),
    "isposinf": _float_test("isposinf", np.isposinf),
    "isneginf": _float_test("isneginf", np.isneginf),
    "isin": call_isin, "frexp": call_frexp, "heaviside": call_heaviside,
    "argwhere": call_argwhere, "unravel_index": call_unravel_index,
    "is_floating_point": call_is_floating_point,
    "promote_types": call_promote_types, "can_cast": call_can_cast,
    "result_type": call_result_type,
    "logspace": call_logspace,
    "tril_indices": _tri_indices(True), "triu_indices": _tri_indices(False),
}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
NAMED_SPACES.update({n: ("torch",) for n in ("isin", "unravel_index",
                                             "promote_types", "can_cast", "result_type", "logspace",
                                             "tril_indices", "triu_indices")})
