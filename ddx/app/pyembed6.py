"""torch.nn.functional.embedding_bag and nn.EmbeddingBag (bags of rows summed, averaged or
maxed: each bag's rows added one after another in the weight's dtype, the mean divided by
the bag's size, ``padding_idx`` rows left out, as ATen's CPU embedding_bag), and the
``from_pretrained`` class methods of nn.Embedding and nn.EmbeddingBag (the given tensor
becomes the weight, frozen unless ``freeze=False``)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, num, tensor
from .pyfused import fused
from .pymodules import EXTRA, Native
from .pynn6 import Module6, embedding_module, embedding_weight
from .pynnclass import NNClass
from .pyoptim import fma


def _bags(node, idx: np.ndarray, offsets, include_last: bool) -> list:
    if idx.ndim == 2:
        if offsets is not None:
            raise PyException.error("ValueError", "if input is 2D, then offsets has to be None, "
                                    "as input is treated is a mini-batch of fixed length "
                                    "sequences. However, found offsets of type "
                                    "Tensor")
        return [list(row) for row in idx]
    if idx.ndim != 1:
        raise PyException.error("ValueError", f"input has to be 1D or 2D Tensor, but got Tensor "
                                f"of dimension {idx.ndim}")
    if offsets is None:
        raise PyException.error("ValueError", "offsets has to be a 1D Tensor but got None")
    starts = [int(o) for o in offsets.value.reshape(-1)]
    if starts and starts[0] != 0:
        raise DdxRuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                              f"mini-batch has to start from position 0. However, got "
                              f"{starts[0]}", start=node.pos, end=node.end)
    ends = starts[1:] + ([] if include_last else [idx.size])
    if include_last:
        starts = starts[:-1]
    return [list(idx[a:b]) for a, b in zip(starts, ends)]


def embedding_bag_of(ev, node, idx: Tensor, w: Tensor, offsets, mode: str, weights,
                     include_last: bool, padding_idx) -> Tensor:
    if mode not in ("sum", "mean", "max"):
        raise PyException.error("ValueError", "mode has to be one of sum, mean or max")
    if weights is not None and mode != "sum":
        raise PyException.error(
            "NotImplementedError", f"embedding_bag: per_sample_weights was not None. "
            f"per_sample_weights is only supported for mode='sum' (got mode='{mode}'). Please "
            "open a feature request on the Pytorch GitHub.")
    W = w.value
    n, d = W.shape
    pad = None if padding_idx is None else int(num(padding_idx)) % n
    bags = _bags(node, idx.value.astype(np.int64), offsets, include_last)
    pw = None if weights is None else weights.value.reshape(-1)
    out = np.zeros((len(bags), d), dtype=W.dtype)
    used: list = []  # per bag: [(row, position in the flat input)]
    pos = 0
    for b, bag in enumerate(bags):
        rows = [(int(i), pos + k) for k, i in enumerate(bag) if pad is None or int(i) != pad]
        pos += len(bag)
        for i, _ in rows:
            if not -n <= i < n:
                raise PyException.error("IndexError", "index out of range in self")
        used.append(rows)
        if not rows:
            continue
        if mode == "max":
            out[b] = np.max(W[[i for i, _ in rows]], axis=0)
            continue
        acc = np.zeros(d, dtype=W.dtype)
        for i, k in rows:
            acc = fma(W.dtype.type(pw[k]), W[i], acc, W.dtype) if pw is not None else \
                (acc + W[i]).astype(W.dtype)
        out[b] = (acc / W.dtype.type(len(rows))).astype(W.dtype) if mode == "mean" else acc

    def vjp(g: np.ndarray) -> np.ndarray:
        grad = np.zeros_like(W)
        g = np.asarray(g, dtype=W.dtype).reshape(out.shape)
        for b, rows in enumerate(used):
            if mode == "max":
                for j in range(d):
                    col = [W[i, j] for i, _ in rows]
                    if col:
                        i = rows[int(np.argmax(col))][0]
                        grad[i, j] = (grad[i, j] + g[b, j]).astype(W.dtype)
        return grad

    def vjp_sorted(g: np.ndarray) -> np.ndarray:
        """_embedding_bag_dense_backward_cpu_sum_mean: the input's positions in the order
        ATen's (unstable) sort of the indices puts them, each an axpy of its bag's gradient
        (scale 1/bag size for the mean, a per-sample weight for the sum) into its row."""
        grad = np.zeros_like(W)
        g = np.asarray(g, dtype=W.dtype).reshape(out.shape)
        where = {k: (b, i, len(rows)) for b, rows in enumerate(used) for i, k in rows}
        for k in order:
            if int(k) not in where:
                continue
            b, i, size = where[int(k)]
            scale = 1.0 if pw is None else float(pw[k])
            if mode == "mean":
                scale /= size
            grad[i] = fma(W.dtype.type(scale), g[b], grad[i], W.dtype)
        return grad

    order = ev.functions["sort"](ev, node, [Tensor(idx.value.reshape(-1).astype(np.int64))],
                                 {})[1].value if mode != "max" else None
    return fused(ev, node, "EmbeddingBagBackward0", out, [w],
                 (vjp if mode == "max" else vjp_sorted,))


def embedding_bag(ev, node, args, kw):
    g = bind("embedding_bag", (("input", REQUIRED), ("weight", REQUIRED), ("offsets", None),
                               ("max_norm", None), ("norm_type", 2), ("scale_grad_by_freq", False),
                               ("mode", "mean"), ("sparse", False), ("per_sample_weights", None),
                               ("include_last_offset", False), ("padding_idx", None)), args, kw)
    if g["max_norm"] is not None or num(g["scale_grad_by_freq"]) or num(g["sparse"]):
        raise DdxRuntimeError("embedding_bag's max_norm, scale_grad_by_freq and sparse are not "
                              "supported by ddx", start=node.pos, end=node.end)
    return embedding_bag_of(ev, node, tensor(node, g["input"], "input", "embedding_bag"),
                            tensor(node, g["weight"], "weight", "embedding_bag"), g["offsets"],
                            g["mode"], g["per_sample_weights"],
                            bool(num(g["include_last_offset"])), g["padding_idx"])


class EmbeddingBag(Module6):
    def forward(self, ev, node, args, kw):
        g = bind("EmbeddingBag.forward", (("input", REQUIRED), ("offsets", None),
                                          ("per_sample_weights", None)), list(args), kw)
        return embedding_bag_of(ev, node, g["input"], self.state["weight"], g["offsets"],
                                self.state["mode"], g["per_sample_weights"],
                                self.state["include_last_offset"], self.state["padding_idx"])


_BAG = (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("max_norm", None),
        ("norm_type", 2.0), ("scale_grad_by_freq", False), ("mode", "mean"), ("sparse", False),
        ("_weight", None), ("include_last_offset", False), ("padding_idx", None),
        ("device", None), ("dtype", None))


def _bag(ev, g: dict, freeze: bool = False) -> EmbeddingBag:
    n, d = int(num(g["num_embeddings"])), int(num(g["embedding_dim"]))
    if g["max_norm"] is not None or num(g["scale_grad_by_freq"]) or num(g["sparse"]):
        raise DdxRuntimeError("EmbeddingBag's max_norm, scale_grad_by_freq and sparse are not "
                              "supported by ddx")
    pad = g["padding_idx"]
    if pad is not None:
        pad = int(num(pad))
        if not -n <= pad < n:
            raise PyException.error("AssertionError", "padding_idx must be within "
                                    "num_embeddings")
        pad %= n
    weight = embedding_weight(ev, n, d, pad, g["_weight"], freeze)
    mode = g["mode"]
    shown = f"{n}, {d}, mode={mode!r}" + (f", padding_idx={pad}" if pad is not None else "")
    m = EmbeddingBag("EmbeddingBag", None, {}, shown)
    m.state["weight"] = weight
    m.state.update(num_embeddings=n, embedding_dim=d, mode=mode, padding_idx=pad,
                   include_last_offset=bool(num(g["include_last_offset"])))
    return m


class PretrainedClass(NNClass):
    """nn.Embedding / nn.EmbeddingBag: the class, with its ``from_pretrained``."""

    def __init__(self, cls: NNClass, build) -> None:
        super().__init__(cls.name, cls.fn, cls.path)
        self.build = build

    def py_attr(self, ev, node, name):
        if name != "from_pretrained":
            raise PyException.error("AttributeError", f"type object '{self.name}' has no "
                                    f"attribute '{name}'")
        return NNClass("from_pretrained", lambda ev, node, args, kw: self.build(
            ev, node, args, kw), self.path)

    def py_method(self, ev, node, name, args, kw):
        return self.py_attr(ev, node, name).fn(ev, node, args, kw)


def _from(ev, node, args, kw, bag: bool):
    extra = (("mode", "mean"), ("sparse", False), ("include_last_offset", False)) if bag else \
        (("sparse", False),)
    g = bind("from_pretrained", (("embeddings", REQUIRED), ("freeze", True),
                                 ("max_norm", None), ("norm_type", 2.0),
                                 ("scale_grad_by_freq", False), *extra,
                                 ("padding_idx", None)), list(args), kw)
    w = tensor(node, g["embeddings"], "embeddings", "from_pretrained")
    if w.value.ndim != 2:
        raise PyException.error("AssertionError", "Embeddings parameter is expected to be "
                                "2-dimensional")
    rows, cols = w.shape
    freeze = bool(num(g.pop("freeze")))
    given = {**g, "num_embeddings": rows, "embedding_dim": cols, "_weight": w}
    given.pop("embeddings")
    if bag:
        return _bag(ev, {**dict(_BAG), **given}, freeze)
    given["_freeze"] = freeze
    return embedding_module(ev, {**given, "device": None, "dtype": None})


def register() -> None:
    nn, space = EXTRA["torch.nn"], EXTRA["torch.nn.functional"]
    space["embedding_bag"] = Native("embedding_bag", embedding_bag)
    nn["EmbeddingBag"] = NNClass("EmbeddingBag", lambda ev, node, args, kw: _bag(
        ev, bind("EmbeddingBag.__init__", _BAG, list(args), kw)), "torch.nn.modules.sparse")
    nn["EmbeddingBag"] = PretrainedClass(nn["EmbeddingBag"],
                                         lambda ev, node, a, k: _from(ev, node, a, k, True))
    nn["Embedding"] = PretrainedClass(nn["Embedding"],
                                      lambda ev, node, a, k: _from(ev, node, a, k, False))


__all__ = ["EmbeddingBag", "embedding_bag", "register"]
