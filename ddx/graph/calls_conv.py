"""Callers for convolution and pooling: torch.nn.functional's conv1d/2d/3d, max_pool1d/2d/3d
and avg_pool1d/2d/3d (also torch.conv1d/2d/3d, torch.max_pool1d/2d/3d and torch.avg_pool1d,
as PyTorch has them), with PyTorch's checks and messages, their arguments normalised to tuples
for the rows of ddx/ops/rows_conv.py. As ATen records them: an unbatched convolution is
unsqueezed, convolved and squeezed (SqueezeBackward1 over ConvolutionBackward0); padding='same'
with an odd total is a constant pad first; a missing bias is a constant zero (next_functions
shows (None, 0), as PyTorch's); 1-d pools are the 2-d rows on an unsqueezed input; 2-d and 3-d
pools take one or more leading dimensions as they come."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..errors import DdxShapeError
from ..lang.tree import Ast
from ..ops.kernels_conv import max_pool_indices, pool_geometry, transposed_shape
from .args import Evaluating, bind, truth_arg
from .calls_shape import fail, int_of, tensor_arg
from .tensor import Tensor
from .values import weak

# the zero tensors that stand for a bias not given (grad_fn._saved_bias_sym_sizes_opt is (0,))
MISSING_BIAS: weakref.WeakSet = weakref.WeakSet()
_SAME_WARNING = ("Using padding='same' with even kernel lengths and odd dilation may require a "
                 "zero-padded copy of the input be created")


def _size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _ints(ev: Evaluating, node: Ast, value: Any) -> tuple[int, ...]:
    if isinstance(value, (tuple, list)):
        return tuple(int_of(ev, node, v) for v in value)
    if isinstance(value, Tensor) and not value.weak:
        return tuple(int(v) for v in np.asarray(value.value).reshape(-1))
    return (int_of(ev, node, value),)


def _expand(node: Ast, values: tuple, what: str, k: int) -> tuple:
    """ATen's expand_param_if_needed: one value for every dimension, or exactly k."""
    if len(values) == 1:
        return values * k
    if len(values) != k:
        raise fail(node, f"expected {what} to be a single integer value or a list of {k} values "
                         f"to match the convolution dimensions, but got {what}={_size(values)}")
    return values


def _conv_operands(ev: Evaluating, node: Ast, name: str, n: int, given: dict) -> tuple:
    """input, weight, bias (or None) and whether the input was batched (an unbatched one
    unsqueezed to a batch of one, as PyTorch does)."""
    x = tensor_arg(ev, node, given["input"])
    w = tensor_arg(ev, node, given["weight"])
    b = given.get("bias")
    b = None if b is None else tensor_arg(ev, node, b)
    batched = _conv_input(ev, node, name, n, x)
    if not batched:
        x = ev.functions["unsqueeze"](ev, node, [x, weak(0)], {})
    return x, w, b, batched


def _conv_input(ev, node, name: str, n: int, x: Tensor) -> bool:
    """Whether x is batched, checked as at::conv<n>d checks it."""
    nd = x.value.ndim
    if nd not in (n + 1, n + 2):
        raise fail(node, f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
                         f"but got input of size: {_size(x.shape)}")
    return nd == n + 2


def _same_padding(ev, node, x: Tensor, w_shape: tuple, stride, dilation) -> tuple:
    """padding='same': (the input, padded on the right where the total is odd, and the
    symmetric padding), as ATen's _convolution_mode."""
    k = len(w_shape) - 2
    if any(s != 1 for s in stride):
        raise fail(node, "padding='same' is not supported for strided convolutions")
    odd = False
    left = []
    for i in range(k):
        total = dilation[i] * (w_shape[2 + i] - 1)
        left.append(total // 2)
        if total % 2:  # one more zero on the right of this dimension
            dim = x.value.ndim - k + i
            shape = list(x.shape)
            shape[dim] = 1
            zeros = Tensor(np.zeros(shape, x.value.dtype))
            x = ev.functions["cat"](ev, node, [[x, zeros], weak(dim)], {})
            if x.grad_fn is not None:
                x.grad_fn.name = "ConstantPadNdBackward0"
            odd = True
    if odd:
        ev.warnings.append(_SAME_WARNING)
    return x, tuple(left)


def _check_conv(node, x: Tensor, w: Tensor, b: Tensor | None, stride, padding, dilation,
                groups: int, transposed: bool = False) -> None:
    ws, xs = w.shape, x.shape
    k = len(ws) - 2
    if groups <= 0:
        raise fail(node, "non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise fail(node, "non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise fail(node, "negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise fail(node, f"dilation should be greater than zero, but got {_size(dilation)}")
    if len(xs) != len(ws):
        raise fail(node, f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional "
                         f"weight {_size(ws)}, but got {len(xs)}-dimensional input of size "
                         f"{_size(xs)} instead")
    if ws[0] < groups:
        raise fail(node, f"Given groups={groups}, expected weight to be at least {groups} at "
                         f"dimension 0, but got weight of size {_size(ws)} instead")
    if ws[0] % groups:
        raise fail(node, f"Given groups={groups}, expected weight to be divisible by {groups} "
                         f"at dimension 0, but got weight of size [{_size(ws)}] instead")
    if transposed:
        if xs[1] != ws[0]:
            raise fail(node, f"Given transposed=1, weight of size {_size(ws)}, expected "
                             f"input{_size(xs)} to have {ws[0]} channels, but got {xs[1]} "
                             "channels instead")
        if b is not None and (b.value.ndim != 1 or b.shape[0] != ws[1] * groups):
            raise fail(node, f"Given transposed=1, weight of size {_size(ws)}, expected bias to "
                             f"be 1-dimensional with {ws[1] * groups} elements, but got bias of "
                             f"size {_size(b.shape)} instead")
        return
    if xs[1] != ws[1] * groups:
        raise fail(node, f"Given groups={groups}, weight of size {_size(ws)}, expected "
                         f"input{_size(xs)} to have {ws[1] * groups} channels, but got {xs[1]} "
                         "channels instead")
    if b is not None and (b.value.ndim != 1 or b.shape[0] != ws[0]):
        raise fail(node, f"Given weight of size {_size(ws)}, expected bias to be 1-dimensional "
                         f"with {ws[0]} elements, but got bias of size {_size(b.shape)} instead")
    padded = [xs[2 + i] + 2 * padding[i] for i in range(k)]
    kernel = [(ws[2 + i] - 1) * dilation[i] + 1 for i in range(k)]
    if any(p < q for p, q in zip(padded, kernel)):
        raise fail(node, f"Calculated padded input size per channel: "
                         f"({' x '.join(map(str, padded))}). Kernel size: "
                         f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                         "actual input size")


def _kind(a: Tensor) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long"}.get(str(a.value.dtype),
                                                                         str(a.value.dtype))


def _c_name(a: Tensor) -> str:
    return {"float64": "double", "float32": "float"}.get(str(a.value.dtype), str(a.value.dtype))


def conv(n: int):
    name = f"conv{n}d"

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, ("input", "weight", "bias", "stride", "padding",
                                      "dilation", "groups"), required=2)
        x, w, b, batched = _conv_operands(ev, node, name, n, given)
        k = w.value.ndim - 2
        stride = _expand(node, _ints(ev, node, given.get("stride", 1)), "stride", k)
        dilation = _expand(node, _ints(ev, node, given.get("dilation", 1)), "dilation", k)
        padding = given.get("padding", 0)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise fail(node, f"Invalid padding string: '{padding}'")
            if padding == "same":
                x, padding = _same_padding(ev, node, x, w.shape, stride, dilation)
            else:
                padding = (0,) * k
        padding = _expand(node, _ints(ev, node, padding), "padding", k)
        groups = int_of(ev, node, given.get("groups", 1))
        if x.value.dtype != w.value.dtype:
            raise fail(node, f"expected scalar type {_kind(x)} but found {_kind(w)}")
        if b is not None and b.value.dtype != x.value.dtype:
            raise fail(node, f"Input type ({_c_name(x)}) and bias type ({_c_name(b)}) should be "
                             "the same")
        _check_conv(node, x, w, b, stride, padding, dilation, groups)
        if b is None:
            bias = Tensor(np.zeros(w.shape[0], w.value.dtype))
            MISSING_BIAS.add(bias)
        else:
            bias = b
        y = ev.op("convolution", node, [x, w, bias], {"stride": stride, "padding": padding,
                                                      "dilation": dilation, "groups": groups})
        return y if batched else ev.functions["squeeze"](ev, node, [y, weak(0)], {})
    return call


def _dims_text(values, names: tuple, what: str) -> str:
    return " ".join(f"{what}_{name}: {v}" for name, v in zip(names, values))


def conv_transpose(n: int):
    name = f"conv_transpose{n}d"
    axes = ("height", "width") if n == 2 else ("width",) if n == 1 else \
        ("depth", "height", "width")

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, kw, ("input", "weight", "bias", "stride", "padding",
                                      "output_padding", "groups", "dilation"), required=2)
        x, w, b, batched = _conv_operands(ev, node, name, n, given)
        k = w.value.ndim - 2
        stride = _expand(node, _ints(ev, node, given.get("stride", 1)), "stride", k)
        padding = _expand(node, _ints(ev, node, given.get("padding", 0)), "padding", k)
        output_padding = _expand(node, _ints(ev, node, given.get("output_padding", 0)),
                                 "output_padding", k)
        dilation = _expand(node, _ints(ev, node, given.get("dilation", 1)), "dilation", k)
        groups = int_of(ev, node, given.get("groups", 1))
        if x.value.dtype != w.value.dtype:
            raise fail(node, f"expected scalar type {_kind(x)} but found {_kind(w)}")
        _check_conv(node, x, w, b, stride, padding, dilation, groups, transposed=True)
        if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
            raise fail(node, "output padding must be smaller than either stride or dilation, "
                             f"but got {_dims_text(output_padding, axes, 'output_padding')} "
                             f"{_dims_text(stride, axes, 'stride')} "
                             f"{_dims_text(dilation, axes, 'dilation')}")
        shape = transposed_shape(x.shape, w.shape, stride, padding, output_padding, dilation,
                                 groups)
        if any(s < 1 for s in shape[2:]):
            raise fail(node, f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})"
                             f". Calculated output size per channel: "
                             f"({' x '.join(map(str, shape[2:]))}). Output size is too small")
        if b is None:
            bias = Tensor(np.zeros(w.shape[1] * groups, w.value.dtype))
            MISSING_BIAS.add(bias)
        else:
            bias = b
        y = ev.op("conv_transpose", node, [x, w, bias],
                  {"stride": stride, "padding": padding, "output_padding": output_padding,
                   "dilation": dilation, "groups": groups})
        return y if batched else ev.functions["squeeze"](ev, node, [y, weak(0)], {})
    return call


# --- pooling -------------------------------------------------------------------------------

_PLURAL = {1: "one", 2: "two", 3: "three"}


def _pool_param(ev, node, name: str, n: int, value: Any, what: str, omit: bool) -> tuple:
    values = _ints(ev, node, value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        word = "either be omitted, a single int," if omit else "either be a single int,"
        raise fail(node, f"{name}: {what} must {word} or a tuple of {_PLURAL[n]} ints")
    return values


def _pool_args(ev, node, name: str, n: int, given: dict, dilated: bool) -> dict:
    k = _pool_param(ev, node, name, n, given["kernel_size"], "kernel_size", False)
    stride = given.get("stride")
    empty = stride is None or isinstance(stride, (tuple, list)) and not stride
    # (an omitted stride stays (), as PyTorch saves it: the kernels take the kernel size)
    stride = () if empty else _pool_param(ev, node, name, n, stride, "stride", True)
    pad = _pool_param(ev, node, name, n, given.get("padding", 0), "padding", False)
    dilation = _pool_param(ev, node, name, n, given.get("dilation", 1), "dilation", False) \
        if dilated else (1,) * n
    ceil = truth_arg(node, "ceil_mode", given.get("ceil_mode", False))
    if any(s == 0 for s in stride or k):
        raise fail(node, "stride should not be zero")
    if any(i <= 0 for i in k):
        raise fail(node, "kernel size should be greater than zero, but got " +
                   " ".join(f"k{'TDHW'[4 - n + i]}: {v}" for i, v in enumerate(k)))
    if any(d <= 0 for d in dilation):
        raise fail(node, "dilation should be greater than zero, but got " +
                   " ".join(f"dilation{'TDHW'[4 - n + i] if n > 1 else 'W'}: {v}"
                            for i, v in enumerate(dilation)).replace("dilationD", "dilationT"))
    for i in range(n):
        if pad[i] > ((k[i] - 1) * dilation[i] + 1) // 2:
            raise fail(node, f"pad should be at most half of effective kernel size, but got "
                             f"pad={pad[i]}, kernel_size={k[i]} and dilation={dilation[i]}")
    kw = {"kernel_size": k, "stride": stride, "padding": pad, "ceil_mode": ceil}
    if dilated:
        kw["dilation"] = dilation
    return kw


def _check_size(node, shape: tuple, kw: dict, n: int) -> None:
    out = pool_geometry(shape, kw, n)[-1]
    if any(o < 1 for o in out):
        lead = shape[-n - 1] if len(shape) > n else 1
        raise fail(node, f"Given input size: ({'x'.join(map(str, (lead, *shape[-n:])))}). "
                         f"Calculated output size: ({'x'.join(map(str, (lead, *out)))}). Output "
                         "size is too small")


def _pool_input(node, name: str, n: int, x: Tensor, kind: str) -> None:
    nd = x.value.ndim
    if kind == "max" and n == 1:
        if nd not in (2, 3):
            raise fail(node, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                             f"dim batch size for input, but got:{_size(x.shape)}")
    elif kind == "avg" and n == 1:
        if nd not in (2, 3):
            raise fail(node, f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                             "argument #1 'self' (while checking arguments for avg_pool1d)")
    elif nd not in (n + 1, n + 2) or any(s == 0 for s in x.shape[-n - 1:]):
        if kind == "avg" and n == 2 and nd < 3:  # (ATen indexes input.size(-3) first)
            raise DdxShapeError(f"Dimension out of range (expected to be in range of "
                                f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got -3)",
                                start=node.pos, end=node.end)
        raise fail(node, f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")


def pool(kind: str, n: int):
    name = f"{kind}_pool{n}d"
    names = ("input", "kernel_size", "stride", "padding")
    names += ("dilation", "ceil_mode", "return_indices") if kind == "max" else \
        ("ceil_mode", "count_include_pad", "divisor_override")

    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
        given = bind(node, args, kw, names, required=2)
        x = tensor_arg(ev, node, given["input"])
        _pool_input(node, name, n, x, kind)
        params = _pool_args(ev, node, name, n, given, kind == "max")
        if kind == "avg":
            params["count_include_pad"] = truth_arg(node, "count_include_pad",
                                                    given.get("count_include_pad", True))
            override = given.get("divisor_override")
            if override is not None:
                override = int_of(ev, node, override)
                if override == 0:
                    raise fail(node, "divisor must be not zero")
            params["divisor_override"] = override
        if n == 1:  # (ATen: the 2-d pool of x.unsqueeze(-2), squeezed after)
            params["stride"] = params["stride"] or params["kernel_size"]
            params = {k: (v if type(v) is not tuple else (1 if k != "padding" else 0, *v))
                      for k, v in params.items()}
            x = ev.functions["unsqueeze"](ev, node, [x, weak(-2)], {})
        _check_size(node, x.shape, params, max(n, 2))
        y = ev.op(f"{kind}_pool{max(n, 2)}d", node, [x], params)
        indices = None
        if kind == "max" and given.get("return_indices") is not None and \
                truth_arg(node, "return_indices", given["return_indices"]):
            indices = Tensor(max_pool_indices(x.value, max(n, 2), **params)[1])
        if n == 1:
            y = ev.functions["squeeze"](ev, node, [y, weak(-2)], {})
            if indices is not None:
                indices = Tensor(indices.value.reshape(y.shape))
        return y if indices is None else (y, indices)
    return call


def adaptive_avg_pool2d(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """F.adaptive_avg_pool2d(input, output_size): to an output of one element per channel,
    at::adaptive_avg_pool2d's own shortcut, input.mean((-1, -2), keepdim=True) (MeanBackward1,
    mean's bits); to other sizes ATen's kernel (a row; None keeps the input's size)."""
    given = bind(node, args, kw, ("input", "output_size"), required=2)
    x = tensor_arg(ev, node, given["input"])
    size = given["output_size"]
    sizes = (size, size) if not isinstance(size, (tuple, list)) else tuple(size)
    if isinstance(size, Tensor) and not size.weak and size.value.ndim == 1:
        sizes = tuple(weak(int(v)) for v in size.value)  # (the one-liner's [2, 3])
    if len(sizes) != 2:
        raise fail(node, "adaptive_avg_pool2d: output_size must be 2")
    out = tuple(None if s is None else int_of(ev, node, s) for s in sizes)
    if out == (1, 1):
        return ev.functions["mean"](ev, node, [x, (weak(-1), weak(-2))],
                                    {"keepdim": (True, node.pos)})
    if x.value.ndim not in (3, 4) or any(n == 0 for n in x.shape[-3:]):
        raise fail(node, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                   f"{list(x.shape)}")
    out = tuple(x.shape[-2 + k] if s is None else s for k, s in enumerate(out))
    if any(n <= 0 for n in out):
        raise fail(node, "adaptive_avg_pool2d: elements of output_size must be greater than "
                   f"or equal to 0 but received {list(out)}")
    return ev.op("adaptive_avg_pool2d", node, [x], {"output_size": out})


__all__ = ["MISSING_BIAS", "NAMED", "NAMED_SPACES", "adaptive_avg_pool2d", "conv", "conv_transpose", "pool"]

NAMED: dict = {f"conv{n}d": conv(n) for n in (1, 2, 3)}
NAMED.update({f"conv_transpose{n}d": conv_transpose(n) for n in (1, 2, 3)})
NAMED.update({f"{kind}_pool{n}d": pool(kind, n) for kind in ("max", "avg") for n in (1, 2, 3)})
NAMED["adaptive_avg_pool2d"] = adaptive_avg_pool2d
NAMED_SPACES: dict = {name: ("torch", "F") for name in NAMED}
NAMED_SPACES["adaptive_avg_pool2d"] = ("F",)
NAMED_SPACES["avg_pool2d"] = NAMED_SPACES["avg_pool3d"] = ("F",)
