"""Creation functions (tensor ones zeros full eye arange linspace empty and the *_like forms),
with PyTorch's sizes, dtypes, requires_grad and errors; the random ones are in
ddx/graph/create_random.py. The tables are read by ddx/graph/functions.py (see its KINDS,
CALLERS, NAMED, NAMED_SPACES); LISTS names the functions whose [..] argument is a size."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from ..limits import MAX_DIMS
from . import create_random, create_random2
from .args import Evaluating, bind, check_arity, check_keywords
from .create_args import (
    OPTIONS,
    check_device,
    checked,
    fresh,
    int_arg,
    kind_of,
    like,
    number_arg,
    options,
    size_arg,
    sizes,
    torch_type,
)
from .tensor import Tensor
from .values import DTYPES, DType, truth, type_name


def _dtype_arg(value) -> np.dtype | None:
    if value is None:
        return None
    if isinstance(value, DType):
        return value.np
    raise DdxTypeError(f"dtype must be one of {', '.join(sorted(DTYPES))}, got "
                       f"{type_name(value)}")


def _nested(node: Ast, src: list | tuple) -> np.ndarray:
    """torch.tensor's data from nested lists and tuples of numbers and one-element tensors
    (explicit stack), as numpy makes it: ints stay ints, any float makes it float."""
    root: list = []
    stack = [(src, root, 1)]
    while stack:
        seq, out, depth = stack.pop()
        if depth > MAX_DIMS:
            raise DdxShapeError(f"a literal nests at most {MAX_DIMS} brackets deep (a tensor has "
                                f"at most {MAX_DIMS} dimensions)", start=node.pos, end=node.end)
        for item in seq:
            if isinstance(item, (list, tuple)):
                sub: list = []
                out.append(sub)
                stack.append((item, sub, depth + 1))
            elif isinstance(item, Tensor) and item.value.size == 1:
                out.append(item.value.reshape(()).item())
            elif isinstance(item, Tensor) and item.const and item.op == "const":
                out.append(item.value.tolist())  # (a [..] literal inside a [..] literal)
            elif isinstance(item, (bool, int, float)):
                out.append(item)
            else:
                raise DdxTypeError(f"tensor(): a list of numbers, not of {type_name(item)}",
                                   start=node.pos, end=node.end)
    try:
        return np.array(root)
    except ValueError:
        raise DdxValueError(_ragged(root), start=node.pos, end=node.end) from None


def _ragged(root: list) -> str:
    """PyTorch's words for nested lists of other lengths: the lengths expected are the first
    item's at each depth (torch/csrc/utils/tensor_new.cpp, recursive_store)."""
    sizes, seq = [], root
    while isinstance(seq, list):
        sizes.append(len(seq))
        seq = seq[0] if seq else None
    stack = [(root, 0)]
    while stack:
        seq, dim = stack.pop()
        if dim < len(sizes) and len(seq) != sizes[dim]:
            return f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(seq)})"
        stack.extend((s, dim + 1) for s in reversed(seq) if isinstance(s, list))
    return "tensor(): the nested lists have different lengths"


def fn_tensor(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_keywords(node, kw, ("requires_grad", "dtype", "device"))
    check_arity(node, args, 1, {})
    check_device(node, kw)
    src = args[0]
    array = getattr(src, "py_array", None)  # a numpy array (the REPL's np.array, x.numpy())
    if array is not None:
        dtype = _dtype_arg(kw.get("dtype", (None,))[0])
        grad = kw.get("requires_grad", (False,))[0]
        return fresh(ev, node, np.array(array, dtype=dtype or array.dtype),
                     grad is not False and truth(grad))
    if isinstance(src, bool):
        src = Tensor(np.asarray(src))
    if isinstance(src, (list, tuple)):  # a list made by Python code: xs = [0.1 * i for ...]
        src = Tensor(_nested(node, src))
    if not isinstance(src, Tensor):
        raise DdxTypeError(f"tensor() takes numbers or [..] literals, got {type_name(src)}",
                           start=node.pos, end=node.end)
    dtype = _dtype_arg(kw.get("dtype", (None,))[0])
    raw = src.value
    if dtype is None:
        # Python numbers are the default dtype (float32 in the REPL, as PyTorch's)
        dtype = raw.dtype if raw.dtype.kind in "bi" else ev.dtype
    grad = kw.get("requires_grad", (False,))[0]
    return fresh(ev, node, np.array(raw, dtype=dtype), grad is not False and truth(grad))


def _filled(fill: float):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        check_keywords(node, kw, ("size", *OPTIONS))
        dtype, grad = options(node, kw, ev.dtype)
        return fresh(ev, node, np.full(sizes(node, args, kw), fill, dtype=dtype), grad)
    return call


def _filled_like(fill: float | None):
    names = ("fill_value",) if fill is None else ()

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = like(node, args, kw, names, 1 + len(names))
        src = given["input"]
        value = fill if fill is not None else number_arg(node, "fill_value",
                                                          given["fill_value"], 2)
        dtype, grad = options(node, kw, src.value.dtype)
        return fresh(ev, node, np.full(src.value.shape, value, dtype=dtype), grad)
    return call


def _default_dtype(ev: Evaluating, values) -> np.dtype:
    """PyTorch's inference from Python numbers: bool, int64, else the default float dtype."""
    if all(isinstance(v, bool) for v in values):
        return np.dtype(np.bool_)
    if all(isinstance(v, (bool, int)) for v in values):
        return np.dtype(np.int64)
    return ev.dtype


def fn_full(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS},
                 ("size", "fill_value"), 0)
    for key in ("size", "fill_value"):
        if key not in given:
            raise DdxTypeError(f'full() missing 1 required positional arguments: "{key}"',
                               start=node.pos, end=node.end)
    shape = size_arg(node, given["size"], 1 if args else None)
    value = number_arg(node, "fill_value", given["fill_value"], 2 if len(args) > 1 else None)
    dtype, grad = options(node, kw, _default_dtype(ev, [value]))
    return fresh(ev, node, np.full(shape, value, dtype=dtype), grad)


def fn_eye(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS}, ("n", "m"), 1)
    n = int_arg(node, "n", given["n"], 1 if args else None)
    m = n if given.get("m") is None else int_arg(node, "m", given["m"], 2 if len(args) > 1
                                                  else None)
    for key, v in (("n", n), ("m", m)):
        if v < 0:
            raise DdxRuntimeError(f"{key} must be greater or equal to 0, got {v}",
                                  start=node.pos, end=node.end)
    checked(node, (n, m))
    dtype, grad = options(node, kw, ev.dtype)
    return fresh(ev, node, np.eye(n, m, dtype=dtype), grad)


def _ranged(dtype: np.dtype, start: float, step: float, n: int) -> np.ndarray:
    """arange's kernel: in blocks of two vectors (32 bytes each) the first element of a vector
    is start + step*i and the rest that plus k*step; the last few, start + step*i (each a
    fused multiply-add in float64, then rounded to the dtype)."""
    from ..ops.rng_math import fma64  # (on first use: start-up is a feature)

    width = 32 // dtype.itemsize
    blocks = n // (2 * width) * (2 * width)
    out = np.empty(n, dtype)
    if blocks:
        base = fma64(step, np.arange(0, blocks, width, dtype=np.float64), start).astype(dtype)
        k = np.arange(width, dtype=np.float64)
        out[:blocks] = fma64(k[None, :], step, base.astype(np.float64)[:, None]).ravel()
    out[blocks:] = fma64(step, np.arange(blocks, n, dtype=np.float64), start)
    return out


def fn_arange(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    rest = {k: v for k, v in kw.items() if k not in OPTIONS}
    if len(args) > 3 or (len(args) == 1 and "end" in rest):
        sig = ", ".join(kind_of(a) for a in args)
        raise DdxTypeError(f"arange() received an invalid combination of arguments - got "
                           f"({sig}), but expected one of: (end), (start, end), "
                           "(start, end, step)", start=node.pos, end=node.end)
    if len(args) == 1 and not rest:
        given = {"end": args[0]}
    else:
        given = bind(node, args, rest, ("start", "end", "step"), 0)
        if "end" not in given:
            raise DdxTypeError('arange() missing 1 required positional arguments: "end"',
                               start=node.pos, end=node.end)
    start, end, step = (number_arg(node, key, given.get(key, Tensor(np.asarray(d))))
                        for key, d in (("start", 0), ("end", 0), ("step", 1)))
    floats = any(isinstance(v, float) for v in (start, end, step))
    dtype, grad = options(node, kw, ev.dtype if floats else np.int64)
    if dtype.kind == "b":
        raise DdxRuntimeError('"arange_cpu" not implemented for \'Bool\'', start=node.pos,
                              end=node.end)
    if dtype.kind in "iu":
        start, end, step = (int(v) if math.isfinite(v) else v for v in (start, end, step))
    if step == 0:
        raise DdxValueError("step must be nonzero", start=node.pos, end=node.end)
    if not (math.isfinite(start) and math.isfinite(end)):
        raise DdxRuntimeError(f"unsupported range: {start:g} -> {end:g}", start=node.pos,
                              end=node.end)
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise DdxRuntimeError("upper bound and lower bound inconsistent with step sign",
                              start=node.pos, end=node.end)
    if dtype.kind in "iu":
        sign = (step > 0) - (step < 0)
        (n,) = checked(node, ((end - start + step - sign) // step,))
        value = start + step * np.arange(n, dtype=np.int64)
    else:
        size = math.ceil((float(end) - float(start)) / float(step)) if math.isfinite(
            (float(end) - float(start)) / float(step)) else None
        if size is None or size >= 1 << 63:
            raise DdxRuntimeError("invalid size, possible overflow?", start=node.pos,
                                  end=node.end)
        (n,) = checked(node, (size,))
        value = _ranged(dtype, float(start), float(step), n)
    return fresh(ev, node, value.astype(dtype), grad)


def fn_linspace(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS},
                 ("start", "end", "steps"), 0)
    if len(given) < 3:
        sig = ", ".join(kind_of(a) for a in args)
        raise DdxTypeError(f"linspace() received an invalid combination of arguments - got "
                           f"({sig}), but expected (start, end, steps)", start=node.pos,
                           end=node.end)
    start = number_arg(node, "start", given["start"], 1)
    end = number_arg(node, "end", given["end"], 2)
    steps = int_arg(node, "steps", given["steps"], 3)
    if steps < 0:
        raise DdxRuntimeError("number of steps must be non-negative", start=node.pos,
                              end=node.end)
    checked(node, (steps,))
    dtype, grad = options(node, kw, ev.dtype)
    if dtype.kind == "b":
        raise DdxRuntimeError('"linspace_cpu" not implemented for \'Bool\'', start=node.pos,
                              end=node.end)
    return fresh(ev, node, _spaced(dtype, start, end, steps), grad)


def _spaced(dtype: np.dtype, start, end, steps: int) -> np.ndarray:
    """linspace's kernel: the first half counts up from start, the second down from end."""
    from ..ops.rng_math import fma32, fma64  # (on first use)

    if steps <= 1:
        return np.full(steps, start, dtype=dtype)
    idx = np.arange(steps)
    up = idx < steps // 2
    if dtype.kind in "iu":  # the step in float64, from the ends as integers
        s, e = int(start), int(end)
        step = (float(e) - float(s)) / (steps - 1)
        vals = np.where(up, fma64(step, idx.astype(np.float64), float(s)),
                        fma64(-step, (steps - idx - 1).astype(np.float64), float(e)))
        return np.trunc(vals).astype(dtype)
    s, e = dtype.type(start), dtype.type(end)
    step = (e - s) / dtype.type(steps - 1)
    fma = fma32 if dtype == np.float32 else fma64
    return np.where(up, fma(step, idx.astype(dtype), s),
                    fma(-step, (steps - idx - 1).astype(dtype), e)).astype(dtype)


def _new_filled(fill: float | None):
    """x.new_ones(size), x.new_zeros, x.new_empty, x.new_full(size, fill_value): x's dtype."""
    def method(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
        if fill is None:
            given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS},
                         ("size", "fill_value"), 2)
            shape = size_arg(node, given["size"], 1 if args else None)
            value = number_arg(node, "fill_value", given["fill_value"], 2)
        else:
            check_keywords(node, kw, ("size", *OPTIONS))
            shape, value = sizes(node, args, kw), fill
        dtype, grad = options(node, kw, t.value.dtype)
        return fresh(ev, node, np.full(shape, value, dtype=dtype), grad)
    return method


def m_new_tensor(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.new_tensor(data): a new leaf of x's dtype."""
    if "dtype" not in kw:
        kw = {**kw, "dtype": (DType(t.value.dtype), node.pos)}
    return fn_tensor(ev, node, args, kw)


KINDS: dict = {}
CALLERS: dict = {}
NAMED: dict = {
    "tensor": fn_tensor,
    "ones": _filled(1.0),
    "zeros": _filled(0.0),
    "empty": _filled(0.0),  # (ddx's empty memory holds zeros)
    "full": fn_full,
    "eye": fn_eye,
    "arange": fn_arange,
    "linspace": fn_linspace,
    "ones_like": _filled_like(1.0),
    "zeros_like": _filled_like(0.0),
    "empty_like": _filled_like(0.0),
    "full_like": _filled_like(None),
    **create_random.NAMED,
    **create_random2.NAMED,
}
NAMED_SPACES: dict = {name: ("torch",) for name in NAMED}
LISTS = {"ones", "zeros", "empty", "full", "rand", "randn", "randint", "normal",
         # (tensor([0.1], dtype=torch.float64): the numbers as written, not made float32)
         "tensor", "as_tensor", "DoubleTensor", "FloatTensor", "LongTensor"}
# the REPL's tensor methods from here (ddx/app/methods.py adds them to its own)
TENSOR_METHODS = {"new_ones": _new_filled(1.0), "new_zeros": _new_filled(0.0),
                  "new_empty": _new_filled(0.0), "new_full": _new_filled(None),
                  "new_tensor": m_new_tensor, **create_random.TENSOR_METHODS,
                  **create_random2.TENSOR_METHODS}
__all__ = ["KINDS", "CALLERS", "NAMED", "NAMED_SPACES", "LISTS", "TENSOR_METHODS", "torch_type"]
