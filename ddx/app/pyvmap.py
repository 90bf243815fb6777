"""torch.func.vmap (also torch.vmap) in the REPL: ``vmap(func, in_dims=0, out_dims=0,
randomness='error', chunk_size=None)(*args)`` runs ``func`` once per index of the mapped
dimension, on the arguments' slices there (``select``, recorded as any indexing is, so a vmap
inside a gradient is differentiated), and stacks each output along its ``out_dims``
(``torch.stack``). ``in_dims`` is an int, or a tuple with one entry per argument (an int, None
for an argument that is not mapped, or a nested tuple/dict matching that argument's pytree).
Functions of transforms compose: ``vmap(grad(f))`` is per-sample gradients, ``vmap(vmap(f))``
maps two dimensions. PyTorch's messages for the mistakes a tutorial can make (sizes of the
mapped dimension that differ, an in_dim out of range, a number mapped, a random draw in
randomness='error' mode), copied from torch 2.13."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR
from . import pycalls, pytree
from .pyerrors import PyException
from .pymodules import EXTRA, MODULES, Native
from .pyvalues import number_of, type_label
from .pyvmapstate import FRAMES

RANDOMNESS = ("error", "different", "same")
VMAP_KW = ("in_dims", "out_dims", "randomness", "chunk_size")


def func_name(func: Any) -> str:
    """The name PyTorch's messages give a function: its __name__ (``<lambda>``)."""
    name = getattr(func, "name", None)
    if name in (None, "lambda"):
        return "<lambda>"
    return str(name)


def _value_error(text: str) -> Exception:
    return PyException.error("ValueError", text)


def _dim_of(value: Any) -> Any:
    """An in_dim/out_dim as given: None, an int, or a container (kept for the caller)."""
    if value is None or isinstance(value, pytree.CONTAINERS):
        return value
    n = number_of(value)
    if isinstance(n, bool) or not isinstance(n, int):
        return _NotADim(value)
    return n


class _NotADim:
    def __init__(self, value: Any) -> None:
        self.value = value


def _type_text(value: Any) -> str:
    """Python's ``<class 'float'>`` of a value (a number is a weak tensor in ddx)."""
    return f"<class '{type_label(value.value if isinstance(value, _NotADim) else value)}'>"


def _shown(value: Any) -> str:
    """in_dims as PyTorch's messages repr it: (None, None, 0)."""
    return pytree.render(value, lambda v: repr(v.value.item()) if isinstance(v, Tensor)
                         else repr(v))


def _leaf_dims(in_dims: Any, args: list, head: str) -> list:
    """One in_dim (None or an int) per leaf of the flattened arguments."""
    dims: list = []
    top = _dim_of(in_dims)
    if isinstance(top, int):
        for a in args:
            dims.extend([top] * pytree.flatten(a)[1].leaves)
        return dims
    if not isinstance(top, tuple):
        raise _value_error(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                           "tuple matching the structure of inputs, got: "
                           f"{_type_text(top)}.")
    def mismatch() -> Exception:
        return _value_error(
            f"{head}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {pytree.flatten(top)[1].text()} but inputs has structure "
            f"{pytree.flatten(tuple(args))[1].text()}.")
    if len(top) != len(args):
        raise mismatch()
    for d, a in zip(top, args):
        n = pytree.flatten(a)[1].leaves
        d = _dim_of(d)
        if d is None or isinstance(d, int):
            dims.extend([d] * n)
        elif isinstance(d, pytree.CONTAINERS):
            got = [_dim_of(v) for v in pytree.flatten(d)[0]]
            if len(got) != n:
                raise mismatch()
            dims.extend(got)
        else:
            raise _value_error(f"{head}: expected `in_dims` to be int or a (potentially "
                               "nested) tuple matching the structure of inputs, got: "
                               f"{_type_text(d)}.")
    return dims


def _check_leaves(leaves: list, dims: list, head: str) -> int:
    """The size of the mapped dimension (the same for every mapped input)."""
    sizes = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if isinstance(d, _NotADim):
            raise _value_error(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                               f"tuple matching the structure of inputs, got: {_type_text(d)}.")
        if not pytree.is_tensor(leaf):
            raise _value_error(
                f"{head}: Got in_dim={d} for an input but the input is of type "
                f"{_type_text(leaf)}. We cannot vmap over non-Tensor arguments, please use None "
                "as the respective in_dim")
        nd = leaf.value.ndim
        if not -nd <= d < nd:
            raise _value_error(
                f"{head}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {nd} so expected in_dim to satisfy -{nd} <= in_dim < {nd}.")
        sizes.append(leaf.value.shape[d % nd])
    if not sizes:
        raise _value_error("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise _value_error("vmap: Expected all tensors to have the same size in the mapped "
                           f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _slice(ev, node, leaf: Tensor, d: int, i: int) -> Tensor:
    d %= leaf.value.ndim
    return ev.op("select", node, [leaf], {"key": (slice(None),) * d + (i,)})


def _stack(ev, node, items: list, d: Any, name: str, frame: Frame) -> Any:
    if d is None:
        return items[0]
    whole = frame.whole(items, d)
    if whole is not None:
        return whole
    for t in items:
        if not pytree.is_tensor(t):
            raise _value_error(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                               f"{_type_text(t)}. Did you mean to set out_dims= to None for "
                               "output?")
    nd = items[0].value.ndim + 1
    if not -nd <= d < nd:
        raise PyException.error("IndexError", "Dimension out of range (expected to be in range "
                                f"of [{-nd}, {nd - 1}], but got {d})")
    return ev.functions["stack"](ev, node, [list(items), d % nd], {})


def _generator_state() -> Any:
    state = GENERATOR.state
    return None if state is None else (state[0], np.array(state[1]), *state[2:])


def _set_generator_state(state: Any) -> None:
    GENERATOR.state = None if state is None else (state[0], np.array(state[1]), *state[2:])


class Frame:
    """One running vmap: its batched leaves and in_dims, and the sample ``index`` whose slices
    (``given``) its function is running on. A custom Function with a vmap staticmethod
    applied to those slices has its rule run once on the whole batch (pycustom_vmap.py):
    ``calls`` counts the applies of this sample, ``rules`` keeps each rule's batched result."""

    def __init__(self, size: int, randomness: str, flat: list, dims: list) -> None:
        self.size, self.randomness, self.flat, self.dims = size, randomness, flat, dims
        self.index, self.given, self.calls = 0, flat, 0
        self.rules: dict = {}
        self.copies: dict = {}  # id(a transform's fresh leaf of a sample) -> (it, the sample)
        self.start = self.after = None  # (randomness='same': the generator's states)
        self.samples: dict = {}  # id(sample i of a rule's output) -> (it, output, dim, i)

    def whole(self, items: list, d: int) -> Any:
        """The rule's output itself when ``items`` are its samples 0, 1, ... along ``d``
        (the stack PyTorch never makes: its vmap returns the rule's output)."""
        got = [self.samples.get(id(t)) for t in items]
        if any(g is None or g[0] is not t for g, t in zip(got, items)):
            return None
        base, dim = got[0][1], got[0][2]
        if any(g[1] is not base or g[2] != dim or g[3] != i for i, g in enumerate(got)) or \
                dim != d % base.value.ndim or base.value.shape[dim] != len(items):
            return None
        return base


class Vmapped:
    """What vmap(func, ...) gives: a function of the same arguments, mapped."""

    py_type_name = "function"

    def __init__(self, func: Any, in_dims: Any, out_dims: Any, randomness: str) -> None:
        self.func, self.in_dims, self.out_dims = func, in_dims, out_dims
        self.randomness = randomness
        self.name = func_name(func)

    def __repr__(self) -> str:
        return f"<function {self.name} at 0x{id(self) & 0xffffffffffff:x}>"  # (functools.wraps)

    def _head(self) -> str:
        return f"vmap({self.name}, in_dims={_shown(self.in_dims)}, ...)(<inputs>)"

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        if not args:
            raise _value_error(f"vmap({self.name})(<inputs>): got no inputs. Maybe you forgot "
                               "to add inputs, or you are trying to vmap over a function with "
                               "no inputs. The latter is unsupported.")
        head = self._head()
        dims = _leaf_dims(self.in_dims, args, head)
        flat, spec = pytree.flatten(tuple(args))
        size = _check_leaves(flat, dims, head)
        before = _generator_state() if self.randomness == "error" else None
        frame = Frame(size, self.randomness, flat, dims)
        FRAMES.append(frame)
        try:
            results = [self._sample(ev, node, frame, spec, kw, i, before) for i in range(size)]
        finally:
            FRAMES.remove(frame)
        if frame.after is not None:
            _set_generator_state(frame.after)
        return self._stacked(ev, node, results, frame)

    def _sample(self, ev, node, frame: Frame, spec, kw: dict, i: int, before: Any) -> Any:
        """func on the slices of index ``i``."""
        given = [leaf if d is None else _slice(ev, node, leaf, d, i)
                 for leaf, d in zip(frame.flat, frame.dims)]
        frame.index, frame.given, frame.calls = i, given, 0
        if self.randomness == "same":  # (every index draws the first index's numbers)
            if i == 0:
                frame.start = _generator_state()
            else:
                frame.after = frame.after or _generator_state()
                _set_generator_state(frame.start)
        drew = getattr(ev, "drew_random", False)
        ev.drew_random = False
        try:
            out = pycalls.call_value(ev, node, self.func, list(pytree.unflatten(given, spec)),
                                     dict(kw))
            if ev.drew_random and self.randomness == "error":
                _set_generator_state(before)  # (PyTorch refuses before it draws)
                raise DdxRuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or "
                    "perform the randomness operation out of vmap")
        finally:
            ev.drew_random = drew or ev.drew_random
        return out

    def _stacked(self, ev, node, results: list, frame: Frame) -> Any:
        leaves0, spec = pytree.flatten(results[0])
        columns = [pytree.flatten(r)[0] for r in results]
        out_dims = _dim_of(self.out_dims)
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims] * len(leaves0)
        elif isinstance(out_dims, tuple) and spec.nodes[0][0] == "tuple" and \
                len(out_dims) == spec.nodes[0][1]:
            dims = []
            for d, r in zip(out_dims, results[0]):
                dims.extend([_dim_of(d)] * pytree.flatten(r)[1].leaves)
        else:
            raise _value_error(
                f"vmap({self.name}, ..., out_dims={_shown(self.out_dims)})(<inputs>): out_dims "
                "is not compatible with the structure of `outputs`. out_dims has structure "
                f"{pytree.flatten(self.out_dims)[1].text()} but outputs has structure "
                f"{spec.text()}.")
        stacked = [_stack(ev, node, [c[k] for c in columns], dims[k], self.name, frame)
                   for k in range(len(leaves0))]
        return pytree.unflatten(stacked, spec)


def fn_vmap(ev, node, args: list, kw: dict) -> Vmapped:
    names = ("func",) + VMAP_KW
    given = dict(zip(names, args))
    for k, (v, *_rest) in kw.items():
        if k not in names:
            raise PyException.error("TypeError",
                                    f"vmap() got an unexpected keyword argument '{k}'")
        given[k] = v
    if "func" not in given:
        raise PyException.error("TypeError",
                                "vmap() missing 1 required positional argument: 'func'")
    randomness = given.get("randomness", "error")
    if randomness not in RANDOMNESS:
        raise DdxRuntimeError("Only allowed values for randomness are 'error', 'different', "
                              f"or 'same'. Got {randomness}")
    return Vmapped(given["func"], given.get("in_dims", 0), given.get("out_dims", 0),
                   str(randomness))


def register() -> None:
    vmap = Native("vmap", fn_vmap)
    EXTRA["torch"]["vmap"] = vmap
    func = MODULES.get("torch.func")
    if func is not None:
        func.members["vmap"] = vmap


__all__ = ["Vmapped", "fn_vmap", "func_name", "register"]
