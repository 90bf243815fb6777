"""Random creation functions (rand randn randint randperm normal, the *_like forms), the in-place
normal_, uniform_ and random_, and manual_seed / initial_seed / seed: PyTorch's CPU numbers from the
process's one generator (ddx/ops/rng.py). A REPL statement that fails leaves the generator
as it was (its undo log keeps the state), and a program that draws is never replayed from a
recorded graph (its numbers would be frozen)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from . import record
from .args import Evaluating, bind, check_arity, check_keywords
from .create_args import (
    OPTIONS,
    checked,
    fresh,
    int_arg,
    kind_of,
    like,
    number_arg,
    options,
    size_arg,
    sizes,
    torch_type,
)
from .tensor import Tensor
from .values import weak

KERNELS = {"uniform": "check_uniform_bounds", "normal": "normal_kernel_cpu"}


DEFAULT_SEED = 67280421310721  # a new torch.Generator()'s seed (CPUGeneratorImpl's default)


class GeneratorHandle:
    """A torch.Generator: torch.default_generator (what torch.manual_seed returns: ``rng``
    None, the process's one generator) or one a program made (torch.Generator(), seeded as
    PyTorch seeds a new one); ``generator=`` of a random function draws from its ``rng``."""

    def __init__(self, rng=None, number: int = 0) -> None:
        self._rng, self.number = rng, number

    @property
    def rng(self):
        if self._rng is None:
            from ..ops.rng import GENERATOR  # (imported on first use: one-liners start faster)

            return GENERATOR
        return self._rng

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {0x7f00000e0000 + 0x40 * self.number:#x}>"

    def py_method(self, ev, node: Ast, name: str, args: list, kw: dict):
        if name == "manual_seed":
            check_arity(node, args, 1, kw)
            seed = _seed_value(node, args[0])
            _generator(ev, self.rng).manual_seed(seed)
            return self
        if name in ("initial_seed", "seed"):
            check_arity(node, args, 0, kw)
            gen = _generator(ev, self.rng)
            return weak(gen.initial_seed() if name == "initial_seed" else gen.seed())
        if name in STATE_METHODS:
            check_arity(node, args, int(name == "set_state"), kw)
            got = STATE_METHODS[name](ev, node, self.rng, *args)
            return self if got is None else got
        if name in ("clone_state", "graphsafe_get_state"):
            raise DdxRuntimeError(f"Generator.{name}() is not supported by ddx: use "
                                  "get_state()", start=node.pos, end=node.end)
        raise DdxTypeError(f"'torch._C.Generator' object has no attribute '{name}'",
                           start=node.pos, end=node.end)


# get_state(), set_state(s): (ev, node, rng, *args) -> the result (None: the generator), put here
# by create_random2.py
STATE_METHODS: dict = {}
DEFAULT_GENERATOR = GeneratorHandle()
_GIVEN: list = []  # the generator= of the random function being called, if any


def _generator(ev: Evaluating, gen=None):
    """The generator, about to be drawn from (``gen``, or the generator= of the call, or the
    process's one): its state goes in the statement's undo log, and the program is marked as
    one whose values change from run to run."""
    if gen is None:
        gen = _GIVEN[-1] if _GIVEN else DEFAULT_GENERATOR.rng
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(gen, "state")
    return gen


def with_generator(fn):
    """A random function that also takes ``generator=`` (a torch.Generator, or None)."""
    def call(ev: Evaluating, node: Ast, *rest):
        kw = rest[-1]
        if "generator" not in kw:
            return fn(ev, node, *rest)
        value, pos = kw["generator"]
        kw = {k: v for k, v in kw.items() if k != "generator"}
        if value is None:
            return fn(ev, node, *rest[:-1], kw)
        if not isinstance(value, GeneratorHandle):
            raise DdxTypeError(f"{node.value}(): argument 'generator' must be torch.Generator, "
                               f"not {kind_of(value)}", start=pos, end=pos + len("generator"))
        _GIVEN.append(value.rng)
        try:
            return fn(ev, node, *rest[:-1], kw)
        finally:
            _GIVEN.pop()
    return call


draw_generator = _generator  # (for create_random2.py's exponential_ and multinomial)


def _draw(ev: Evaluating, node: Ast, kind: str, shape: tuple, dtype: np.dtype, a: float,
          b: float) -> np.ndarray:
    if dtype.kind != "f":
        raise DdxRuntimeError(f'"{KERNELS[kind]}" not implemented for \'{torch_type(dtype)}\'',
                              start=node.pos, end=node.end)
    if kind == "normal" and b < 0:
        raise DdxRuntimeError(f"normal expects std >= 0.0, but found std {b:g}",
                              start=node.pos, end=node.end)
    if kind == "uniform":
        _uniform_bounds(node, dtype, a, b)
    n = math.prod(shape)
    gen = _generator(ev)
    values = gen.uniform(n, dtype, a, b) if kind == "uniform" else gen.normal(n, dtype, a, b)
    return values.reshape(shape)


def _uniform_bounds(node: Ast, dtype: np.dtype, a: float, b: float) -> None:
    """PyTorch's check_uniform_bounds, in its words."""
    top = float(np.finfo(dtype).max)
    c_name = "float" if dtype == np.float32 else "double"
    for key, v in (("from", a), ("to", b)):
        if not -top <= v <= top:
            raise DdxRuntimeError(f"{key} is out of bounds for {c_name}", start=node.pos,
                                  end=node.end)
    if a > b:
        raise DdxRuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                              f"from={a:g} > to={b:g}", start=node.pos, end=node.end)
    if b - a > top:
        raise DdxRuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                              f"{torch_type(dtype)}>::max(), but found to={b:g} and from={a:g} "
                              "which result in to-from to exceed the limit",
                              start=node.pos, end=node.end)


def _random(kind: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        check_keywords(node, kw, ("size", *OPTIONS))
        shape = sizes(node, args, kw)
        dtype, grad = options(node, kw, ev.dtype)
        return fresh(ev, node, _draw(ev, node, kind, shape, dtype, 0.0, 1.0), grad)
    return call


def _random_like(kind: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        src = like(node, args, kw, ())["input"]
        dtype, grad = options(node, kw, src.value.dtype)
        return fresh(ev, node, _draw(ev, node, kind, src.value.shape, dtype, 0.0, 1.0), grad)
    return call


def _integers(ev: Evaluating, node: Ast, shape: tuple, low: int, high: int,
              dtype: np.dtype) -> np.ndarray:
    if low >= high:
        raise DdxRuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                              f"from={low} >= to={high}", start=node.pos, end=node.end)
    return _generator(ev).randint(math.prod(shape), low, high).reshape(shape).astype(dtype)


def fn_randint(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    rest = {k: v for k, v in kw.items() if k not in OPTIONS}
    names = ("low", "high", "size") if len(args) >= 3 or "low" in rest or (
        len(args) == 2 and "size" in rest) else ("high", "size")
    given = bind(node, args, rest, names, len(names))
    at = {k: (i + 1 if i < len(args) else None) for i, k in enumerate(names)}
    low = int_arg(node, "low", given["low"], at["low"]) if "low" in given else 0
    high = int_arg(node, "high", given["high"], at["high"])
    shape = size_arg(node, given["size"], at["size"])
    dtype, grad = options(node, kw, np.int64)
    return fresh(ev, node, _integers(ev, node, shape, low, high, dtype), grad)


def fn_randint_like(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    rest = {k: v for k, v in kw.items() if k not in OPTIONS}
    names = ("low", "high") if len(args) >= 3 or "low" in rest else ("high",)
    given = like(node, args, kw, names, 1 + len(names))
    src = given["input"]
    low = int_arg(node, "low", given["low"], 2) if "low" in given else 0
    high = int_arg(node, "high", given["high"], len(args) if len(args) > 1 else None)
    dtype, grad = options(node, kw, src.value.dtype)
    return fresh(ev, node, _integers(ev, node, src.value.shape, low, high, dtype), grad)


def fn_normal(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    """torch.normal(mean, std, size) with numbers; with a tensor mean or std, as ATen:
    normal_(0, 1) (normal_(0, std) for a number std) times the std tensor plus the mean, in
    their broadcast shape."""
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS},
                 ("mean", "std", "size"), 1)
    m, s = given["mean"], given.get("std", weak(1.0))
    if isinstance(m, Tensor) and not m.weak or isinstance(s, Tensor) and not s.weak:
        return _normal_tensors(ev, node, m, s)
    if "std" not in given:
        raise DdxTypeError("normal() missing required argument 'std'", start=node.pos,
                           end=node.end)
    mean = float(number_arg(node, "mean", m, 1))
    std = float(number_arg(node, "std", s, 2))
    shape = size_arg(node, given["size"], 3 if len(args) > 2 else None)
    dtype, grad = options(node, kw, ev.dtype)
    return fresh(ev, node, _draw(ev, node, "normal", shape, dtype, mean, std), grad)


def _normal_tensors(ev: Evaluating, node: Ast, m: Any, s: Any) -> Tensor:
    tm = isinstance(m, Tensor) and not m.weak
    ts = isinstance(s, Tensor) and not s.weak
    if tm and ts:
        ev.check_broadcast(node, m, s)
    like = m if tm else s
    dtype = like.value.dtype
    if ts and (s.value < 0).any():
        raise DdxRuntimeError("normal expects all elements of std >= 0.0", start=node.pos,
                              end=node.end)
    shape = np.broadcast_shapes(m.value.shape, s.value.shape) if tm and ts else like.value.shape
    if ts:
        z = _draw(ev, node, "normal", shape, dtype, 0.0, 1.0)
        z = (z * s.value).astype(dtype)
    else:
        z = _draw(ev, node, "normal", shape, dtype, 0.0, float(number_arg(node, "std", s, 2)))
    mean = m.value if tm else dtype.type(float(number_arg(node, "mean", m, 1)))
    return fresh(ev, node, (z + mean).astype(dtype), False)


def fn_randperm(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, {k: v for k, v in kw.items() if k not in OPTIONS}, ("n",), 1)
    (n,) = checked(node, (int_arg(node, "n", given["n"], 1 if args else None),))
    dtype, grad = options(node, kw, np.int64)
    return fresh(ev, node, _generator(ev).permutation(n).astype(dtype), grad)


def _seed_value(node: Ast, value) -> int:
    if isinstance(value, str):
        raise DdxValueError(f"invalid literal for int() with base 10: {value!r}",
                            start=node.pos, end=node.end)
    if isinstance(value, bool):
        return int(value)
    if not (isinstance(value, Tensor) and value.value.size == 1):
        raise DdxTypeError(f"manual_seed(): the seed must be a number, not {kind_of(value)}",
                           start=node.pos, end=node.end)
    v = value.value.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise DdxValueError(f"cannot convert float {v} to integer", start=node.pos,
                            end=node.end)
    seed = int(v)
    if not -(1 << 63) <= seed < 1 << 64:
        raise DdxValueError("Overflow when unpacking long long", start=node.pos, end=node.end)
    return seed % (1 << 64)


def fn_manual_seed(ev: Evaluating, node: Ast, args: list, kw: dict) -> GeneratorHandle:
    check_arity(node, args, 1, kw)
    seed = _seed_value(node, args[0])
    _generator(ev).manual_seed(seed)
    return DEFAULT_GENERATOR


def fn_initial_seed(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 0, kw)
    return weak(_generator(ev).initial_seed())


def fn_seed(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    check_arity(node, args, 0, kw)
    return weak(_generator(ev).seed())


def _in_place(ev: Evaluating, node: Ast, t: Tensor, kind: str, a: float, b: float) -> Tensor:
    if t.requires_grad and record.GRAD_MODE.enabled:
        if t.is_leaf:
            raise DdxRuntimeError("a leaf Variable that requires grad is being used in an "
                                  "in-place operation.", start=node.pos, end=node.end)
        raise DdxRuntimeError(f"{node.value}() of a tensor inside a graph is not supported by "
                              "ddx (PyTorch makes it a node whose gradient is zero)",
                              start=node.pos, end=node.end,
                              hint="fill a new tensor instead, or call it under no_grad()")
    values = _draw(ev, node, kind, t.value.shape, t.value.dtype, a, b)
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    t.value[...] = values
    return t


def m_normal_(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.normal_(mean=0, std=1)."""
    given = bind(node, args, kw, ("mean", "std"), 0)
    mean = float(number_arg(node, "mean", given.get("mean", weak(0.0)), 1))
    std = float(number_arg(node, "std", given.get("std", weak(1.0)), 2))
    return _in_place(ev, node, t, "normal", mean, std)


def m_uniform_(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.uniform_(from=0, to=1)."""
    given = bind(node, args, kw, ("from", "to"), 0)
    low = float(number_arg(node, "from", given.get("from", weak(0.0)), 1))
    high = float(number_arg(node, "to", given.get("to", weak(1.0)), 2))
    return _in_place(ev, node, t, "uniform", low, high)


NAMED = {
    "rand": with_generator(_random("uniform")),
    "randn": with_generator(_random("normal")),
    "randint": with_generator(fn_randint),
    "normal": with_generator(fn_normal),
    "rand_like": _random_like("uniform"),
    "randn_like": _random_like("normal"),
    "randint_like": fn_randint_like,
    "randperm": with_generator(fn_randperm),
    "manual_seed": fn_manual_seed,
    "initial_seed": fn_initial_seed,
    "seed": fn_seed,
}
def _full_range(ev: Evaluating, n: int, dtype: np.dtype) -> np.ndarray:
    """random_() with no bounds: ATen's uniform_int, a word modulo 2**digits + 1 for floats
    (one 32-bit word for float32, random64() for float64), random64() % 2**63 for int64."""
    gen = _generator(ev)
    if dtype == np.float32:
        return (gen.words(n) % np.uint32((1 << 24) + 1)).astype(np.float32)
    if dtype == np.float64:
        return (gen.words64(n) % np.uint64((1 << 53) + 1)).astype(np.float64)
    if dtype == np.int64:
        return (gen.words64(n) % np.uint64(1 << 63)).astype(np.int64)
    return (gen.words(n) & np.uint32(1)).astype(dtype)  # bool: the low bit


def m_random_(ev: Evaluating, node: Ast, t: Tensor, args: list, kw: dict) -> Tensor:
    """x.random_(), x.random_(to), x.random_(from, to): integers drawn as torch.randint draws
    them (ATen's random_from_to), cast to the tensor's dtype."""
    given = bind(node, args, kw, ("from", "to"), 0)
    if "to" not in given and "from" in given and len(args) == 1:
        given = {"to": given["from"]}
    dtype = t.value.dtype
    if dtype not in (np.float32, np.float64, np.int64, np.bool_):
        raise DdxRuntimeError(f"random_ of a {torch_type(dtype)} tensor is not supported by ddx",
                              start=node.pos, end=node.end)
    if t.requires_grad and record.GRAD_MODE.enabled and t.is_leaf:
        raise DdxRuntimeError("a leaf Variable that requires grad is being used in an "
                              "in-place operation.", start=node.pos, end=node.end)
    shape = t.value.shape
    if not given:
        values = _full_range(ev, math.prod(shape), dtype).reshape(shape)
    else:
        low = int_arg(node, "from", given["from"], 1) if "from" in given else 0
        if given.get("to") is None:
            raise DdxRuntimeError("random_(from, to=None) is not supported by ddx",
                                  start=node.pos, end=node.end)
        high = int_arg(node, "to", given["to"], 2 if "from" in given else 1)
        values = _integers(ev, node, shape, low, high, dtype)
    if ev.journal is not None:
        ev.journal.overwrite(t.value)
    t.value[...] = values
    return t


TENSOR_METHODS = {"normal_": with_generator(m_normal_), "uniform_": with_generator(m_uniform_),
                  "random_": with_generator(m_random_)}
