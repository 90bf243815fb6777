"""torch.nn's GLU, PReLU, RReLU, Unflatten, PairwiseDistance, CosineSimilarity,
PixelShuffle, PixelUnshuffle, the padding modules (ConstantPad, ZeroPad, ReflectionPad,
ReplicationPad, CircularPad in 1-3 d), Dropout1d/2d/3d and Embedding, over the F.* functions
of pyfunc6.py, printed as PyTorch prints them; their parameters made as PyTorch makes them
(PReLU's filled with ``init``, Embedding's drawn from N(0, 1) by the seeded generator, its
``padding_idx`` row zeroed)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from ..ops.rng import GENERATOR
from . import pyfunc6
from .pyfunc6 import REQUIRED, bind, call, num
from .pymodules import EXTRA, Native
from .pynn import PARAMETERS, Builtin, new_parameter


def embedding_weight(ev, n: int, d: int, pad, given, freeze: bool) -> Tensor:
    """An Embedding's (or EmbeddingBag's) weight parameter: the given _weight's values shared
    (as Parameter(_weight)), or an (n, d) draw of N(0, 1) from the seeded generator with the
    padding row zeroed, as reset_parameters does."""
    if given is not None:
        weight = Tensor(given.value)
        weight.set_requires_grad(not freeze)
        PARAMETERS.add(weight)
        return weight
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    values = GENERATOR.normal(n * d, np.dtype(ev.dtype), 0.0, 1.0).reshape(n, d)
    if pad is not None:
        values[pad] = 0
    return new_parameter(values)


def _one(kind: str, args: list) -> Any:
    if len(args) != 1:
        raise DdxTypeError(f"{kind}.forward() takes 2 positional arguments but {len(args) + 1} "
                           "were given")
    return args[0]


class Module6(Builtin):
    """A module over one F.* function: ``fn(input, **kw)``, shown with ``shown``."""

    def __init__(self, kind: str, fn, kw: dict, shown: str, arity: int = 1) -> None:
        super().__init__()
        self.kind, self.fn, self.kw, self.shown, self.arity = kind, fn, kw, shown, arity

    def extra(self) -> str:
        return self.shown

    def forward(self, ev, node, args, kw):
        if len(args) != self.arity or kw:
            raise DdxTypeError(f"{self.kind}.forward() takes {self.arity + 1} positional "
                               f"arguments but {len(args) + 1} were given")
        extra = {k: (weak(v) if type(v) in (int, float) else v, node.pos)  # (a default
                 for k, v in self.kw.items()}  # number is the Python number a call passes)
        if self.kind.startswith(("Dropout", "RReLU")):
            extra["training"] = (self.state["training"], node.pos)
        return self.fn(ev, node, list(args), extra)


def _text(v: Any) -> str:
    return repr(num(v))


def _tuple(v: Any, n: int) -> tuple:
    if isinstance(v, (list, tuple)) or isinstance(v, Tensor) and not v.weak:
        return tuple(pyfunc6.ints(v))
    return (int(num(v)),) * n


def _maker(kind: str, params: tuple, build):
    def make(ev, node, args, kw):
        return build(ev, bind(f"{kind}.__init__", params, list(args), kw))
    return Native(kind, make)


def _f(name: str):
    return pyfunc6.FUNCTIONS[name]


def _glu(ev, g):
    return Module6("GLU", _f("glu"), {"dim": g["dim"]}, f"dim={_text(g['dim'])}")


class PReLU(Module6):
    def forward(self, ev, node, args, kw):
        x = _one("PReLU", args)
        return _f("prelu")(ev, node, [x, self.state["weight"]], {})


def _prelu(ev, g):
    n = int(num(g["num_parameters"]))
    m = PReLU("PReLU", None, {}, f"num_parameters={n}")
    m.state["num_parameters"] = n
    m.state["weight"] = new_parameter(np.full((n,), num(g["init"]), dtype=ev.dtype))
    return m


def _rrelu(ev, g):
    lower, upper = num(g["lower"]), num(g["upper"])
    shown = f"lower={lower!r}, upper={upper!r}" + (", inplace=True" if num(g["inplace"]) else "")
    return Module6("RReLU", _f("rrelu"), {"lower": weak(lower), "upper": weak(upper)}, shown)


class Unflatten(Module6):
    def forward(self, ev, node, args, kw):
        x = _one("Unflatten", args)
        return call(ev, node, "unflatten", x, weak(self.state["dim"]), self.state["sizes"])


def _unflatten(ev, g):
    sizes = tuple(pyfunc6.ints(g["unflattened_size"]))
    dim = int(num(g["dim"]))
    m = Unflatten("Unflatten", None, {}, f"dim={dim}, unflattened_size={sizes}")
    m.state["dim"], m.state["sizes"] = dim, sizes
    return m


def _pairwise(ev, g):
    return Module6("PairwiseDistance", _f("pairwise_distance"),
                   {k: g[k] for k in ("p", "eps", "keepdim")}, "", 2)


def _cosine(ev, g):
    return Module6("CosineSimilarity", lambda ev, node, a, k: ev.functions["cosine_similarity"](
        ev, node, a, k), {"dim": g["dim"], "eps": g["eps"]}, "", 2)


def _shuffle(kind: str, key: str, fn: str):
    def build(ev, g):
        r = int(num(g[key]))
        return Module6(kind, _f(fn), {key: weak(r)}, f"{key}={r}")
    return build


def _pad(kind: str, n: int, mode: str):
    def build(ev, g):
        padding = _tuple(g["padding"], 2 * n)
        kw = {"pad": padding, "mode": mode}
        shown = f"{padding}"
        if kind.startswith("ConstantPad"):
            kw["value"] = g["value"]
            shown = f"padding={padding}, value={_text(g['value'])}"
        return Module6(kind, _f("pad"), kw, shown)
    return build


def _feature_dropout(kind: str, fn: str):
    def build(ev, g):
        p = num(g["p"])
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
            from .pyerrors import PyException

            raise PyException.error("ValueError", "dropout probability has to be between 0 "
                                    f"and 1, but got {p}")
        return Module6(kind, _f(fn), {"p": weak(float(p))},
                       f"p={float(p)!r}, inplace={bool(num(g['inplace']))}")
    return build


class Embedding(Module6):
    def forward(self, ev, node, args, kw):
        x = _one("Embedding", args)
        return pyfunc6.embedding_lookup(ev, node, x, self.state["weight"],
                                        self.state["padding_idx"])


def embedding_module(ev, g):
    n, d = int(num(g["num_embeddings"])), int(num(g["embedding_dim"]))
    for key in ("max_norm",):
        if g[key] is not None:
            from ..errors import DdxRuntimeError

            raise DdxRuntimeError("Embedding(max_norm=...) is not supported by ddx")
    if num(g["scale_grad_by_freq"]) or num(g["sparse"]):
        from ..errors import DdxRuntimeError

        raise DdxRuntimeError("Embedding's scale_grad_by_freq and sparse are not supported "
                              "by ddx")
    pad = g["padding_idx"]
    if pad is not None:
        pad = int(num(pad))
        if not -n <= pad < n:
            from .pyerrors import PyException

            raise PyException.error("AssertionError", "Padding_idx must be within num_embeddings")
        pad %= n
    weight = embedding_weight(ev, n, d, pad, g["_weight"], bool(num(g["_freeze"])))
    shown = f"{n}, {d}" + (f", padding_idx={pad}" if pad is not None else "")
    m = Embedding("Embedding", None, {}, shown)
    m.state["weight"] = weight
    m.state["num_embeddings"], m.state["embedding_dim"] = n, d
    m.state["padding_idx"] = pad
    return m


_DROP = (("p", 0.5), ("inplace", False))
CLASSES = {
    "GLU": ((("dim", -1),), _glu),
    "PReLU": ((("num_parameters", 1), ("init", 0.25), ("device", None), ("dtype", None)),
              _prelu),
    "RReLU": ((("lower", 1.0 / 8), ("upper", 1.0 / 3), ("inplace", False)), _rrelu),
    "Unflatten": ((("dim", REQUIRED), ("unflattened_size", REQUIRED)), _unflatten),
    "PairwiseDistance": ((("p", 2.0), ("eps", 1e-6), ("keepdim", False)), _pairwise),
    "CosineSimilarity": ((("dim", 1), ("eps", 1e-8)), _cosine),
    "PixelShuffle": ((("upscale_factor", REQUIRED),),
                     _shuffle("PixelShuffle", "upscale_factor", "pixel_shuffle")),
    "PixelUnshuffle": ((("downscale_factor", REQUIRED),),
                       _shuffle("PixelUnshuffle", "downscale_factor", "pixel_unshuffle")),
    "Dropout1d": (_DROP, _feature_dropout("Dropout1d", "dropout1d")),
    "Dropout2d": (_DROP, _feature_dropout("Dropout2d", "dropout2d")),
    "Dropout3d": (_DROP, _feature_dropout("Dropout3d", "dropout3d")),
    "Embedding": ((("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED),
                   ("padding_idx", None), ("max_norm", None), ("norm_type", 2.0),
                   ("scale_grad_by_freq", False), ("sparse", False), ("_weight", None),
                   ("_freeze", False), ("device", None), ("dtype", None)), embedding_module),
}
for _n in (1, 2, 3):
    CLASSES[f"ConstantPad{_n}d"] = ((("padding", REQUIRED), ("value", REQUIRED)),
                                    _pad(f"ConstantPad{_n}d", _n, "constant"))
    CLASSES[f"ZeroPad{_n}d"] = ((("padding", REQUIRED),), _pad(f"ZeroPad{_n}d", _n, "constant"))
    for _kind, _mode in (("Reflection", "reflect"), ("Replication", "replicate"),
                         ("Circular", "circular")):
        CLASSES[f"{_kind}Pad{_n}d"] = ((("padding", REQUIRED),),
                                       _pad(f"{_kind}Pad{_n}d", _n, _mode))


def register() -> None:
    nn = EXTRA["torch.nn"]
    for kind, (params, build) in CLASSES.items():
        nn[kind] = _maker(kind, params, build)


register()

__all__ = ["CLASSES", "Embedding", "Module6", "embedding_module"]
