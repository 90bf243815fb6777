"""torch.func.functional_call and torch.func.stack_module_state in the REPL.

``functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
tie_weights=True, strict=False)`` runs the module with the given tensors in place of its
parameters and buffers (a dict, or a tuple of dicts; dotted names reach submodules:
``fc1.weight``), and puts the module's own back afterwards, also when the call fails.
``stack_module_state(models)`` gives ``(params, buffers)``: for each name, the models' tensors
stacked along a new first dimension (``torch.stack``), a fresh leaf that requires grad where
the parameters do, as torch/_functorch/functional_call.py builds them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from . import pybuffers, pycalls, pynn
from .pyvalues import Instance


def _attrs(m: Any) -> dict:
    return m.attrs if isinstance(m, Instance) else m.state


def _kind(m: Any) -> str:
    return m.cls.name if isinstance(m, Instance) else getattr(m, "kind", "Module")


def _names(m: Any) -> list[str]:
    return [str(k) for k, _ in pynn.named_parameters(m)] + \
        [str(k) for k, _ in pybuffers.named_buffers(m)]


def _merged(dicts: Any) -> dict:
    items = list(dicts) if isinstance(dicts, (tuple, list)) else [dicts]
    merged: dict = {}
    for d in items:
        if not isinstance(d, dict):
            raise DdxTypeError("functional_call: expected parameter_and_buffer_dicts to be a "
                               f"dict, or a tuple of dicts, got {type(d).__name__}")
        for k, v in d.items():
            if str(k) in merged:
                raise DdxRuntimeError(f"{k} appeared in multiple dictionaries; behavior of "
                                      "functional call is ambiguous")
            merged[str(k)] = v
    return merged


def _check_strict(module: Any, given: dict) -> None:
    names = set(_names(module))
    unexpected = sorted(k for k in given if k not in names)
    missing = sorted(k for k in names if k not in given)
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {_kind(module)}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
        raise DdxRuntimeError("\n".join(lines))


def _owner(module: Any, mods: dict, key: str) -> tuple[dict, str]:
    prefix, _, name = key.rpartition(".")
    owner = mods.get(prefix)
    if owner is None:
        head = prefix.split(".")[0]
        raise DdxRuntimeError(f"'{_kind(module)}' object has no attribute '{head}'")
    return _attrs(owner), name


def fn_functional_call(ev, node, args: list, kw: dict) -> Any:
    names = ("module", "parameter_and_buffer_dicts", "args", "kwargs")
    given = dict(zip(names, args))
    for k, (v, *_rest) in kw.items():
        if k not in names + ("tie_weights", "strict"):
            raise DdxTypeError(f"functional_call() got an unexpected keyword argument '{k}'")
        given[k] = v
    module = given.get("module")
    if not pynn.is_module(module):
        raise DdxTypeError("functional_call() takes an nn.Module as its first argument")
    tensors = _merged(given.get("parameter_and_buffer_dicts", {}))
    if given.get("strict"):
        _check_strict(module, tensors)
    call_args = given.get("args")
    call_args = [] if call_args is None else list(call_args) if isinstance(call_args, tuple) \
        else [call_args]
    call_kw = given.get("kwargs") or {}
    mods = {str(k): m for k, m in pynn.named_modules(module)}
    saved = []
    try:
        for key, value in tensors.items():
            attrs, name = _owner(module, mods, key)
            saved.append((attrs, name, name in attrs, attrs.get(name)))
            attrs[name] = value
        return pycalls.call_value(ev, node, module, call_args,
                                  {str(k): (v, None) for k, v in call_kw.items()})
    finally:
        for attrs, name, had, old in reversed(saved):
            if had:
                attrs[name] = old
            else:
                attrs.pop(name, None)


def _stacked_leaf(ev, node, tensors: list, name: str) -> Tensor:
    flags = [t.requires_grad for t in tensors]
    if any(flags) and not all(flags):
        raise DdxRuntimeError(f"Expected {name} from each model to have the same "
                              ".requires_grad")
    value = np.stack([t.value for t in tensors])
    return Tensor(value, all(flags))


def fn_stack_module_state(ev, node, args: list, kw: dict) -> tuple:
    if len(args) != 1 or kw:
        raise DdxTypeError("stack_module_state() takes one argument: a list of modules")
    models = list(args[0])
    if not models:
        raise DdxRuntimeError("stack_module_state: Expected at least one model, got 0.")
    first = type(models[0]), getattr(models[0], "cls", None)
    for m in models:
        if not pynn.is_module(m) or (type(m), getattr(m, "cls", None)) != first:
            raise DdxRuntimeError("stack_module_state: Expected all models to be of the same "
                                  "class.")
    all_params = [dict(pynn.named_parameters(m)) for m in models]
    all_buffers = [dict(pybuffers.named_buffers(m)) for m in models]
    params = {k: _stacked_leaf(ev, node, [p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf(ev, node, [b[k] for b in all_buffers], k)
               for k in all_buffers[0]}
    return params, buffers


__all__ = ["fn_functional_call", "fn_stack_module_state"]
