"""Hooks on grad_fn nodes in the REPL's Python, as PyTorch's Node has them:

- ``y.grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the node's backward, may
  return a tuple that replaces them;
- ``y.grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after it, may return
  a tuple that replaces grad_inputs (None for an input that takes no gradient);
- both on a leaf's AccumulateGrad node too (from next_functions): its pre-hooks see the
  leaf's summed gradient before it is accumulated, its post-hooks get no grad_inputs;
- ``torch.autograd.graph.register_multi_grad_hook(tensors, fn, mode="all"|"any")``, built as
  PyTorch builds it: a tensor hook on each, counting the nodes this backward will execute.

The engine runs them (engine/nodehooks.py); here the user's functions are wrapped with
PyTorch's checks on what they return, and the handles remove them."""

from __future__ import annotations

import itertools

import numpy as np

from ..engine import nodehooks
from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..graph.tensor import NodeHooks, Tensor
from . import pyhooks
from .methods import check_kw
from .pyvalues import type_label

_KEYS = itertools.count(1 << 50)


def _checked(fn, got, before: tuple) -> tuple:
    """A hook's result in place of ``before`` (a tuple of arrays or None), with PyTorch's
    checks: a tuple of the same length, of tensors or None, each of the same size and type."""
    if not isinstance(got, tuple):
        raise DdxTypeError(f"expected tuple, but hook returned '{type_label(got)}'")
    if len(got) != len(before):
        raise DdxRuntimeError(f"hook '{pyhooks.hook_name(fn)}' has returned an incorrect "
                              f"number of values (got {len(got)}, but expected {len(before)})")
    out = []
    for new, old in zip(got, before):
        if new is None:
            out.append(None)
            continue
        if old is None:
            raise DdxRuntimeError("can't replace a None gradient with a non-None value")
        if not isinstance(new, Tensor) or new.weak:
            raise DdxTypeError(f"expected Variable, but hook returned '{type_label(new)}'")
        out.append(pyhooks.checked_value(fn, new.value, old))
    return tuple(out)


def _tensors(grads: tuple) -> tuple:
    out = []
    for g in grads:
        if g is None:
            out.append(None)
            continue
        t = Tensor(np.asarray(g))
        t.label = "grad"
        out.append(t)
    return tuple(out)


def _pre(ev, node, fn):
    from .pycalls import call_value

    def hook(grads: tuple):
        got = call_value(pyhooks.current(ev), node, fn, [_tensors(grads)], {})
        return None if got is None else _checked(fn, got, grads)
    return hook


def _post(ev, node, fn):
    from .pycalls import call_value

    def hook(grads_in: tuple, grads_out: tuple):
        got = call_value(pyhooks.current(ev), node, fn, [_tensors(grads_in),
                                                         _tensors(grads_out)], {})
        return None if got is None else _checked(fn, got, grads_in)
    return hook


def add_node_hook(ev, owner, kind: str, hook) -> pyhooks.RemovableHandle:
    """``hook`` into owner's ``kind`` hooks (pre, post or unpack): a new NodeHooks each time,
    so that the journal keeps the old."""
    key = next(_KEYS)
    new = NodeHooks(owner.node_hooks)
    getattr(new, kind)[key] = hook
    if ev.journal is not None:
        ev.journal.keep(owner, "node_hooks")
    owner.node_hooks = new
    Tensor.hooked += 1

    def remove(ev) -> None:
        now = owner.node_hooks
        if now is None or key not in getattr(now, kind):
            return
        if ev.journal is not None:
            ev.journal.keep(owner, "node_hooks")
        kept = NodeHooks(now)
        del getattr(kept, kind)[key]
        owner.node_hooks = kept or None
    return pyhooks.RemovableHandle(ev, remove)


def _hook_arg(node, args: list, kw: dict, method: str):
    check_kw(node, kw, ("hook", "fn"))
    fn = args[0] if args else (kw.get("hook") or kw.get("fn") or (None,))[0]
    if fn is None:
        raise DdxTypeError(f"{method}() missing 1 required positional argument: 'fn'")
    return fn


def register_node_hook(ev, node, owner, name: str, args: list, kw: dict):
    """grad_fn.register_hook / register_prehook; NotImplemented for other methods."""
    if name == "register_prehook":
        return add_node_hook(ev, owner, "pre", _pre(ev, node, _hook_arg(node, args, kw, name)))
    if name == "register_hook":
        return add_node_hook(ev, owner, "post", _post(ev, node, _hook_arg(node, args, kw, name)))
    return NotImplemented


def multi_grad_hook(ev, node, args: list, kw: dict):
    """torch.autograd.graph.register_multi_grad_hook(tensors, fn, *, mode="all")."""
    from .pycalls import call_value

    check_kw(node, kw, ("tensors", "fn", "mode"))
    given = dict(zip(("tensors", "fn"), args))
    given.update({k: v[0] for k, v in kw.items()})
    if "tensors" not in given or "fn" not in given:
        missing = [f"'{k}'" for k in ("tensors", "fn") if k not in given]
        raise DdxTypeError(f"register_multi_grad_hook() missing {len(missing)} required "
                           f"positional argument{'s' if len(missing) > 1 else ''}: "
                           f"{' and '.join(missing)}")
    tensors, fn, mode = list(given["tensors"]), given["fn"], str(given.get("mode", "all"))
    if mode not in ("all", "any"):
        raise DdxValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    removers = []
    if mode == "all":
        buffers: dict = {}  # per backward pass: [calls so far, calls expected, grads]

        def inner(idx: int):
            def hook(g: np.ndarray):
                task = nodehooks.current_task()
                state = buffers.get(task)
                if state is None:
                    expected = sum(nodehooks.will_execute(t) for t in tensors)
                    state = buffers[task] = [0, expected, [None] * len(tensors)]
                state[0] += 1
                state[2][idx] = pyhooks.grad_tensor(g)
                if state[0] == state[1]:
                    del buffers[task]
                    call_value(pyhooks.current(ev), node, fn, [state[2]], {})
                return None
            return hook
        hooks = [(t, inner(i)) for i, t in enumerate(tensors)]
    else:
        ran: set = set()

        def first(g: np.ndarray):
            task = nodehooks.current_task()
            if task not in ran:
                ran.add(task)
                call_value(pyhooks.current(ev), node, fn, [pyhooks.grad_tensor(g)], {})
            return None
        hooks = [(t, first) for t in tensors if isinstance(t, Tensor) and t.requires_grad]
    for t, hook in hooks:
        if not isinstance(t, Tensor):
            raise DdxTypeError(f"register_multi_grad_hook() expects tensors, got "
                               f"'{type_label(t)}'")
        removers.append(pyhooks.add_hook(ev, t, hook))

    def remove_all(ev) -> None:
        for remove in removers:
            remove(ev)
    return pyhooks.RemovableHandle(ev, remove_all)


__all__ = ["add_node_hook", "multi_grad_hook", "register_node_hook"]
