"""torch.nn.functional.bilinear and nn.Bilinear: ATen's bilinear is _trilinear, which
sumproduct_pair makes two batched products of (x1 times the weight's (in1, out * in2) matrix,
then each sample's (out, in2) rows times its x2), plus the bias (AddBackward0); the weight and
bias drawn from U(-1/sqrt(in1), 1/sqrt(in1)) by the seeded generator, as nn.Bilinear's
reset_parameters draws them."""

from __future__ import annotations

import math

import numpy as np

from ..graph.values import weak
from .pyfunc6 import REQUIRED, bind, call, error, num, tensor
from .pymodules import EXTRA, Native
from .pynn import PARAMETERS, uniform
from .pynn6 import Module6


def bilinear(ev, node, args, kw):
    g = bind("bilinear", (("input1", REQUIRED), ("input2", REQUIRED), ("weight", REQUIRED),
                          ("bias", None)), args, kw)
    x1 = tensor(node, g["input1"], "input1", "bilinear")
    x2 = tensor(node, g["input2"], "input2", "bilinear")
    w = tensor(node, g["weight"], "weight", "bilinear")
    if w.value.ndim != 3:
        raise error(f"bilinear(): weight input must have 3 dimensions, but got {w.value.ndim}",
                    node)
    o, i, j = w.shape
    if x1.shape[-1] != i or x2.shape[-1] != j or x1.shape[:-1] != x2.shape[:-1]:
        raise error(f"bilinear(): input dimensions do not match: got {x1.value.ndim} and "
                    f"{x2.value.ndim}", node)
    lead = x1.shape[:-1]
    n = int(np.prod(lead)) if lead else 1
    right = call(ev, node, "reshape", call(ev, node, "permute", w, (weak(1), weak(0), weak(2))),
                 (1, i, o * j))
    t = call(ev, node, "bmm", call(ev, node, "reshape", x1, (1, n, i)), right)
    t = call(ev, node, "bmm", call(ev, node, "reshape", t, (n, o, j)),
             call(ev, node, "reshape", x2, (n, j, 1)))
    out = call(ev, node, "reshape", t, (*lead, o))
    if g["bias"] is not None:
        out = call(ev, node, "add", out, g["bias"])
    return out


class Bilinear(Module6):
    def forward(self, ev, node, args, kw):
        if len(args) != 2 or kw:
            raise error(f"Bilinear.forward() takes 3 positional arguments but {len(args) + 1} "
                        "were given", node)
        s = self.state
        extra = [] if s["bias"] is None else [s["bias"]]
        return bilinear(ev, node, [args[0], args[1], s["weight"], *extra], {})


def _bilinear(ev, node, args, kw):
    g = bind("Bilinear.__init__", (("in1_features", REQUIRED), ("in2_features", REQUIRED),
                                   ("out_features", REQUIRED), ("bias", True),
                                   ("device", None), ("dtype", None)), list(args), kw)
    i, j, o = (int(num(g[k])) for k in ("in1_features", "in2_features", "out_features"))
    bound = 1 / math.sqrt(i)
    m = Bilinear("Bilinear", None, {}, f"in1_features={i}, in2_features={j}, "
                                       f"out_features={o}, bias={bool(num(g['bias']))}")
    from ..graph.tensor import Tensor

    weight = Tensor(uniform(ev, (o, i, j), bound), True)
    PARAMETERS.add(weight)
    m.state["weight"] = weight
    m.state["bias"] = None
    if num(g["bias"]):
        bias = Tensor(uniform(ev, (o,), bound), True)
        PARAMETERS.add(bias)
        m.state["bias"] = bias
    m.state.update(in1_features=i, in2_features=j, out_features=o)
    return m


def register() -> None:
    EXTRA["torch.nn.functional"]["bilinear"] = Native("bilinear", bilinear)
    EXTRA["torch"].setdefault("bilinear", EXTRA["torch.nn.functional"]["bilinear"])
    EXTRA["torch.nn"]["Bilinear"] = Native("Bilinear", _bilinear)


register()

__all__ = ["Bilinear", "bilinear"]
