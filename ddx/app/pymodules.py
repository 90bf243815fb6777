"""What ``import`` reaches in the REPL: PyTorch's namespaces as ddx provides them (torch,
torch.nn, torch.nn.functional, torch.linalg, torch.special, torch.autograd, torch.optim),
``math`` and the few parts of ``numpy`` autograd code uses. Nothing else: an import of any
other module is Python's ModuleNotFoundError, and no module gives a way out of ddx."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import namespaces, record
from ..graph.create_args import require_cpu
from ..graph.namespaces import FUNCTIONAL, LINALG, NN, SPECIAL, TORCH, Namespace
from ..graph.tensor import Tensor
from ..graph.values import NO_GRAD, weak
from ..lang.tree import Ast
from .pyerrors import PyException
from .values import Device, python_truth


class GradContext:
    """enable_grad(), set_grad_enabled(flag), inference_mode(): a ``with`` (or decorator)
    that sets grad mode for its body."""

    def __init__(self, enabled: bool, name: str) -> None:
        self.grad_enabled = enabled
        self.name = name

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.{self.name} object>"


ENABLE_GRAD = GradContext(True, "enable_grad")


class Native:
    """A function ddx provides, as a value: ``f = torch.sin``, ``from math import sqrt``;
    ``space``: the module it was taken from, when it is torch (a call of it is then torch.X's,
    with PyTorch's rules for plain numbers: f(1) of f = torch.sin is its TypeError)."""

    def __init__(self, name: str, fn, space: str | None = None) -> None:
        self.name, self.fn, self.space = name, fn, space

    def __repr__(self) -> str:
        return f"<built-in function {self.name}>"

    def py_call(self, ev, node: Ast, args: list, kw: dict) -> Any:
        if self.space is not None:  # (called as the member it is: torch.X(...))
            kids = (Ast("name", self.space, (), (), node.start, node.end, node.pos),)
            named = Ast("method", self.name, kids, (), node.start, node.end, node.pos)
        else:
            named = Ast("call", self.name, (), (), node.start, node.end, node.pos)
        return self.fn(ev, named, args, kw)


class PyModule:
    """A plain module: its members by name (numbers, Natives, submodules)."""

    def __init__(self, path: str, members: dict) -> None:
        self.path, self.members = path, members

    def __repr__(self) -> str:
        return f"<module '{self.path}'>"


def _plain(fn, name: str):
    """A math function on Python numbers (math.sqrt(2.0) is a float, math.exp(t) of a
    one-element tensor is its number's)."""
    def call(ev, node, args, kw):
        if kw:
            raise DdxTypeError(f"{name}() takes no keyword arguments")
        nums = []
        for a in args:
            if isinstance(a, Tensor) and a.value.size == 1:
                nums.append(a.value.item())
            elif isinstance(a, (int, float)):
                nums.append(a)
            else:
                raise DdxTypeError(f"must be real number, not {type(a).__name__}")
        try:
            r = fn(*nums)
        except (ValueError, OverflowError) as exc:
            raise PyException.error("ValueError", str(exc)) from None
        except TypeError as exc:
            raise DdxTypeError(str(exc)) from None
        return weak(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else r
    return Native(name, call)


MATH = PyModule("math", {
    **{k: weak(getattr(math, k)) for k in ("pi", "e", "tau", "inf", "nan")},
    **{k: _plain(getattr(math, k), k) for k in (
        "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
        "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf", "erfc", "gamma", "lgamma",
        "floor", "ceil", "fabs", "pow", "hypot", "isclose", "isfinite", "isnan", "isinf",
        "degrees", "radians", "factorial", "comb", "perm", "gcd", "trunc", "copysign")},
})


def _ddx_function(module: str, name: str):
    """module.X as ddx's function X (numpy.X on tensors, numbers and lists: then
    ``np.exp(x)`` of a tensor is a tensor, as PyTorch's __array_function__ gives back an array
    of the numbers; torch.functional.X: torch.X)."""
    def call(ev, node, args, kw):
        fn = ev.functions.get(name)
        if fn is None:
            raise DdxTypeError(f"{module}.{name} is not provided by ddx")
        return fn(ev, node, args, kw)
    return Native(name, call)


NUMPY = PyModule("numpy", {
    "pi": weak(math.pi), "e": weak(math.e), "inf": weak(math.inf), "nan": weak(math.nan),
    **{k: _ddx_function("numpy", k) for k in ("exp", "log", "sin", "cos", "tanh", "sqrt",
                                              "abs", "maximum", "minimum", "sum", "mean")},
})
# torch/functional.py (``import torch.functional as F``, an older tutorial's slip for
# torch.nn.functional: F.relu is then PyTorch's AttributeError)
TORCH_FUNCTIONAL = PyModule("torch.functional", {k: _ddx_function("torch.functional", k) for k in (
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "block_diag", "cartesian_prod", "cdist", "chain_matmul", "einsum", "lu", "meshgrid", "norm",
    "split", "stft", "tensordot", "unique", "unique_consecutive", "unravel_index")})


def _set_grad_enabled(ev, node, args, kw):
    flag = args[0] if args else kw.get("mode", (True,))[0]
    on = python_truth(flag)
    ctx = GradContext(on, "set_grad_enabled")
    ctx.prev = record.GRAD_MODE.enabled  # (a decorator puts it back: PyTorch's __call__)
    record.GRAD_MODE.enabled = on  # (also a function: it sets the mode at once)
    return ctx


def _no_arg_context(value):
    def call(ev, node, args, kw):
        return value
    return call


def _set_default_dtype(ev, node, args, kw):
    from ..graph.values import DType

    (d,) = args
    if not isinstance(d, DType) or d.np.kind != "f":
        raise DdxTypeError("only floating-point types are supported as the default type")
    ev.dtype = d.np
    session = getattr(ev, "session", None)
    if session is not None:
        session.dtype = d.np
    return None


def _get_default_dtype(ev, node, args, kw):
    from ..graph.values import DType

    return DType(ev.dtype)


def _set_default_device(ev, node, args, kw):
    require_cpu(_device(ev, node, args, kw))  # (the CPU, or PyTorch's words for another)
    return None


DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


def _device(ev, node, args, kw):
    """torch.device('cuda:0'), torch.device('cuda', 0): a device of any of PyTorch's types
    (what can hold a tensor is the CPU: values.require_cpu)."""
    name = args[0] if args else kw.get("type", ("cpu",))[0]
    if isinstance(name, Device):
        return name
    if not isinstance(name, str):
        raise DdxTypeError("device() takes a string such as 'cpu'")
    kind, _, index = str(name).partition(":")
    if kind not in DEVICE_TYPES:
        raise DdxRuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                              f"of device string: {name}")
    given = args[1] if len(args) > 1 else kw.get("index", (None,))[0]
    if index:
        if not index.isdigit():
            raise DdxRuntimeError(f"Invalid device string: '{name}'")
        given = int(index)
    if isinstance(given, Tensor):
        given = given.value.item()
    return Device(kind, None if given is None else int(given))


CUDA = PyModule("torch.cuda", {
    "is_available": Native("is_available", lambda ev, node, args, kw: False),
    "device_count": Native("device_count", lambda ev, node, args, kw: weak(0)),
})
AUTOGRAD = Namespace("torch.autograd", None)
OPTIM = Namespace("torch.optim", None)
TORCH.children.update(autograd=AUTOGRAD, optim=OPTIM)
# members of PyTorch's namespaces that are Python objects, not ops (filled in by the modules
# that provide them: nn's classes, optim's optimisers, autograd's functions)
EXTRA: dict[str, dict[str, Any]] = {
    "torch": {
        "no_grad": Native("no_grad", _no_arg_context(NO_GRAD)),
        "enable_grad": Native("enable_grad", _no_arg_context(ENABLE_GRAD)),
        "inference_mode": Native("inference_mode", _no_arg_context(NO_GRAD)),
        "set_grad_enabled": Native("set_grad_enabled", _set_grad_enabled),
        "is_grad_enabled": Native("is_grad_enabled",
                                  lambda ev, node, args, kw: record.GRAD_MODE.enabled),
        "device": Native("device", _device),
        "set_default_device": Native("set_default_device", _set_default_device),
        "set_default_dtype": Native("set_default_dtype", _set_default_dtype),
        "get_default_dtype": Native("get_default_dtype", _get_default_dtype),
        "cuda": CUDA, "functional": TORCH_FUNCTIONAL,
        "__version__": "2.13.0+cpu",  # (the PyTorch whose output ddx gives)
        "pi": weak(math.pi), "inf": weak(math.inf), "nan": weak(math.nan), "e": weak(math.e),
    },
    "torch.nn": {}, "torch.nn.functional": {}, "torch.autograd": {}, "torch.optim": {},
    "torch.linalg": {}, "torch.special": {},
}

MODULES: dict[str, Any] = {
    "torch": TORCH, "torch.nn": NN, "torch.nn.functional": FUNCTIONAL, "torch.linalg": LINALG,
    "torch.special": SPECIAL, "torch.autograd": AUTOGRAD, "torch.optim": OPTIM,
    "torch.cuda": CUDA, "math": MATH, "numpy": NUMPY, "torch.functional": TORCH_FUNCTIONAL,
}


def find(path: str, start: int | None = None, end: int | None = None) -> Any:
    module = MODULES.get(path)
    if module is None and "." in path:  # import torch.autograd.profiler: a submodule member
        parent, _, name = path.rpartition(".")
        got = EXTRA.get(parent, {}).get(name) if parent in MODULES else None
        if isinstance(got, (PyModule, Namespace)):
            return got
    if module is None:
        top = path.split(".")[0]
        parts = path.split(".")  # Python names the first package that is missing
        missing = next((".".join(parts[:i]) for i in range(1, len(parts) + 1)
                        if ".".join(parts[:i]) not in MODULES), path)
        exc = PyException.error("ModuleNotFoundError", f"No module named '{missing}'")
        exc.start, exc.end = start, end
        exc.hint = ("ddx provides torch (with nn, nn.functional, optim, autograd, linalg), "
                    "math and parts of numpy" if top not in ("torch",) else None)
        raise exc
    return module


def member(ev, module: Any, name: str, path: str = "", start=None, end=None) -> Any:
    """``from module import name`` and ``module.name`` for values (not calls)."""
    if isinstance(module, PyModule):
        if name in module.members:
            return module.members[name]
        raise _no_member(module.path, name)
    if isinstance(module, Namespace):
        extra = EXTRA.get(module.path, {})
        if name in extra:
            return extra[name]
        if name in module.children:
            return module.children[name]
        sub = MODULES.get(f"{module.path}.{name}")
        if sub is not None:
            return sub
        if module is TORCH and name in namespaces.DTYPES:
            return namespaces.DType(namespaces.DTYPES[name])
        if module.space is not None and name in ev.functions and \
                module.space in namespaces.spaces_of(name):
            return Native(name, ev.functions[name], "torch" if module is TORCH else None)
        raise _no_member(module.path, name)
    raise DdxTypeError(f"cannot import from {module!r}")


def _no_member(path: str, name: str):
    shown = {"torch.nn.functional": "F"}.get(path, path)
    space = {"torch": "torch", "torch.nn.functional": "F", "torch.linalg": "linalg"}.get(path)
    if space and namespaces.pytorch_has(space, name):
        return PyException.error("AttributeError", f"'{path}.{name}' is not supported by ddx")
    del shown
    return PyException.error("AttributeError", f"module '{path}' has no attribute '{name}'")


def members(module: Any) -> dict:
    if isinstance(module, PyModule):
        return dict(module.members)
    return {**EXTRA.get(module.path, {}), **module.children}


__all__ = ["ENABLE_GRAD", "EXTRA", "MATH", "MODULES", "NUMPY", "Native", "PyModule", "np"]
