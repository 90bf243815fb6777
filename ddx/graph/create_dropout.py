"""Dropout and bernoulli_ as PyTorch's CPU build computes them (ATen's _dropout_impl and the
default bernoulli_scalar_kernel, whose CPU path this is on a machine where ATen does not hand
it to MKL's VSL): each element's mask value is 1 where a uniform double of 53 random bits
(one random64 draw of the one generator) is below 1 - p, else 0; dropout multiplies its input
by mask / (1 - p) (a MulBackward0 node), and with p = 0, training off or no elements returns
its input itself."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..lang.tree import Ast
from . import record
from .args import Evaluating, bind
from .create_args import number_arg
from .tensor import Tensor
from .values import weak


def bernoulli_mask(ev: Evaluating, shape: tuple, p: float, dtype) -> np.ndarray:
    """bernoulli_(p) of a new contiguous tensor: one random64 draw per element (the generator's
    state kept in the statement's undo log, the program marked as drawing, as rand's)."""
    from ..ops.rng import GENERATOR

    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")
    n = int(np.prod(shape))
    u = (GENERATOR.words64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    return (u < p).astype(dtype).reshape(shape)


def _probability(node: Ast, p) -> float:
    if not 0 <= p <= 1:
        raise DdxRuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}",
                              start=node.pos, end=node.end)
    return float(p)


def fn_dropout(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """torch.dropout(input, p, train) and F.dropout(input, p=0.5, training=True,
    inplace=False)."""
    names = ("input", "p", "train") if node.value == "dropout" and "training" not in kw \
        and len(args) == 3 else ("input", "p", "training", "inplace")
    given = bind(node, args, kw, names, 1)
    x = given["input"]
    if not isinstance(x, Tensor):
        raise DdxRuntimeError("dropout(): argument 'input' must be Tensor", start=node.pos,
                              end=node.end)
    p = _probability(node, number_arg(node, "p", given.get("p", weak(0.5)), 2))
    train = given.get("train", given.get("training", True))
    train = bool(train.value.item()) if isinstance(train, Tensor) else bool(train)
    if p == 0 or not train or x.value.size == 0:
        return x
    if x.value.dtype.kind != "f":
        raise DdxRuntimeError(f"result type Float can't be cast to the desired output type "
                              f"{x.value.dtype.name.capitalize()}", start=node.pos, end=node.end)
    if p == 1:
        return ev.op("mul", node, [x, Tensor(np.zeros((), x.value.dtype), False)])
    mask = bernoulli_mask(ev, x.value.shape, 1 - p, x.value.dtype)
    noise = mask / x.value.dtype.type(1 - p)
    return ev.op("mul", node, [x, Tensor(noise, False)])


def m_bernoulli_(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.bernoulli_(p=0.5): each element 1 with probability p, else 0, in place."""
    given = bind(node, args, kw, ("p",), 0)
    p = float(number_arg(node, "p", given.get("p", weak(0.5)), 1))
    if not 0 <= p <= 1:
        raise DdxRuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}",
                              start=node.pos, end=node.end)
    if t.requires_grad and record.GRAD_MODE.enabled and t.is_leaf:
        raise DdxRuntimeError("a leaf Variable that requires grad is being used in an "
                              "in-place operation.", start=node.pos, end=node.end)
    values = bernoulli_mask(ev, t.value.shape, p, t.value.dtype)
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    t.value[...] = values
    return t


NAMED = {"dropout": fn_dropout}
NAMED_SPACES = {"dropout": ("torch", "F")}
TENSOR_METHODS = {"bernoulli_": m_bernoulli_}

__all__ = ["NAMED", "NAMED_SPACES", "TENSOR_METHODS", "bernoulli_mask"]
