"""nn.Module's buffers and state, as torch/nn/modules/module.py has them: register_buffer
(``persistent``), register_parameter, buffers()/named_buffers(), state_dict() (each module's
parameters, then its persistent buffers, then its children's, prefixed), load_state_dict
(strict, with PyTorch's messages and ``<All keys matched successfully>``) and apply(fn)
(children first)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from .pyerrors import PyException
from .pynn import MORE_METHODS, PARAMETERS, named_modules, own
from .pyvalues import Instance
from .values import Str


def _attrs(m: Any) -> dict:
    return m.attrs if isinstance(m, Instance) else m.state


def _buffer_names(m: Any) -> dict:
    """name -> persistent, in the order registered (kept on the module, out of its attrs)."""
    names = getattr(m, "buffer_names", None)
    if names is None:
        names = {}
        m.buffer_names = names
    return names


def own_buffers(m: Any, persistent_only: bool = False) -> list:
    attrs = _attrs(m)
    return [(k, attrs[k]) for k, keep in _buffer_names(m).items()
            if isinstance(attrs.get(k), Tensor) and (keep or not persistent_only)]


def register_buffer(ev, node, m, args, kw):
    names = ("name", "tensor", "persistent")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items() if k in names})
    name, tensor = given.get("name"), given.get("tensor")
    if not isinstance(name, str):
        raise DdxTypeError(f"buffer name should be a string. Got {type(name).__name__}")
    if "." in name or name == "":
        raise PyException.error("KeyError", "buffer name can't contain \".\"" if name else
                                "buffer name can't be empty string \"\"")
    if tensor is not None and not isinstance(tensor, Tensor):
        raise DdxTypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                           f"'{name}' (torch Tensor or None required)")
    _attrs(m)[str(name)] = tensor
    _buffer_names(m)[str(name)] = bool(given.get("persistent", True))
    return None


def register_parameter(ev, node, m, args, kw):
    """register_parameter(name, param): a Parameter, or None (the attribute is then None, as
    a Linear without bias has it)."""
    names = ("name", "param")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items() if k in names})
    name, param = given.get("name"), given.get("param")
    if not isinstance(name, str):
        raise DdxTypeError(f"parameter name should be a string. Got {type(name).__name__}")
    if "." in name or name == "":
        raise PyException.error("KeyError", "parameter name can't contain \".\"" if name
                                else "parameter name can't be empty string \"\"")
    if param is not None and (not isinstance(param, Tensor) or param not in PARAMETERS):
        kind = "torch.FloatTensor" if isinstance(param, Tensor) else type(param).__name__
        raise DdxTypeError(f"cannot assign '{kind}' object to parameter '{name}' "
                           "(torch.nn.Parameter or None required)")
    _attrs(m)[str(name)] = param
    return None


def named_buffers(m: Any) -> list:
    out, seen = [], set()
    for prefix, mod in named_modules(m):
        for name, b in own_buffers(mod):
            if id(b) not in seen:
                seen.add(id(b))
                out.append((Str(f"{prefix}.{name}" if prefix else name), b))
    return out


def state_items(m: Any) -> list:
    """(key, tensor) of state_dict(): a module's own parameters, then its persistent
    buffers, then each child's, in pre-order (explicit stack)."""
    out, stack = [], [("", m)]
    while stack:
        prefix, mod = stack.pop()
        params, kids = own(mod)
        for name, t in params + own_buffers(mod, persistent_only=True):
            out.append((prefix + name, t))
        for name, kid in reversed(kids):
            stack.append((f"{prefix}{name}.", kid))
    return out


def state_dict(ev, node, m, args, kw):
    return OrderedDict((Str(k), Tensor(t.value)) for k, t in state_items(m))


class IncompatibleKeys:
    """What load_state_dict returns: PyTorch's _IncompatibleKeys named tuple."""

    def __init__(self, missing: list, unexpected: list) -> None:
        self.missing_keys, self.unexpected_keys = missing, unexpected

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")

    def py_attr(self, ev, node, name):
        if name in ("missing_keys", "unexpected_keys"):
            return [Str(k) for k in getattr(self, name)]
        raise PyException.error("AttributeError",
                                f"'_IncompatibleKeys' object has no attribute '{name}'")


def load_state_dict(ev, node, m, args, kw):
    given = args[0] if args else kw.get("state_dict", (None,))[0]
    strict = bool(args[1]) if len(args) > 1 else bool(kw.get("strict", (True,))[0])
    if not isinstance(given, dict):
        raise DdxTypeError(f"Expected state_dict to be dict-like, got {type(given).__name__}.")
    mine = state_items(m)
    keys = [k for k, _ in mine]
    missing = [k for k in keys if k not in given]
    unexpected = [str(k) for k in given if str(k) not in keys]
    errors = []
    for k, t in mine:
        src = given.get(k)
        if src is None:
            continue
        if not isinstance(src, Tensor):
            errors.append(f'While copying the parameter named "{k}", expected torch.Tensor or '
                          f"Tensor-like object from checkpoint but received {type(src)}")
        elif src.value.shape != t.value.shape:
            errors.append(f"size mismatch for {k}: copying a param with shape "
                          f"torch.Size({list(src.value.shape)}) from checkpoint, the shape in "
                          f"current model is torch.Size({list(t.value.shape)}).")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " +
                          ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " +
                          ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        kind = m.cls.name if isinstance(m, Instance) else m.kind
        raise PyException.error("RuntimeError", f"Error(s) in loading state_dict for {kind}:"
                                "\n\t" + "\n\t".join(errors))
    for k, t in mine:  # (param.copy_(input_param) under no_grad: in place, in t's dtype)
        if k in given:
            if ev.journal is not None:
                ev.journal.keep(t, "value")
            t.value = np.array(given[k].value, dtype=t.value.dtype)
    return IncompatibleKeys(missing, unexpected)


def apply(ev, node, m, args, kw):
    """module.apply(fn): fn on every submodule, children before their parent (explicit
    stack), then the module is returned."""
    from .pycalls import call_value

    fn = args[0] if args else kw["fn"][0]
    order, stack = [], [(m, False)]
    while stack:
        mod, done = stack.pop()
        if done:
            order.append(mod)
            continue
        stack.append((mod, True))
        seen: set = set()
        for _, kid in reversed(own(mod)[1]):
            if id(kid) not in seen:
                seen.add(id(kid))
                stack.append((kid, False))
    for mod in order:
        call_value(ev, node, fn, [mod], {})
    return m


def _buffers(ev, node, m, args, kw):
    return [b for _, b in named_buffers(m)]


def _named_buffers(ev, node, m, args, kw):
    return [(k, b) for k, b in named_buffers(m)]


def _get_parameter(ev, node, m, args, kw):
    target = str(args[0])
    for k, p in state_items(m):
        if k == target and p in PARAMETERS:
            return p
    raise PyException.error("AttributeError", f"`{target}` is not an nn.Parameter")


MORE_METHODS.update({
    "register_buffer": register_buffer, "register_parameter": register_parameter,
    "buffers": _buffers, "named_buffers": _named_buffers,
    "state_dict": state_dict, "load_state_dict": load_state_dict, "apply": apply,
    "get_parameter": _get_parameter,
})

__all__ = ["IncompatibleKeys", "named_buffers", "state_items"]
