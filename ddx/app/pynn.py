"""torch.nn in the REPL's Python: nn.Parameter, nn.Module as the base of the user's classes
(parameters and submodules registered in the order they are assigned), nn.Linear with
PyTorch's initialisation from the seeded generator, activations, Sequential, Flatten and the
loss modules (which call the F.* rows)."""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR
from .pygroups import zero_grads
from .pymodules import EXTRA, Native
from .pynnextra import extra_repr
from .pyvalues import Instance
from .values import Str

PARAMETERS: weakref.WeakSet = weakref.WeakSet()  # the tensors that are nn.Parameters
MORE_METHODS: dict = {}  # name -> fn(ev, node, module, args, kw): nn.Module's other methods
FORWARD_HOOKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> its Hooks


def parameter(ev, node, args, kw) -> Tensor:
    data = args[0] if args else kw.get("data", (None,))[0]
    flag = args[1] if len(args) > 1 else kw.get("requires_grad", (True,))[0]
    if data is None:
        data = Tensor(np.zeros((0,), dtype=ev.dtype))
    if not isinstance(data, Tensor):
        raise DdxTypeError("Parameter() takes a Tensor")
    p = Tensor(data.value)
    p.set_requires_grad(bool(flag))
    p.label = data.display if data.label or data.name else None
    PARAMETERS.add(p)
    return p


def is_module(value: Any) -> bool:
    return isinstance(value, Builtin) or isinstance(value, Instance) and \
        getattr(value, "nn_module", False)


def own(m: Any) -> tuple[list, list]:
    """A module's own parameters and its children, each as (name, value), in order."""
    attrs = m.attrs if isinstance(m, Instance) else m.state
    params = [(k, v) for k, v in attrs.items() if isinstance(v, Tensor) and v in PARAMETERS]
    kids = [(k, v) for k, v in attrs.items() if is_module(v)]
    return params, kids


def named_modules(m: Any) -> list:
    """Pre-order, as PyTorch's named_modules (explicit stack; each module once)."""
    out, seen, stack = [], set(), [("", m)]
    while stack:
        prefix, mod = stack.pop()
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        out.append((prefix, mod))
        kids = own(mod)[1]
        for name, kid in reversed(kids):
            stack.append((f"{prefix}.{name}" if prefix else name, kid))
    return out


def named_parameters(m: Any) -> list:
    out, seen = [], set()
    for prefix, mod in named_modules(m):
        for name, p in own(mod)[0]:
            if id(p) not in seen:
                seen.add(id(p))
                out.append((Str(f"{prefix}.{name}" if prefix else name), p))
    return out


def _set_training(m: Any, flag: bool) -> None:
    for _, mod in named_modules(m):
        (mod.attrs if isinstance(mod, Instance) else mod.state)["training"] = flag


def call_module(ev, node, m: Any, args: list, kw: dict) -> Any:
    hooks = FORWARD_HOOKS.get(m) if FORWARD_HOOKS else None
    if hooks is not None:  # (register_forward_hook's: ddx/app/pymodhooks.py)
        return hooks.run(ev, node, m, args, kw, _forward)
    return _forward(ev, node, m, args, kw)


def _forward(ev, node, m: Any, args: list, kw: dict) -> Any:
    from .pycalls import call_value
    from .pyexpr import get_attr

    forward = get_attr(ev, node, m, "forward") if isinstance(m, Instance) else None
    if forward is None:
        return m.forward(ev, node, args, kw)
    return call_value(ev, node, forward, args, kw)


def module_method(ev, node, m: Any, name: str, args: list, kw: dict) -> Any:
    """The methods every module has (nn.Module's), or NotImplemented."""
    if name == "parameters":
        return [p for _, p in named_parameters(m)]
    if name == "named_parameters":
        return [(k, p) for k, p in named_parameters(m)]
    if name in MORE_METHODS:  # (the containers' and buffers' methods: pycontainers.py)
        return MORE_METHODS[name](ev, node, m, args, kw)
    if name in ("children", "named_children"):
        kids = own(m)[1]
        return [v for _, v in kids] if name == "children" else [(Str(k), v) for k, v in kids]
    if name in ("modules", "named_modules"):
        mods = named_modules(m)
        return [v for _, v in mods] if name == "modules" else [(Str(k), v) for k, v in mods]
    if name == "zero_grad":
        return zero_grads(ev, [p for _, p in named_parameters(m)], args, kw)
    if name in ("train", "eval"):
        flag = name == "train" and (bool(args[0]) if args else True)
        _set_training(m, flag)
        return m
    if name == "state_dict":
        return OrderedDict((k, Tensor(p.value)) for k, p in named_parameters(m))
    if name == "forward" and not isinstance(m, Instance):
        return m.forward(ev, node, args, kw)
    if name == "requires_grad_":  # (to, float, double, type, cpu: pynn_dtype.py)
        for _, p in named_parameters(m):
            p.set_requires_grad(bool(args[0]) if args else True)
        return m
    return NotImplemented


def module_repr(m: Any, ev=None) -> str:
    """PyTorch's print of a module: its extra_repr's lines, then its children, indented under
    it (explicit stack); with ``ev``, a user class's own extra_repr() is called."""
    out: list[str] = []
    stack: list = [(m, "", 0, False)]
    while stack:
        mod, head, depth, closing = stack.pop()
        pad = "  " * depth
        if closing:
            out.append(pad + ")")
            continue
        kind = mod.cls.name if isinstance(mod, Instance) else mod.kind
        if hasattr(mod, "own_repr"):  # (ModuleList's runs of equal modules, ParameterList)
            lines = mod.own_repr().split("\n")
            out.extend([pad + head + lines[0]] + [pad + line for line in lines[1:]])
            continue
        kids = own(mod)[1]
        extra = extra_repr(ev, mod)
        extra_lines = extra.split("\n") if extra else []
        if not kids and len(extra_lines) <= 1:
            out.append(f"{pad}{head}{kind}({extra})")
            continue
        out.append(f"{pad}{head}{kind}(")
        out.extend(f"{pad}  {line}" for line in extra_lines)
        stack.append((mod, "", depth, True))
        for name, kid in reversed(kids):
            stack.append((kid, f"({name}): ", depth + 1, False))
    return "\n".join(out)


class ModuleBase:
    """nn.Module, as the base of a user's class: the REPL's Instance gets its state here."""

    def __repr__(self) -> str:
        return "<class 'torch.nn.modules.module.Module'>"

    def is_instance(self, value: Any) -> bool:  # isinstance(m, nn.Module)
        return is_module(value)

    def init_instance(self, obj: Instance) -> None:
        obj.nn_module = True
        obj.attrs["training"] = True
        obj.py_call = lambda ev, node, args, kw: call_module(ev, node, obj, args, kw)

    def class_attr(self, name: str) -> Any:
        if name in METHOD_NAMES or name in MORE_METHODS:
            return ModuleMethod(name)
        return None


METHOD_NAMES = frozenset(("parameters", "named_parameters", "children", "named_children",
                          "modules", "named_modules", "zero_grad", "train", "eval",
                          "state_dict", "to", "cpu", "float", "double", "requires_grad_"))


class ModuleMethod:
    """nn.Module's own method, found through a user's class: bound to the instance."""

    bind_to_instance = True

    def __init__(self, name: str) -> None:
        self.name = name

    def py_call(self, ev, node, args, kw):
        obj, *rest = args
        return module_method(ev, node, obj, self.name, rest, kw)


class Builtin:
    """A module ddx provides (nn.Linear, nn.ReLU, ...): ``state`` holds its parameters,
    submodules and ``training``, in order."""

    kind = "Module"

    def __init__(self) -> None:
        self.state: dict = {"training": True}

    def extra(self) -> str:
        return ""

    def __repr__(self) -> str:
        return module_repr(self)

    def py_call(self, ev, node, args, kw):
        return call_module(ev, node, self, args, kw)

    def py_attr(self, ev, node, name):
        if name in self.state:
            return self.state[name]
        got = getattr(self, "attr_" + name, None)
        if got is not None:
            return got
        from .pyerrors import PyException

        raise PyException.error("AttributeError",
                                f"'{self.kind}' object has no attribute '{name}'")

    def py_method(self, ev, node, name, args, kw):
        got = module_method(ev, node, self, name, args, kw)
        if got is not NotImplemented:
            return got
        from .pycalls import call_value

        return call_value(ev, node, self.py_attr(ev, node, name), args, kw)


def uniform(ev, shape: tuple, bound: float) -> np.ndarray:
    """uniform_(-bound, bound) from the seeded generator, as torch.nn.init draws it."""
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    n = math.prod(shape)
    return GENERATOR.uniform(n, np.dtype(ev.dtype), -bound, bound).reshape(shape)


def new_parameter(value: np.ndarray) -> Tensor:
    """A new nn.Parameter holding ``value`` (a module's own weight or bias)."""
    p = Tensor(value, True)
    PARAMETERS.add(p)
    return p


class Linear(Builtin):
    kind = "Linear"

    def __init__(self, ev, n_in: int, n_out: int, bias: bool) -> None:
        super().__init__()
        self.n_in, self.n_out = n_in, n_out
        # kaiming_uniform_(weight, a=sqrt(5)), then the bias from U(-1/sqrt(in), 1/sqrt(in)),
        # with torch/nn/init.py's arithmetic
        gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
        std = gain / math.sqrt(n_in) if n_in else 0.0
        self.state["weight"] = new_parameter(uniform(ev, (n_out, n_in), math.sqrt(3.0) * std))
        if bias:
            b = 1 / math.sqrt(n_in) if n_in > 0 else 0
            self.state["bias"] = new_parameter(uniform(ev, (n_out,), b))
        else:
            self.state["bias"] = None
        self.state["in_features"], self.state["out_features"] = n_in, n_out

    def extra(self) -> str:
        return (f"in_features={self.n_in}, out_features={self.n_out}, "
                f"bias={self.state['bias'] is not None}")

    def forward(self, ev, node, args, kw):
        (x,) = args
        w, b = self.state["weight"], self.state["bias"]
        return ev.functions["linear"](ev, node, [x, w] if b is None else [x, w, b], {})


def _linear(ev, node, args, kw):
    names = ("in_features", "out_features", "bias", "device", "dtype")
    if len(args) > len(names):
        raise DdxTypeError(f"Linear.__init__() takes from 3 to 6 positional arguments but "
                           f"{len(args) + 1} were given")
    given = dict(zip(names, args))
    given.update({k: v[0] for k, v in kw.items() if k in names})
    for k in kw:
        if k not in names:
            raise DdxTypeError(f"Linear.__init__() got an unexpected keyword argument '{k}'")
    n_in, n_out = int(_number(given["in_features"])), int(_number(given["out_features"]))
    return Linear(ev, n_in, n_out, bool(given.get("bias", True)))


def _number(v):
    return v.value.item() if isinstance(v, Tensor) else v


class Activation(Builtin):
    def __init__(self, kind: str, fn: str, kw: dict, shown: str = "") -> None:
        super().__init__()
        self.kind, self.fn, self.kw, self.shown = kind, fn, kw, shown

    def extra(self) -> str:
        return self.shown

    def forward(self, ev, node, args, kw):
        return ev.functions[self.fn](ev, node, list(args), dict(self.kw))


def _activation(kind: str, fn: str, params: tuple = ()):
    def make(ev, node, args, kw):
        given = dict(zip(params, args))
        given.update({k: v[0] for k, v in kw.items()})
        shown = ", ".join(f"{k}={_number(v)}" for k, v in given.items())
        return Activation(kind, fn, {k: (v, node.pos) for k, v in given.items()}, shown)
    return Native(kind, make)


class Sequential(Builtin):
    kind = "Sequential"

    def __init__(self, mods: list) -> None:
        super().__init__()
        for i, m in enumerate(mods):
            self.state[str(i)] = m

    def forward(self, ev, node, args, kw):
        from .pycalls import call_value

        (x,) = args
        for _, m in own(self)[1]:
            x = call_value(ev, node, m, [x], {})
        return x

    def py_getitem(self, key):
        """seq[i] (negative from the end) and seq[a:b] (a Sequential of those), as PyTorch's."""
        mods = [m for _, m in own(self)[1]]
        if isinstance(key, slice):
            return Sequential(mods[key])
        i = _number(key)
        if isinstance(i, bool) or not isinstance(i, int):
            raise DdxTypeError(f"indices must be integers or slices, not {type(i).__name__}")
        if not -len(mods) <= i < len(mods):
            from .pyerrors import PyException

            raise PyException.error("IndexError", f"index {i} is out of range")
        return mods[i]

    def py_len(self) -> int:
        return len(own(self)[1])

    def py_iter(self):
        return iter([m for _, m in own(self)[1]])


def _sequential(ev, node, args, kw):
    for m in args:
        if not is_module(m):
            raise DdxTypeError(f"{type(m).__name__} is not a Module subclass")
    return Sequential(list(args))


LOSSES = {"MSELoss": "mse_loss", "L1Loss": "l1_loss", "CrossEntropyLoss": "cross_entropy",
          "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
          "BCELoss": "binary_cross_entropy", "NLLLoss": "nll_loss",
          "SmoothL1Loss": "smooth_l1_loss", "HuberLoss": "huber_loss"}


def register() -> None:
    nn = EXTRA["torch.nn"]
    nn.update({
        "Module": ModuleBase(), "Parameter": Native("Parameter", parameter),
        "Linear": Native("Linear", _linear), "Sequential": Native("Sequential", _sequential),
        "ReLU": _activation("ReLU", "relu"), "Tanh": _activation("Tanh", "tanh"),
        "Sigmoid": _activation("Sigmoid", "sigmoid"),
        "Softmax": _activation("Softmax", "softmax", ("dim",)),
        "LogSoftmax": _activation("LogSoftmax", "log_softmax", ("dim",)),
        "LeakyReLU": _activation("LeakyReLU", "leaky_relu", ("negative_slope",)),
        "GELU": _activation("GELU", "gelu"),
        "Flatten": _activation("Flatten", "flatten", ("start_dim", "end_dim")),
        "Identity": _activation("Identity", "clone"),
    })
    for kind, fn in LOSSES.items():
        nn[kind] = _activation(kind, fn)


register()

__all__ = ["MORE_METHODS", "PARAMETERS", "ModuleBase", "is_module", "module_repr", "named_parameters",
           "new_parameter", "parameter"]
