"""Arguments of PyTorch's creation functions: sizes (several ints, or one tuple/list),
``dtype=``, ``requires_grad=``, plain ints and numbers, each checked with PyTorch's words; and
the new leaf tensor they make."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from ..limits import MAX_DIMS, check_elements
from .args import Evaluating, bind
from .tensor import Tensor
from .values import DType, py_type

OPTIONS = ("dtype", "requires_grad", "device")  # every creation function's keywords
TORCH_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
              "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool"}  # the names in PyTorch's "not implemented for 'Long'"


def kind_of(value: Any) -> str:
    """PyTorch's name for an argument's type in its messages: int, float, bool, Tensor..."""
    if isinstance(value, Tensor) and not value.weak:
        return "list" if value.const and value.op == "const" else "Tensor"  # ([2.5]: a list)
    if isinstance(value, list):
        return "list"
    return py_type(value)


def plain_int(value: Any) -> int | None:
    """``value`` as a Python int if PyTorch takes it as one (a number or a 0-d int tensor).
    A whole float number counts too: ddx's arithmetic on numbers gives floats (2*3, 10^4)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.value.ndim == 0:
        kind = value.value.dtype.kind
        if kind in "iu":
            return int(value.value.item())
        if kind == "f" and value.weak:
            v = float(value.value.item())
            return int(v) if math.isfinite(v) and v.is_integer() else None
    return None


def int_arg(node: Ast, key: str, value: Any, position: int | None) -> int:
    n = plain_int(value)
    if n is None:
        where = f" (position {position})" if position else ""
        raise DdxTypeError(f"{node.value}(): argument '{key}'{where} must be int, not "
                           f"{kind_of(value)}", start=node.pos, end=node.end)
    if not -(1 << 63) <= n < 1 << 63:
        raise DdxValueError("Overflow when unpacking long long", start=node.pos, end=node.end)
    return n


def number_arg(node: Ast, key: str, value: Any, position: int | None = None) -> int | float | bool:
    """A Python number (start=, fill_value=, mean=): ints stay ints (dtype inference)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.value.ndim == 0:
        return value.value.item()
    if isinstance(value, (int, float)):  # (a number a method gave: numel(), dim(), .item())
        return getattr(value, "raw", value)
    where = f" (position {position})" if position else ""
    raise DdxTypeError(f"{node.value}(): argument '{key}'{where} must be Number, not "
                       f"{kind_of(value)}", start=node.pos, end=node.end)


def _size_items(node: Ast, value: Any, items: list, position: int | None) -> tuple[int, ...]:
    shape = []
    for k, item in enumerate(items):
        n = int(item) if isinstance(item, bool) else plain_int(item)  # (True counts as 1)
        if n is None:
            if position is None:  # (PyTorch's words for a bad size= keyword)
                raise DdxTypeError(f"{node.value}(): argument 'size' must be tuple of ints, "
                                   f"not {kind_of(value)}", start=node.pos, end=node.end)
            raise DdxTypeError(f"{node.value}(): argument 'size' (position {position}) must be "
                               f"tuple of ints, but found element of type {kind_of(item)} at "
                               f"pos {k}", start=node.pos, end=node.end)
        shape.append(n)
    return tuple(shape)


def sequence(value: Any) -> list | None:
    """The items of a size given as one tuple, list, torch.Size or 1-D int literal."""
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, Tensor) and value.value.ndim == 1 and value.value.dtype.kind in "iu" \
            and value.const:
        return [Tensor(np.asarray(v), weak=True) for v in value.value.tolist()]
    return None


def size_arg(node: Ast, value: Any, position: int | None) -> tuple[int, ...]:
    """A size that must be a tuple or list (full(size, v), randint(high, size))."""
    items = sequence(value)
    if items is None:
        where = f" (position {position})" if position else ""
        raise DdxTypeError(f"{node.value}(): argument 'size'{where} must be tuple of ints, not "
                           f"{kind_of(value)}", start=node.pos, end=node.end)
    return checked(node, _size_items(node, value, items, position))


def sizes(node: Ast, args: list, kw: dict) -> tuple[int, ...]:
    """The size of ones(2, 3), ones((2, 3)), ones([2, 3]), ones(size=(2, 3))."""
    if "size" in kw:
        if args:
            raise DdxTypeError(f"{node.value}() got multiple values for argument 'size'",
                               start=node.pos, end=node.end)
        return size_arg(node, kw["size"][0], None)
    if not args:
        raise DdxTypeError(f'{node.value}() missing 1 required positional arguments: "size"',
                           start=node.pos, end=node.end)
    if len(args) == 1:
        items = sequence(args[0])
        if items is not None:
            return checked(node, _size_items(node, args[0], items, 1))
        if plain_int(args[0]) is None:
            raise DdxTypeError(f"{node.value}(): argument 'size' (position 1) must be tuple of "
                               f"ints, not {kind_of(args[0])}", start=node.pos, end=node.end)
    for k, item in enumerate(args):
        if plain_int(item) is None:
            raise DdxTypeError(f"{node.value}(): argument 'size' failed to unpack the object at "
                               f"pos {k + 1} with error \"type must be tuple of ints,but got "
                               f"{kind_of(item)}\"", start=node.pos, end=node.end)
    return checked(node, tuple(plain_int(a) for a in args))


def checked(node: Ast, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A size checked as PyTorch checks it, and against DDX_MAX_ELEMENTS before anything is
    allocated."""
    if len(shape) > MAX_DIMS:
        raise DdxRuntimeError(f"{node.value}(): a tensor has at most {MAX_DIMS} dimensions, "
                              f"got {len(shape)}", start=node.pos, end=node.end)
    for n in shape:
        if n < 0:
            raise DdxRuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                  f"[{', '.join(map(str, shape))}]", start=node.pos, end=node.end)
    count = 1
    for n in shape:
        count *= n
    check_elements(max([count, *shape]), f"{node.value}()")
    return shape


def require_cpu(device: Any, what: str = "") -> None:
    """A tensor or module put on ``device`` (a name, a torch.device, or None: the CPU): the
    CPU, or PyTorch's CPU-only build's AssertionError for CUDA, ddx's error for another."""
    if device is None:
        return
    kind = str(getattr(device, "kind", device)).split(":")[0]
    if kind == "cpu":
        return
    if kind == "cuda":
        exc = DdxRuntimeError("Torch not compiled with CUDA enabled")
        exc.python_kind = "AssertionError"
        raise exc
    raise DdxRuntimeError(f"{what}ddx computes on the CPU only (device='cpu'), got "
                          f"device={str(device)!r}")


def check_device(node: Ast, kw: dict) -> None:
    """``device=``: 'cpu' (or a torch.device of it, or None); any other is refused."""
    try:
        require_cpu(kw.get("device", ("cpu",))[0], f"{node.value}(): ")
    except DdxRuntimeError as exc:
        raise exc.at(node.pos, node.end) from None


def options(node: Ast, kw: dict, default) -> tuple[np.dtype, bool]:
    """``dtype=`` (default ``default``) and ``requires_grad=``; ``device='cpu'`` is accepted."""
    dtype = kw.get("dtype", (None,))[0]
    if dtype is None:
        dtype = np.dtype(default)
    elif isinstance(dtype, DType):
        dtype = dtype.np
    else:
        raise DdxTypeError(f"{node.value}(): argument 'dtype' must be torch.dtype, not "
                           f"{kind_of(dtype)}", start=node.pos, end=node.end)
    check_device(node, kw)
    grad = kw.get("requires_grad", (False,))[0]
    grad = False if grad is None else grad
    if not isinstance(grad, bool):
        raise DdxTypeError(f"{node.value}(): argument 'requires_grad' must be bool, not "
                           f"{kind_of(grad)}", start=node.pos, end=node.end)
    return dtype, grad


def fresh(ev: Evaluating, node: Ast, value: np.ndarray, requires_grad: bool) -> Tensor:
    """A new leaf, as a creation function returns it."""
    t = Tensor(value)
    t.label = ev.label(node)
    if requires_grad:
        t.set_requires_grad(True, via="init")
    ev.nodes.append(t)
    return t


def like(node: Ast, args: list, kw: dict, names: tuple, required: int = 1) -> dict:
    """A *_like function's arguments: ``input`` a tensor, then ``names``, then the options."""
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS},
                 ("input", *names), required)
    src = given["input"]
    if not isinstance(src, Tensor) or src.weak:
        raise DdxTypeError(f"{node.value}(): argument 'input' (position 1) must be Tensor, not "
                           f"{kind_of(src)}", start=node.pos, end=node.end)
    return given


def torch_type(dtype: np.dtype) -> str:
    return TORCH_TYPE.get(np.dtype(dtype).name, np.dtype(dtype).name)
