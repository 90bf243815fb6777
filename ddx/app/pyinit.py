"""torch.nn.init in the REPL and ``ddx run``: a tensor's values set in place, with
torch/nn/init.py's arithmetic and draws from the seeded generator (ops/rng.py), as
torch.manual_seed makes them; under no_grad, as PyTorch runs them, so a parameter can be
initialised; each returns its tensor."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxTypeError, DdxValueError
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR
from .pymodules import EXTRA, MODULES, Native, PyModule

_GAINS = {"linear": 1.0, "identity": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "conv_transpose1d": 1.0, "conv_transpose2d": 1.0, "conv_transpose3d": 1.0,
          "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """torch.nn.init.calculate_gain."""
    if nonlinearity in _GAINS:
        return _GAINS[nonlinearity]
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise DdxValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise DdxValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(t: Tensor) -> tuple[int, int]:
    shape = t.value.shape
    if len(shape) < 2:
        raise DdxValueError("Fan in and fan out can not be computed for tensor with fewer than "
                            "2 dimensions")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _set(ev, t: Tensor, values: np.ndarray) -> Tensor:
    t.value[...] = values.reshape(t.value.shape)
    return t


def _draw(ev, t: Tensor, kind: str, a: float, b: float) -> Tensor:
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    n, dtype = t.value.size, t.value.dtype
    values = GENERATOR.uniform(n, dtype, a, b) if kind == "uniform" else \
        GENERATOR.normal(n, dtype, a, b)
    return _set(ev, t, values)


def _number(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v.value.item()
    return getattr(v, "raw", v)


def _args(node, args: list, kw: dict, names: tuple, defaults: tuple) -> list:
    if not args or not isinstance(args[0], Tensor) or args[0].weak:
        raise DdxTypeError(f"{node.value}(): argument 'tensor' must be Tensor")
    values = list(defaults)
    for i, v in enumerate(args[1:]):
        if i >= len(names):
            raise DdxTypeError(f"{node.value}() takes at most {len(names) + 1} arguments")
        values[i] = _number(v)
    for key, (v, *_) in kw.items():
        if key not in names:
            raise DdxTypeError(f"{node.value}() got an unexpected keyword argument '{key}'")
        values[names.index(key)] = _number(v)
    return [args[0], *values]


def _kaiming_std(t: Tensor, a, mode: str, nonlinearity: str) -> float:
    if 0 in t.value.shape:
        return 0.0
    fan_in, fan_out = _fans(t)
    if mode not in ("fan_in", "fan_out"):
        raise DdxValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def native_init(name: str, names: tuple, defaults: tuple, body):
    def call(ev, node, args, kw):
        got = _args(node, args, kw, names, defaults)
        return body(ev, *got)
    return Native(name, call)


FUNCTIONS = {
    "zeros_": native_init("zeros_", (), (), lambda ev, t: _set(ev, t, np.zeros(t.value.shape))),
    "ones_": native_init("ones_", (), (), lambda ev, t: _set(ev, t, np.ones(t.value.shape))),
    "constant_": native_init("constant_", ("val",), (0.0,),
                         lambda ev, t, val: _set(ev, t, np.full(t.value.shape, val))),
    "uniform_": native_init("uniform_", ("a", "b"), (0.0, 1.0),
                        lambda ev, t, a, b: _draw(ev, t, "uniform", a, b)),
    "normal_": native_init("normal_", ("mean", "std"), (0.0, 1.0),
                       lambda ev, t, mean, std: _draw(ev, t, "normal", mean, std)),
    "xavier_uniform_": native_init(
        "xavier_uniform_", ("gain",), (1.0,),
        lambda ev, t, gain: _draw(ev, t, "uniform", -_xavier(t, gain) * math.sqrt(3.0),
                                  _xavier(t, gain) * math.sqrt(3.0))),
    "xavier_normal_": native_init("xavier_normal_", ("gain",), (1.0,),
                              lambda ev, t, gain: _draw(ev, t, "normal", 0.0, _xavier(t, gain))),
    "kaiming_uniform_": native_init(
        "kaiming_uniform_", ("a", "mode", "nonlinearity"), (0, "fan_in", "leaky_relu"),
        lambda ev, t, a, mode, nl: _draw(ev, t, "uniform",
                                         -math.sqrt(3.0) * _kaiming_std(t, a, mode, nl),
                                         math.sqrt(3.0) * _kaiming_std(t, a, mode, nl))),
    "kaiming_normal_": native_init(
        "kaiming_normal_", ("a", "mode", "nonlinearity"), (0, "fan_in", "leaky_relu"),
        lambda ev, t, a, mode, nl: _draw(ev, t, "normal", 0.0, _kaiming_std(t, a, mode, nl))),
    "calculate_gain": Native("calculate_gain", lambda ev, node, args, kw: calculate_gain(
        *[str(a) if i == 0 else _number(a) for i, a in enumerate(args)],
        **{k: _number(v[0]) for k, v in kw.items()})),
}


def _xavier(t: Tensor, gain) -> float:
    fan_in, fan_out = _fans(t)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


INIT = PyModule("torch.nn.init", FUNCTIONS)


def register() -> None:
    MODULES["torch.nn.init"] = INIT
    EXTRA["torch.nn"]["init"] = INIT


__all__ = ["FUNCTIONS", "INIT", "calculate_gain", "native_init"]
register()
