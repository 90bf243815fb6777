"""grad_fn._saved_self, _saved_other, _saved_result, _saved_exponent, ...: the values PyTorch's
backward nodes save, by node name (torch 2.13's names and rules: a tensor input is saved only
when the gradient of an input that requires grad reads it, else it is None). A saved tensor
raises PyTorch's error once backward has freed the graph; plain values (alpha, dim, sizes) stay."""

from __future__ import annotations

import numpy as np

from ..engine.reverse import FREED_TEXT
from ..errors import DdxRuntimeError
from ..graph.calls_conv import MISSING_BIAS
from ..graph.tensor import Function, Tensor
from ..ops.kernels_conv import max_pool_indices
from .values import Str

# (attribute, kind, argument). kinds: "in" input i saved when any input in ``needs`` requires
# grad; "result" the output; "kw" a keyword's value (default); "sizes"/"numel" of input 0; "fn"
# a function of the node
_SELF = (("self", "in", (0, (0,))),)
_RESULT = (("result", "result", None),)
_BINARY = (("self", "in", (0, (1,))), ("other", "in", (1, (0,))))
_REDUCE_DIM = (("dim", "kw", ("dim", None)), ("keepdim", "kw", ("keepdim", False)),
               ("self_sym_sizes", "sizes", None))

SAVED: dict[str, tuple] = {
    "MulBackward0": _BINARY,
    "DivBackward0": (("self", "in", (0, (1,))), ("other", "in", (1, (0, 1)))),
    "Atan2Backward0": (("self", "in", (0, (0, 1))), ("other", "in", (1, (0, 1)))),
    "MaximumBackward0": (("self", "in", (0, (0, 1))), ("other", "in", (1, (0, 1)))),
    "MinimumBackward0": (("self", "in", (0, (0, 1))), ("other", "in", (1, (0, 1)))),
    "AddBackward0": (("alpha", "kw", ("alpha", 1)),),
    "SubBackward0": (("alpha", "kw", ("alpha", 1)),),
    "PowBackward0": (("exponent", "kw", ("exponent", 2)), ("self", "in", (0, (0,)))),
    "PowBackward1": (("exponent", "in", (1, (0, 1))), ("result", "result", None),
                     ("self", "in", (0, (0, 1)))),
    "PowBackward2": (("exponent", "in", (0, (0,))), ("result", "result", None),
                     ("self", "kw", ("base", None))),
    "SumBackward0": (("self_sym_sizes", "sizes", None),),
    "SumBackward1": _REDUCE_DIM,
    "MeanBackward0": (("self_sym_numel", "numel", None), ("self_sym_sizes", "sizes", None)),
    "MeanBackward1": _REDUCE_DIM + (("self_sym_numel", "numel", None),),
    "ViewBackward0": (("self_sym_sizes", "sizes", None),),
    "ExpandBackward0": (("self_sym_sizes", "sizes", None),),
    "ReshapeAliasBackward0": (("self_sym_sizes", "sizes", None),),
    "UnsafeViewBackward0": (("self_sym_sizes", "sizes", None),),
    "SoftmaxBackward0": (("dim", "kw", ("dim", None)), ("result", "result", None)),
    "LogSoftmaxBackward0": (("dim", "kw", ("dim", None)), ("result", "result", None)),
    "MseLossBackward0": (("reduction", "reduction", None), ("self", "in", (0, (0, 1))),
                         ("target", "in", (1, (0, 1)))),
    "ClampBackward1": (("max", "kw", ("max", None)), ("min", "kw", ("min", None)),
                       ("self", "in", (0, (0,)))),
    "MaxBackward1": _RESULT + _SELF,
    "MinBackward1": _RESULT + _SELF,
    "ProdBackward0": _RESULT + _SELF,
    "MmBackward0": (("mat2", "in", (1, (0,))), ("mat2_sym_sizes", "sizes1", None),
                    ("self", "in", (0, (1,))), ("self_sym_sizes", "sizes", None)),
    "DotBackward0": (("self", "in", (0, (1,))), ("tensor", "in", (1, (0,)))),
    "LeakyReluBackward0": (("negative_slope", "kw", ("negative_slope", 0.01)),) + _SELF,
    "GeluBackward0": (("approximate", "kw", ("approximate", Str("none"))),) + _SELF,
    "CatBackward0": (("dim", "kw", ("dim", 0)),),
    "CumsumBackward0": (("dim", "kw", ("dim", None)),),
    "ConvolutionBackward0": (
        ("bias_sym_sizes_opt", "fn", lambda fn: (0,) if fn.inputs[2] in MISSING_BIAS
         else tuple(fn.inputs[2].value.shape)),
        ("dilation", "kw", ("dilation", None)), ("groups", "kw", ("groups", 1)),
        ("input", "in", (0, (0, 1, 2))),
        ("output_padding", "fn", lambda fn: fn.kw.get("output_padding",
                                                      (0,) * len(fn.kw["stride"]))),
        ("padding", "kw", ("padding", None)), ("stride", "kw", ("stride", None)),
        ("transposed", "fn", lambda fn: fn.op.name == "conv_transpose"), ("weight", "in", (1, (0, 1, 2)))),
}
_POOL = (("ceil_mode", "kw", ("ceil_mode", False)), ("kernel_size", "kw", ("kernel_size", None)),
         ("padding", "kw", ("padding", None)), ("self", "in", (0, (0,))),
         ("stride", "kw", ("stride", ())))
for _n in ("2D", "3D"):
    SAVED[f"MaxPool{_n}WithIndicesBackward0"] = _POOL + (
        ("dilation", "kw", ("dilation", None)),
        ("result1", "fn", lambda fn: Tensor(max_pool_indices(
            fn.inputs[0].value, len(fn.kw["kernel_size"]), **fn.kw)[1])))
    SAVED[f"AvgPool{_n}Backward0"] = _POOL + (
        ("count_include_pad", "kw", ("count_include_pad", True)),
        ("divisor_override", "kw", ("divisor_override", None)))
for _name in ("Log", "Sin", "Cos", "Abs", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Log1P",
              "Erf", "Log2", "Log10", "Asinh", "Acosh", "Atanh", "Lgamma", "Digamma", "Sgn",
              "Sign", "Trunc", "Floor", "Ceil", "Round", "Erfc"):
    SAVED.setdefault(f"{_name}Backward0", _SELF)
for _name in ("Exp", "Tanh", "Sigmoid", "Relu", "Sqrt", "Reciprocal", "Tan", "Expm1", "Rsqrt",
              "Exp2"):
    SAVED.setdefault(f"{_name}Backward0", _RESULT)
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def names(fn: Function) -> list[str]:
    """The _saved_* attributes of a node (for completion and dir())."""
    return sorted("_saved_" + attr for attr, _, _ in SAVED.get(fn.name, ()))


def _tensor(fn: Function, t: Tensor):
    if fn.freed:
        raise DdxRuntimeError(FREED_TEXT)
    if t.weak:  # a Python number: PyTorch saves it as a 0-d tensor of its own dtype
        return Tensor(np.asarray(t.value))
    return t


def saved(fn: Function, name: str):
    """grad_fn._saved_<attr>, or NotImplemented when the node has no such attribute."""
    attr = name[len("_saved_"):]
    for key, kind, arg in SAVED.get(fn.name, ()):
        if key != attr:
            continue
        if kind == "in":
            i, needs = arg
            if i >= len(fn.inputs) or not any(
                    j < len(fn.inputs) and fn.inputs[j].requires_grad for j in needs):
                return None
            return _tensor(fn, fn.inputs[i])
        if kind == "result":
            if fn.freed:
                raise DdxRuntimeError(FREED_TEXT)
            return _result(fn)
        if kind == "kw":
            key_name, default = arg
            value = fn.kw.get(key_name, default)
            if key_name == "exponent" and fn.op.name == "square":
                value = 2
            return _plain(value)
        if kind == "reduction":
            return _REDUCTIONS.get(str(fn.kw.get("reduction", "mean")), 1)
        if kind in ("sizes", "sizes1"):
            t = fn.inputs[1 if kind == "sizes1" else 0]
            return tuple(int(n) for n in t.value.shape)
        if kind == "fn":
            return arg(fn)
        if kind == "numel":
            return int(fn.inputs[0].value.size)
    return NotImplemented


def _result(fn: Function) -> Tensor:
    """The saved output: a new tensor on the same values and node (PyTorch's unpacked saved
    output is not the output object itself: ``y.grad_fn._saved_result is y`` is False)."""
    out = Tensor(fn.value, True)
    out.grad_fn = fn
    was = fn.output
    if was is not None:
        out.op, out.inputs, out.kw, out.label = was.op, was.inputs, was.kw, was.label
    return out


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


__all__ = ["SAVED", "names", "saved"]
