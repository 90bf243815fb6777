"""Tensor.exponential_ and torch.multinomial, PyTorch's CPU numbers: exponential_ is ATen's
default kernel (one random64() a number: u = its low 53 bits * 2**-53, then -1/lambd *
log1p(-u) in double by the C library's log1p, cast to the tensor's type); multinomial without
replacement, or of one sample, is ATen's trick: q = exponential_(1) of a tensor like the
input, then the argmax (one sample) or top k of input / q along the last dim. And the
generator's state as PyTorch's bytes: torch.get_rng_state / set_rng_state and a
Generator's get_state / set_state (ddx/ops/rng.py's Generator.get_state)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..lang.tree import Ast
from . import record
from .args import Evaluating, bind, check_arity
from .create_args import fresh, int_arg, number_arg
from .create_random import STATE_METHODS, draw_generator, with_generator
from .tensor import Tensor
from .values import py_type, weak


def exponentials(ev: Evaluating, n: int, dtype: np.dtype, lambd: float) -> np.ndarray:
    from ..ops.libm import function

    words = draw_generator(ev).words64(n)
    u = (words & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    log1p = function("log1p", single=False) or math.log1p
    scale = -1.0 / lambd
    return np.array([scale * log1p(-float(v)) for v in u], dtype=np.float64).astype(dtype)


def m_exponential_(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.exponential_(lambd=1)."""
    given = bind(node, args, kw, ("lambd",), 0)
    lambd = float(number_arg(node, "lambd", given.get("lambd", weak(1.0)), 1))
    if t.value.dtype.kind != "f":
        raise DdxRuntimeError(f"exponential_ of a {t.value.dtype} tensor is not supported by "
                              "ddx", start=node.pos, end=node.end)
    if not lambd > 0:
        raise DdxRuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}",
                              start=node.pos, end=node.end)
    if t.requires_grad and record.GRAD_MODE.enabled:
        raise DdxRuntimeError("a leaf Variable that requires grad is being used in an "
                              "in-place operation.", start=node.pos, end=node.end)
    values = exponentials(ev, t.value.size, t.value.dtype, lambd).reshape(t.value.shape)
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    t.value[...] = values
    return t


def fn_multinomial(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """torch.multinomial(input, num_samples, replacement=False)."""
    given = bind(node, args, kw, ("input", "num_samples", "replacement"), 2)
    p = given["input"]
    if not isinstance(p, Tensor) or p.weak or p.value.dtype.kind != "f":
        raise DdxRuntimeError("multinomial only supports floating-point dtypes for input",
                              start=node.pos, end=node.end)
    x = p.value
    n = int_arg(node, "num_samples", given["num_samples"], 2)
    replacement = bool(given.get("replacement", False) and
                       number_arg(node, "replacement", given["replacement"], 3))
    if x.ndim not in (1, 2):
        raise DdxRuntimeError("prob_dist must be 1 or 2 dim", start=node.pos, end=node.end)
    if n <= 0:
        raise DdxRuntimeError("cannot sample n_sample <= 0 samples", start=node.pos,
                              end=node.end)
    if not replacement and n > x.shape[-1]:
        raise DdxRuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                              "replacement", start=node.pos, end=node.end)
    if replacement and n > 1:
        raise DdxRuntimeError("torch.multinomial with replacement=True and more than one "
                              "sample is not supported by ddx (its own sampler)",
                              start=node.pos, end=node.end)
    if (x < 0).any() or not np.isfinite(x).all():
        raise DdxRuntimeError("probability tensor contains either `inf`, `nan` or element < 0",
                              start=node.pos, end=node.end)
    if (x.sum(axis=-1) == 0).any():
        raise DdxRuntimeError("invalid multinomial distribution (sum of probabilities <= 0)",
                              start=node.pos, end=node.end)
    q = exponentials(ev, x.size, x.dtype, 1.0).reshape(x.shape)
    with np.errstate(all="ignore"):
        q = (x / q).astype(x.dtype)
    if n == 1:
        return Tensor(np.argmax(q, axis=-1)[..., None].astype(np.int64))
    order = np.argsort(-q, axis=-1, kind="stable")[..., :n]
    return Tensor(order.astype(np.int64))


def m_multinomial(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    return fn_multinomial(ev, node, [t, *args], kw)


fn_multinomial = with_generator(fn_multinomial)  # (x.multinomial(...) calls it: generator= too)


def state_of(ev: Evaluating, node: Ast, gen) -> Tensor:
    """get_state(): a new uint8 tensor of the generator's 5056 bytes."""
    return fresh(ev, node, draw_generator(ev, gen).get_state(), False)


def set_state_of(ev: Evaluating, node: Ast, gen, value) -> None:
    """set_state(new_state), with PyTorch's checks and words (THPGenerator_setState,
    check_rng_state, CPUGeneratorImpl::set_state); the old state goes in the undo log."""
    from ..ops.rng import StateError

    where = {"start": node.pos, "end": node.end}
    if not isinstance(value, Tensor) or value.weak:
        raise DdxTypeError(f"expected a torch.ByteTensor, but got {py_type(value)}", **where)
    if value.value.dtype != np.uint8:
        raise DdxTypeError("RNG state must be a torch.ByteTensor", **where)
    if not value.value.flags.c_contiguous:
        raise DdxRuntimeError("RNG state must be contiguous", **where)
    gen = draw_generator(ev, gen)
    try:
        gen.set_state(value.value.ravel())
    except StateError as exc:
        raise DdxRuntimeError(str(exc), **where) from None


def fn_get_rng_state(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 0, kw)
    return state_of(ev, node, None)


def fn_set_rng_state(ev: Evaluating, node: Ast, args: list, kw: dict) -> None:
    given = bind(node, args, kw, ("new_state",), 1)
    set_state_of(ev, node, None, given["new_state"])


STATE_METHODS.update(get_state=state_of, set_state=set_state_of)
# (torch.multinomial is both a function and a method: ddx/app registers it)
NAMED: dict = {"get_rng_state": fn_get_rng_state, "set_rng_state": fn_set_rng_state}
TENSOR_METHODS = {"exponential_": with_generator(m_exponential_)}
