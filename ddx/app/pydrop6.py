"""torch.nn.functional's alpha_dropout and feature_alpha_dropout (ATen's _dropout_impl with
alpha_dropout: the bernoulli(1 - p) mask of dropout, per element or per (batch, channel),
then ``input * (mask * a) + b`` with b = (mask - 1) * alpha * a + alpha * a * p, in the
input's dtype), channel_shuffle and native_channel_shuffle, and their modules nn.AlphaDropout,
FeatureAlphaDropout and ChannelShuffle."""

from __future__ import annotations

import math

import numpy as np

from ..graph.create_dropout import bernoulli_mask
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, dropout_args, error, num, renamed, tensor
from .pymodules import EXTRA, Native
from .pynn6 import Module6

_ALPHA = 1.7580993408473766


def _alpha(ev, node, args, kw, name: str, feature: bool) -> Tensor:
    x, p, training = dropout_args(node, args, kw, name, False)
    if p == 0 or not training or x.value.size == 0:
        return x
    dt = x.value.dtype
    if p == 1:
        return call(ev, node, "mul", x, Tensor(np.zeros((), dt)))
    shape = x.shape
    if feature:
        if x.value.ndim < 2:
            raise error("Feature dropout requires at least 2 dimensions in the input", node)
        shape = (*x.shape[:2], *[1] * (x.value.ndim - 2))
    noise = bernoulli_mask(ev, shape, 1 - p, dt)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    d = dt.type
    b = (((noise + d(-1)).astype(dt) * d(_ALPHA * a)).astype(dt) + d(_ALPHA * a * p)).astype(dt)
    noise = (noise * d(a)).astype(dt)
    return call(ev, node, "add", call(ev, node, "mul", x, Tensor(noise)), Tensor(b))


def channel_shuffle(ev, node, args, kw):
    g = bind("channel_shuffle", (("input", REQUIRED), ("groups", REQUIRED)), args, kw)
    x = tensor(node, g["input"], "input", "channel_shuffle")
    groups = int(num(g["groups"]))
    if groups <= 0:
        raise error(f"Number of groups to divide channels in must be positive. Value of groups:"
                    f"{groups}", node)
    if x.value.ndim < 3:
        raise error(f"channel_shuffle expects input to have at least 3 dimensions, but got "
                    f"input with sizes {list(x.shape)}", node)
    n, c, *rest = x.shape
    if c % groups:
        raise error(f"Number of channels must be divisible by groups. Got {c} channels and "
                    f"{groups} groups.", node)
    split = call(ev, node, "reshape", x, (n, groups, c // groups, *rest))
    out = call(ev, node, "reshape", call(ev, node, "transpose", split, weak(1), weak(2)),
               tuple(x.shape))
    return renamed(out, "ChannelShuffleBackward0")


class Dropping(Module6):
    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise error(f"{self.kind}.forward() takes 2 positional arguments but "
                        f"{len(args) + 1} were given", node)
        return self.fn(ev, node, [args[0]], {"p": (self.kw["p"], node.pos),
                                             "training": (self.state["training"], node.pos)})


def _dropping(kind: str, fn):
    def make(ev, node, args, kw):
        g = bind(f"{kind}.__init__", (("p", 0.5), ("inplace", False)), list(args), kw)
        p = num(g["p"])
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
            raise PyException.error("ValueError", "dropout probability has to be between 0 "
                                    f"and 1, but got {p}")
        return Dropping(kind, fn, {"p": weak(float(p))},
                        f"p={float(p)!r}, inplace={bool(num(g['inplace']))}")
    return Native(kind, make)


def _shuffle_module(ev, node, args, kw):
    g = bind("ChannelShuffle.__init__", (("groups", REQUIRED),), list(args), kw)
    groups = int(num(g["groups"]))
    return Module6("ChannelShuffle", channel_shuffle, {"groups": weak(groups)},
                   f"groups={groups}")


FUNCTIONS = {
    "alpha_dropout": lambda ev, node, a, k: _alpha(ev, node, a, k, "alpha_dropout", False),
    "feature_alpha_dropout": lambda ev, node, a, k: _alpha(ev, node, a, k,
                                                           "feature_alpha_dropout", True),
    "channel_shuffle": channel_shuffle,
    "native_channel_shuffle": channel_shuffle,
}


def register() -> None:
    space, nn = EXTRA["torch.nn.functional"], EXTRA["torch.nn"]
    for name, fn in FUNCTIONS.items():
        space[name] = Native(name, fn)
    EXTRA["torch"].setdefault("channel_shuffle", space["channel_shuffle"])
    EXTRA["torch"].setdefault("native_channel_shuffle", space["native_channel_shuffle"])
    nn["AlphaDropout"] = _dropping("AlphaDropout", FUNCTIONS["alpha_dropout"])
    nn["FeatureAlphaDropout"] = _dropping("FeatureAlphaDropout",
                                          FUNCTIONS["feature_alpha_dropout"])
    nn["ChannelShuffle"] = Native("ChannelShuffle", _shuffle_module)


register()

__all__ = ["FUNCTIONS", "channel_shuffle"]
