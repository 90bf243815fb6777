"""Tensor methods that change a tensor in place, as PyTorch's ``x.add_(y, alpha=)``,
``x.mul_(2)``, ``x.clamp_(min=0)``, ``x.cos_()``, ``x.copy_(y)``, ``x.fill_(v)``: each is the
out-of-place op, then

- with nothing to record (grad mode off, or no input requires grad): the values are written
  into the tensor, cast to its dtype (PyTorch's "result type Float can't be cast to the
  desired output type Long" for a float result in an integer tensor), so every name that
  holds it sees the change;
- recorded (grad mode on and an input requires grad): refused on a leaf that requires grad
  (PyTorch's "a leaf Variable that requires grad is being used in an in-place operation."),
  else the result is the tensor's new node, bound to every name that held the tensor
  (``y.cos_()`` leaves ``y`` with grad_fn CosBackward0; graphs already built from ``y`` keep
  its old node, as PyTorch's do)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import dual, record
from ..graph.tensor import Tensor, changed_in_place
from .methods import check_in_place
from .pyoptim import add
from .pyvalues import torch_type_name

UNARY = ("abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
         "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "sqrt", "rsqrt",
         "reciprocal", "floor", "ceil", "round", "trunc", "frac", "sign", "square", "erf",
         "erfc", "deg2rad", "rad2deg", "nan_to_num")
BINARY = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow",
          "clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "fmod", "remainder",
          "addcmul", "addcdiv", "lerp", "hypot", "atan2", "maximum", "minimum", "xlogy")


def _requires(ev, t: Tensor, args: list, kw: dict) -> bool:
    if not record.GRAD_MODE.enabled:
        return False
    return t.requires_grad or any(isinstance(a, Tensor) and a.requires_grad
                                  for a in (*args, *kw.values()))


def write(ev, t: Tensor, new: Any) -> Tensor:
    """Write ``new`` into ``t``'s values (broadcast to its shape, cast to its dtype)."""
    new = np.asarray(new)
    old = t.value
    if old.dtype.kind in "iub" and new.dtype.kind == "f":
        raise DdxRuntimeError(f"result type Float can't be cast to the desired output type "
                              f"{torch_type_name(old.dtype)}")
    try:
        shape = np.broadcast_shapes(old.shape, new.shape)
    except ValueError:
        shape = None
    if shape != old.shape:
        got = list(shape) if shape is not None else list(new.shape)
        raise DdxRuntimeError(f"output with shape {list(old.shape)} doesn't match the "
                              f"broadcast shape {got}")
    if ev.journal is not None:
        ev.journal.overwrite(old)
    if not old.flags.writeable:
        t.value = old = np.array(old)
    old[...] = new
    changed_in_place(ev.journal, t)
    _write_back(ev, t)
    return t


def _is_view(t: Tensor) -> bool:
    """Whether ``t`` is a view of another tensor: its memory is an input's (a kernel may hand
    back a slice of a buffer of its own: that is no view), or it is a select (x[0] of a
    vector is a 0-d copy in numpy, a view in PyTorch)."""
    if t.op == "select" and t.inputs:
        return True
    if t.value.base is None:
        return False
    return any(np.may_share_memory(s.value, t.value) for s in t.inputs)


def _write_back(ev, t: Tensor) -> None:
    """x[0] of a vector is a 0-d copy in numpy (a view in PyTorch): write it into x."""
    cur = t
    while cur.op == "select" and cur.inputs and cur.value.base is None:
        parent = cur.inputs[0]
        if ev.journal is not None:
            ev.journal.overwrite(parent.value)
        if not parent.value.flags.writeable:
            parent.value = np.array(parent.value)
        parent.value[cur.kw["key"]] = cur.value
        cur = parent


def _rebind(ev, node, t: Tensor, result: Any) -> Any:
    return rebind(ev, node.value if node.value.endswith("_") else "this in-place op", t, result)


def rebind(ev, op: str, t: Tensor, result: Any) -> Any:
    """Every name that holds ``t`` (in this scope and the enclosing ones) now holds the
    recorded result, as every alias of an in-place changed tensor sees the change. A view of
    another tensor is refused: PyTorch would change its base too (CopySlices). ``op`` names
    the change in the errors ("mul_", "item assignment")."""
    if _is_view(t):
        raise DdxRuntimeError(f"{op}() on a view of another tensor, recorded for autograd, is "
                              "not supported by ddx (PyTorch changes the view's base too); "
                              "change a copy: y = y.clone()")
    found = False
    env = ev.env
    while env is not None:
        for name, value in list(dict.items(env)):
            if value is t:
                found = True
                if ev.journal is not None:
                    ev.journal.bind(env, name, result)
                else:
                    dict.__setitem__(env, name, result)
        env = getattr(env, "outer", None)
    if not found:
        raise DdxRuntimeError(f"{op}() on a tensor that requires grad is recorded by ddx only "
                              "on a tensor a name holds" + (" (write y = y." + op[:-1] + "(...))"
                                                            if op.endswith("_") else ""))
    if isinstance(result, Tensor):
        changed_in_place(ev.journal, t, result)
    return result


def in_place(name: str):
    """The method ``name + '_'``: the op ``name`` computed, then written or recorded."""

    def method(ev, node, t: Tensor, args: list, kw: dict) -> Any:
        fn = ev.functions.get(name)
        if fn is None:
            raise DdxTypeError(f"'Tensor.{name}_' is not supported by ddx", start=node.pos,
                               end=node.end)
        if _requires(ev, t, args, kw):
            check_in_place(t)
            return _rebind(ev, node, t, _cast_to(t, fn(ev, node, [t, *args], kw)))
        fused = None if dual.has_tangents((t, *args)) else _fused_add(name, t, args, kw)
        if fused is not None:
            return write(ev, t, fused)
        saved = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = False
        try:
            result = fn(ev, node, [t, *args], kw)
        finally:
            record.GRAD_MODE.enabled = saved
        tangent = dual.tangent_of(result) if isinstance(result, Tensor) else None
        if tangent is not None:  # (forward AD: the tangent changes in place too)
            dual.set_tangent(t, Tensor(tangent.value.astype(t.value.dtype, copy=False)))
        return write(ev, t, result.value if isinstance(result, Tensor) else result)

    return method


def _cast_to(t: Tensor, result: Any) -> Any:
    """A recorded in-place op's result in the tensor's own dtype, as PyTorch writes it (f32
    x.add_(y) of a float64 y stays float32; the gradient reaching y is cast back by the
    engine to y's dtype)."""
    if isinstance(result, Tensor) and result.value.dtype != t.value.dtype and \
            result.value.dtype.kind == "f" and t.value.dtype.kind == "f":
        result.value = result.value.astype(t.value.dtype)
    return result


def _fused_add(name: str, t: Tensor, args: list, kw: dict) -> np.ndarray | None:
    """x.add_(y, alpha=a) on floats: ATen's kernel is fmadd(y, a, x), one rounding (as
    optim's updates compute it); None where the plain op applies."""
    if name not in ("add", "sub", "subtract") or "alpha" not in kw or len(args) != 1:
        return None
    other, alpha = args[0], kw["alpha"][0]
    alpha = alpha.value.item() if isinstance(alpha, Tensor) and alpha.weak else alpha
    if not isinstance(other, Tensor) or other.value.dtype != t.value.dtype or \
            t.value.dtype.kind != "f" or not isinstance(alpha, (int, float)):
        return None
    return add(t.value, other.value, -alpha if name != "add" else alpha)


def m_copy_(ev, node, t: Tensor, args: list, kw: dict) -> Any:
    src = args[0] if args else kw.get("src")
    if src is None or len(args) > 2:
        raise DdxTypeError("copy_() takes a source tensor: x.copy_(src)", start=node.pos,
                           end=node.end)
    if _requires(ev, t, [src], {}):
        check_in_place(t)
        if isinstance(src, Tensor) and src.requires_grad and t.value.shape == src.value.shape \
                and t.value.dtype == src.value.dtype:
            return _rebind(ev, node, t, ev.functions["clone"](ev, node, [src], {}))
        raise DdxRuntimeError("copy_() recorded for autograd is supported by ddx only from a "
                              "tensor of the same shape and dtype")
    value = src.value if isinstance(src, Tensor) else np.asarray(src)
    if t.value.dtype.kind in "iub" and value.dtype.kind == "f":
        value = np.trunc(value)  # copy_ casts (as .to(dtype)), it never refuses
    return write(ev, t, value.astype(t.value.dtype))


def m_fill_(ev, node, t: Tensor, args: list, kw: dict) -> Any:
    if len(args) != 1:
        raise DdxTypeError("fill_() takes one value: x.fill_(value)", start=node.pos, end=node.end)
    if _requires(ev, t, args, {}):
        check_in_place(t)
        raise DdxRuntimeError("fill_() on a tensor that requires grad is not supported by ddx")
    v = args[0]
    value = v.value if isinstance(v, Tensor) else np.asarray(v)
    if value.ndim:
        raise DdxRuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                              f"with {value.ndim} dimensions.")
    return write(ev, t, value.astype(t.value.dtype))


def _reshaped(name: str):
    """x.unsqueeze_(0), x.t_(), ...: x itself takes the new shape (the same memory, as
    PyTorch's changes only the view); recorded for autograd, ddx's error."""

    def method(ev, node, t: Tensor, args: list, kw: dict) -> Any:
        if t.requires_grad and record.GRAD_MODE.enabled:
            raise DdxRuntimeError(f"{name}_() of a tensor that requires grad, recorded for "
                                  f"autograd, is not supported by ddx; use t = t.{name}(...)",
                                  start=node.pos, end=node.end)
        saved = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = False
        try:
            got = ev.functions[name](ev, node, [t, *args], kw)
        finally:
            record.GRAD_MODE.enabled = saved
        if ev.journal is not None:
            ev.journal.keep(t, "value")
        t.value = got.value
        changed_in_place(ev.journal, t)
        return t

    return method


METHODS = {**{f"{n}_": in_place(n) for n in (*UNARY, *BINARY)},
           **{f"{n}_": _reshaped(n) for n in ("unsqueeze", "squeeze", "t", "transpose",
                                               "swapdims", "swapaxes")},
           "copy_": m_copy_, "fill_": m_fill_}


def _written_back(method):
    """x[0].zero_(): the element of x too (see _write_back)."""

    def zero_(ev, node, t: Tensor, args: list, kw: dict) -> Any:
        result = method(ev, node, t, args, kw)
        _write_back(ev, t)
        return result

    return zero_


def _torch_in_place(name: str):
    """``torch.sin_(x)``: x.sin_() (the tensor is the call's first argument)."""
    method = METHODS[name]

    def fn(ev, node, args: list, kw: dict) -> Any:
        if not args or not isinstance(args[0], Tensor) or args[0].weak:
            raise DdxTypeError(f"{name}(): argument 'input' must be Tensor", start=node.pos,
                               end=node.end)
        return method(ev, node, args[0], list(args[1:]), kw)

    return fn


def register() -> None:
    from .methods import TENSOR_METHODS
    from .pymodules import EXTRA, Native

    for name, fn in METHODS.items():
        TENSOR_METHODS.setdefault(name, fn)
    TENSOR_METHODS["zero_"] = _written_back(TENSOR_METHODS["zero_"])
    for name in (*UNARY, "clamp"):
        if name not in ("negative", "arcsin", "arccos", "arctan", "nan_to_num"):
            EXTRA["torch"].setdefault(f"{name}_", Native(f"{name}_", _torch_in_place(f"{name}_")))


register()

__all__ = ["METHODS", "rebind", "write"]
