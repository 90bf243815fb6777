"""torch.nn.functional's glu, prelu, rrelu, pairwise_distance, pixel_shuffle,
pixel_unshuffle, pad (constant, reflect, replicate, circular), one_hot, embedding and
dropout1d/2d/3d, built from the ops ATen builds them from (glu is a * sigmoid(b), prelu a
where over x > 0, pairwise_distance ``norm(x1 - x2 + eps, p, -1)``, the pads an index_select
per padded dimension, so their values are copies and exact), the last node named as
PyTorch names it (GluBackward0, PreluKernelBackward0, ...); rrelu's training noise drawn as
ATen's CPU loop draws it (one uniform double of the generator per element <= 0)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pyerrors import PyException
from .pymodules import EXTRA, Native

REQUIRED = object()


def num(v: Any) -> Any:
    """A number argument as Python has it (a wrapped number or a 1-element tensor)."""
    if isinstance(v, Tensor) and v.value.size == 1:
        return v.value.item()
    return v


def bind(name: str, params: tuple, args: list, kw: dict) -> dict:
    """Python's binding of a call's arguments to ``params`` ((name, default) pairs)."""
    names = [n for n, _ in params]
    if len(args) > len(names):
        raise DdxTypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} "
                           "were given")
    given = dict(params)
    given.update(zip(names, args))
    for k, (v, _) in kw.items():
        if k not in given:
            raise DdxTypeError(f"{name}() got an unexpected keyword argument '{k}'")
        given[k] = v
    for k, v in given.items():
        if v is REQUIRED:
            raise DdxTypeError(f"{name}() missing 1 required positional argument: '{k}'")
    return given


def ints(v: Any) -> list:
    """A list, tuple or 1-d tensor of ints (``[2, 3]`` or ``(2, 3)`` or ``torch.Size``)."""
    if isinstance(v, Tensor):
        return [int(i) for i in np.asarray(v.value).reshape(-1)]
    return [int(num(i)) for i in v]


def call(ev, node, name: str, *args, **kw) -> Any:
    """torch.<name>(*args, **kw), as the user would call it."""
    return ev.functions[name](ev, node, list(args), {k: (v, node.pos) for k, v in kw.items()})


def tensor(node, v: Any, what: str, fn: str) -> Tensor:
    if not isinstance(v, Tensor) or v.weak:
        raise DdxTypeError(f"{fn}(): argument '{what}' (position 1) must be Tensor, not "
                           f"{type(v).__name__}", start=node.pos, end=node.end)
    return v


def renamed(t: Tensor, grad_fn: str) -> Tensor:
    """The node PyTorch records as one op, named as PyTorch names it."""
    if t.grad_fn is not None:
        t.grad_fn.name = grad_fn
    return t


def error(text: str, node=None) -> DdxRuntimeError:
    if node is None:
        return DdxRuntimeError(text)
    return DdxRuntimeError(text, start=node.pos, end=node.end)


def glu(ev, node, args, kw):
    g = bind("glu", (("input", REQUIRED), ("dim", -1)), args, kw)
    x = tensor(node, g["input"], "input", "glu")
    if x.value.ndim == 0:
        raise error("glu does not support scalars because halving size must be even", node)
    dim = int(num(g["dim"]))
    d = dim % x.value.ndim
    if x.shape[d] % 2:
        raise error(f"Halving dimension must be even, but dimension {d} is size "
                    f"{x.shape[d]}", node)
    from .pyfused import fused, glu_value, glu_vjp

    a, b = np.split(x.value, 2, axis=d)
    s = call(ev, node, "sigmoid", Tensor(np.ascontiguousarray(b))).value  # (backward's)
    value = glu_value(x.value, d) if x.value.dtype in (np.float32, np.float64) else \
        (a * s).astype(x.value.dtype)
    return fused(ev, node, "GluBackward0", value, [x], (glu_vjp(a, s, d),))


def prelu(ev, node, args, kw):
    g = bind("prelu", (("input", REQUIRED), ("weight", REQUIRED)), args, kw)
    x, w = tensor(node, g["input"], "input", "prelu"), tensor(node, g["weight"], "weight",
                                                                  "prelu")
    if w.value.ndim > 1:
        raise error("prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
                    f"{w.value.ndim}", node)
    if w.value.size != 1:
        if x.value.ndim == 0:
            raise error("Not allow zero-dim input tensor.", node)
        channels = x.shape[1] if x.value.ndim > 1 else 1
        if channels != w.value.size:
            raise error("Mismatch of parameter numbers and input channel size. Found parameter "
                        f"numbers = {w.value.size} and channel size = {channels}.", node)
        shape = [1] * x.value.ndim
        shape[1 if x.value.ndim > 1 else 0] = w.value.size
        w = call(ev, node, "reshape", w, tuple(shape))
    out = call(ev, node, "where", call(ev, node, "gt", x, weak(0)), x, call(ev, node, "mul", w, x))
    return renamed(out, "PreluKernelBackward0")


def rrelu(ev, node, args, kw):
    g = bind("rrelu", (("input", REQUIRED), ("lower", 1.0 / 8), ("upper", 1.0 / 3),
                       ("training", False), ("inplace", False)), args, kw)
    x = tensor(node, g["input"], "input", "rrelu")
    lower, upper = float(num(g["lower"])), float(num(g["upper"]))
    if x.value.dtype == np.float32:  # (ATen's opmath_t: the bounds as floats)
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    if lower > upper:
        raise error("Lower bound should be less than or equal to the upper bound", node)
    if num(g["inplace"]):
        raise error("rrelu(inplace=True) is not supported by ddx", node)
    if not num(g["training"]):
        out = call(ev, node, "leaky_relu", x, weak((lower + upper) / 2))
        return renamed(out, "RreluWithNoiseBackward0")
    from ..ops.rng import GENERATOR

    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    flat = x.value.reshape(-1)
    neg = flat <= 0
    words = GENERATOR.words64(int(neg.sum()))
    u = (words & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    noise = np.ones(flat.shape, dtype=x.value.dtype)
    noise[neg] = (u * (upper - lower) + lower).astype(x.value.dtype)
    out = call(ev, node, "mul", x, Tensor(noise.reshape(x.shape)))
    return renamed(out, "RreluWithNoiseBackward0")


def pairwise_distance(ev, node, args, kw):
    g = bind("pairwise_distance", (("x1", REQUIRED), ("x2", REQUIRED), ("p", 2.0),
                                   ("eps", 1e-6), ("keepdim", False)), args, kw)
    x1 = tensor(node, g["x1"], "x1", "pairwise_distance")
    x2 = tensor(node, g["x2"], "x2", "pairwise_distance")
    dim = max(x1.value.ndim, x2.value.ndim) - 1
    diff = call(ev, node, "add", call(ev, node, "sub", x1, x2), weak(float(num(g["eps"]))))
    return renamed(call(ev, node, "norm", diff, weak(float(num(g["p"]))), dim=weak(dim),
                        keepdim=bool(num(g["keepdim"]))), "NormBackward1")


def _shuffle(ev, node, args, kw, name: str, up: bool):
    key = "upscale_factor" if up else "downscale_factor"
    g = bind(name, (("input", REQUIRED), (key, REQUIRED)), args, kw)
    x = tensor(node, g["input"], "input", name)
    r = int(num(g[key]))
    if x.value.ndim < 3:
        raise error(f"{name} expects input to have at least 3 dimensions, but got input with "
                    f"{x.value.ndim} dimension(s)", node)
    *batch, c, h, w = x.shape
    n = len(batch)
    if up:
        if c % (r * r):
            raise error(f"pixel_shuffle expects its input's 'channel' dimension to be divisible "
                        f"by the square of upscale_factor, but input.size(-3)={c} is not "
                        f"divisible by {r * r}", node)
        split = (*batch, c // (r * r), r, r, h, w)
        order = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
        shape = (*batch, c // (r * r), h * r, w * r)
    else:
        if h % r or w % r:
            which, size = ("height", h) if h % r else ("width", w)
            raise error(f"pixel_unshuffle expects {which} to be divisible by downscale_factor, "
                        f"but input.size({-2 if which == 'height' else -1})={size} is not "
                        f"divisible by {r}", node)
        split = (*batch, c, h // r, r, w // r, r)
        order = (*range(n), n, n + 2, n + 4, n + 1, n + 3)
        shape = (*batch, c * r * r, h // r, w // r)
    out = call(ev, node, "reshape", call(ev, node, "permute", call(ev, node, "reshape", x, split),
                                         order), shape)
    return renamed(out, "PixelShuffleBackward0" if up else "PixelUnshuffleBackward0")


def _indices(n: int, before: int, after: int, mode: str) -> np.ndarray:
    i = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "circular":
        return i % n
    period = 2 * (n - 1)  # reflect
    i = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(i >= n, period - i, i)


def pad(ev, node, args, kw):
    g = bind("pad", (("input", REQUIRED), ("pad", REQUIRED), ("mode", "constant"),
                     ("value", None)), args, kw)
    x = tensor(node, g["input"], "input", "pad")
    pads = ints(g["pad"])
    mode = g["mode"]
    if len(pads) % 2:
        raise error("Padding length must be divisible by 2", node)
    if len(pads) // 2 > x.value.ndim:
        raise error("Padding length should be less than or equal to two times the input "
                    f"dimension but got padding length {len(pads)} and input of dimension "
                    f"{x.value.ndim}", node)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise PyException.error("NotImplementedError", f"Unrecognised padding mode {mode}")
    if mode != "constant" and g["value"] is not None and num(g["value"]) != 0:
        raise error(f"Padding mode \"{mode}\" doesn't take in value argument.", node)
    if mode == "circular" and min(pads) >= 0:
        for k in range(len(pads) // 2):
            if max(pads[2 * k], pads[2 * k + 1]) > x.shape[x.value.ndim - 1 - k]:
                raise error("Padding value causes wrapping around more than once.", node)
        from .pypad6 import circular

        return circular(ev, node, x, pads)
    out = x
    for k in range(len(pads) // 2):
        before, after = pads[2 * k], pads[2 * k + 1]
        dim = x.value.ndim - 1 - k
        n = out.shape[dim]
        if mode == "constant":
            out = _constant(ev, node, out, dim, before, after,
                            0.0 if g["value"] is None else num(g["value"]))
            continue
        if mode == "reflect" and (before >= n or after >= n):
            raise error(f"Argument #4: Padding size should be less than the corresponding input "
                        f"dimension, but got: padding ({before}, {after}) at dimension {dim} of "
                        f"input {list(x.shape)}", node)
        if mode == "circular" and (before > n or after > n):
            raise error("Padding value causes wrapping around more than once.", node)
        idx = Tensor(_indices(n, before, after, mode).astype(np.int64))
        out = call(ev, node, "index_select", out, weak(dim), idx)
    if out is x:
        return call(ev, node, "clone", x)
    names = {"constant": "ConstantPadNdBackward0", "replicate": "ReplicationPad{}DBackward0",
             "reflect": "ReflectionPad{}DBackward0", "circular": "CopySlices"}
    return renamed(out, names[mode].format(len(pads) // 2))


def _constant(ev, node, x: Tensor, dim: int, before: int, after: int, value) -> Tensor:
    if before < 0 or after < 0:
        n = x.shape[dim]
        start, stop = max(-before, 0), n - max(-after, 0)
        x = call(ev, node, "narrow", x, weak(dim), weak(start), weak(stop - start))
        before, after = max(before, 0), max(after, 0)
    if not before and not after:
        return x
    parts = []
    for size in (before, after):
        shape = list(x.shape)
        shape[dim] = size
        parts.append(Tensor(np.full(shape, value, dtype=x.value.dtype)))
    return call(ev, node, "cat", [parts[0], x, parts[1]], weak(dim))


def one_hot(ev, node, args, kw):
    g = bind("one_hot", (("tensor", REQUIRED), ("num_classes", -1)), args, kw)
    t = tensor(node, g["tensor"], "self", "one_hot")
    if t.value.dtype != np.int64:
        raise error("one_hot is only applicable to index tensor of type LongTensor.", node)
    k = int(num(g["num_classes"]))
    if t.value.size and t.value.min() < 0:
        raise error("Class values must be non-negative.", node)
    if k == -1:
        k = int(t.value.max()) + 1 if t.value.size else 0
    elif t.value.size and t.value.max() >= k:
        raise error("Class values must be smaller than num_classes.", node)
    return Tensor((t.value[..., None] == np.arange(k)).astype(np.int64))


def embedding_lookup(ev, node, idx: Tensor, w: Tensor, padding_idx: Any) -> Tensor:
    """F.embedding: weight.index_select(0, idx.reshape(-1)).view(idx.shape + (dim,)); no
    gradient reaches the row ``padding_idx``."""
    if idx.value.dtype.kind not in "iu":
        raise error("Expected tensor for argument #1 'indices' to have one of the following "
                    "scalar types: Long, Int; but got torch.FloatTensor instead (while checking "
                    "arguments for embedding)", node)
    n = w.shape[0]
    if idx.value.size and (idx.value.min() < -n or idx.value.max() >= n):
        raise PyException.error("IndexError", "index out of range in self")
    flat = Tensor(idx.value.reshape(-1).astype(np.int64))
    rows = call(ev, node, "index_select", w, weak(0), flat)
    if padding_idx is not None:
        p = int(num(padding_idx)) % n
        keep = Tensor((flat.value != p)[:, None])
        rows = call(ev, node, "where", keep, rows, Tensor(rows.value))
    out = call(ev, node, "reshape", rows, (*idx.shape, w.shape[1]))
    return renamed(out, "EmbeddingBackward0")


def embedding(ev, node, args, kw):
    g = bind("embedding", (("input", REQUIRED), ("weight", REQUIRED), ("padding_idx", None),
                           ("max_norm", None), ("norm_type", 2.0),
                           ("scale_grad_by_freq", False), ("sparse", False)), args, kw)
    if g["max_norm"] is not None or num(g["scale_grad_by_freq"]) or num(g["sparse"]):
        raise error("embedding's max_norm, scale_grad_by_freq and sparse are not supported by "
                    "ddx", node)
    return embedding_lookup(ev, node, tensor(node, g["input"], "input", "embedding"),
                            tensor(node, g["weight"], "weight", "embedding"), g["padding_idx"])


_WARN_RANK = ("{name}: Received a {d}-D input to {name}, which is deprecated and will result "
              "in an error in a future release. To retain the behavior and silence this "
              "warning, please use dropout instead. Note that {name} exists to provide "
              "channel-wise dropout on inputs with {k} spatial dimensions, a channel dimension, "
              "and an optional batch dimension (i.e. {a}D or {b}D inputs).")
_WARN_3D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.")


def dropout_args(node, args, kw, name: str, training: bool) -> tuple[Tensor, float, bool]:
    """(input, p, training) of a dropout call; PyTorch's ValueError for p outside [0, 1]."""
    g = bind(name, (("input", REQUIRED), ("p", 0.5), ("training", training), ("inplace", False)),
             args, kw)
    x = tensor(node, g["input"], "input", name)
    p = float(num(g["p"]))
    if not 0 <= p <= 1:
        raise PyException.error("ValueError", f"dropout probability has to be between 0 and 1, "
                                f"but got {p}")
    if num(g["inplace"]):
        raise error(f"{name}(inplace=True) is not supported by ddx", node)
    return x, p, bool(num(g["training"]))


def feature_dropout(ev, node, args, kw, name: str, ranks: tuple) -> Tensor:
    """F.dropout1d/2d/3d as functional.py runs them: an unbatched input unsqueezed (and the
    result squeezed back), then ATen's feature dropout: one bernoulli(1 - p) draw per
    (batch, channel), divided by 1 - p, times the input; dropout2d takes a 3-d input as
    (N, C, L), with PyTorch's warnings."""
    from ..graph.create_dropout import bernoulli_mask

    x, p, train = dropout_args(node, args, kw, name, True)
    d = x.value.ndim
    if name == "dropout1d" and d not in ranks:
        raise error(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that "
                    "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                    "dimension, a channel dimension, and an optional batch dimension (i.e. 2D "
                    "or 3D inputs).", node)
    if name != "dropout1d" and d not in ranks:
        ev.warnings.append(_WARN_RANK.format(name=name, d=d, k=ranks[0] - 1, a=ranks[0],
                                             b=ranks[1]))
    if name == "dropout2d" and d == 3:
        ev.warnings.append(_WARN_3D)
    batched = name == "dropout2d" or d == ranks[1]
    u = x if batched else call(ev, node, "unsqueeze", x, weak(0))
    if train and p != 0 and u.value.size:
        if u.value.ndim < 2:
            raise error("Feature dropout requires at least 2 dimensions in the input", node)
        shape = (*u.shape[:2], *[1] * (u.value.ndim - 2))
        dt = x.value.dtype
        if p == 1:
            noise = np.zeros((), dtype=dt)
        else:
            noise = bernoulli_mask(ev, shape, 1 - p, dt)
            noise = (noise / dt.type(1 - p)).astype(dt)
        u = call(ev, node, "mul", u, Tensor(noise))
    return u if batched else call(ev, node, "squeeze", u, weak(0))


FUNCTIONS = {
    "glu": glu, "prelu": prelu, "rrelu": rrelu, "pairwise_distance": pairwise_distance,
    "pixel_shuffle": lambda ev, node, a, k: _shuffle(ev, node, a, k, "pixel_shuffle", True),
    "pixel_unshuffle": lambda ev, node, a, k: _shuffle(ev, node, a, k, "pixel_unshuffle",
                                                       False),
    "pad": pad, "one_hot": one_hot, "embedding": embedding,
    "dropout1d": lambda ev, node, a, k: feature_dropout(ev, node, a, k, "dropout1d", (2, 3)),
    "dropout2d": lambda ev, node, a, k: feature_dropout(ev, node, a, k, "dropout2d", (3, 4)),
    "dropout3d": lambda ev, node, a, k: feature_dropout(ev, node, a, k, "dropout3d", (4, 5)),
}
TORCH = ("prelu", "rrelu", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle")


def register() -> None:
    space = EXTRA["torch.nn.functional"]
    for name, fn in FUNCTIONS.items():
        space[name] = Native(name, fn)
    for name in TORCH:
        EXTRA["torch"].setdefault(name, space[name])


register()

__all__ = ["FUNCTIONS", "REQUIRED", "bind", "call", "dropout_args", "embedding_lookup", "error", "ints",
           "num", "renamed", "tensor"]
