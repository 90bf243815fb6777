"""An optimizer's parameter groups, as torch/optim/optimizer.py makes them: ``params`` is a
list of tensors (one group) or of dicts (a group each, ``{'params': ..., 'lr': 0.1}``), each
group's missing options are the optimizer's defaults, ``add_param_group`` adds one, and the
print lists every group's options in sorted order."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from .pyerrors import PyException


def split_groups(params: Any) -> list[dict]:
    """The groups ``params`` gives (before the defaults are filled in)."""
    if isinstance(params, Tensor):
        raise DdxTypeError("params argument given to the optimizer should be an iterable of "
                           "Tensors or dicts, but got torch.FloatTensor")
    if isinstance(params, dict):
        params = [params]
    if not isinstance(params, (list, tuple)):
        raise DdxTypeError("params argument given to the optimizer should be an iterable of "
                           "Tensors or dicts, but got " + type(params).__name__)
    items = list(params)
    if not items:
        raise PyException.error("ValueError", "optimizer got an empty parameter list")
    if not isinstance(items[0], dict):
        return [{"params": items}]
    return [dict(g) if isinstance(g, dict) else g for g in items]


def add_group(groups: list, group: Any, defaults: dict, check) -> None:
    """optimizer.add_param_group(group): its params made a list and checked, the defaults
    set where the group does not give them, no tensor in two groups."""
    if not isinstance(group, dict):
        raise DdxTypeError(f"param_group must be a dict, but got {type(group).__name__}")
    group = dict(group)
    params = group.get("params")
    if params is None:
        raise PyException.error("KeyError", "'params'")
    group["params"] = check([params] if isinstance(params, Tensor) else params)
    for key, value in defaults.items():
        group.setdefault(key, value)
    seen = {id(p) for g in groups for p in g["params"]}
    if any(id(p) in seen for p in group["params"]):
        raise PyException.error("ValueError",
                                "some parameters appear in more than one parameter group")
    groups.append(group)


def _shown(value: Any) -> str:
    if isinstance(value, Tensor) and value.value.size == 1 and value.weak:
        return str(value.value.item())
    return str(value)


def optimizer_repr(kind: str, groups: list) -> str:
    """Optimizer.__repr__: ``SGD (``, each group's sorted options but params, ``)``."""
    text = kind + " ("
    for i, group in enumerate(groups):
        text += f"\nParameter Group {i}\n"
        for key in sorted(group):
            if key != "params":
                text += f"    {key}: {_shown(group[key])}\n"
    return text + ")"


def zero_grads(ev, params, args: list, kw: dict) -> None:
    """zero_grad(set_to_none=True) of an optimizer or a module: each .grad None, or with
    set_to_none=False zeroed in place (a tensor that holds it sees the zeros)."""
    flag = args[0] if args else kw.get("set_to_none", (True,))[0]
    to_none = bool(flag.value.item() if isinstance(flag, Tensor) else flag)
    for p in params:
        if ev.journal is not None:
            ev.journal.keep(p, "grad")
        if to_none or p.grad is None:
            p.grad = None
            continue
        if ev.journal is not None:
            ev.journal.overwrite(p.grad)
        if not p.grad.flags.writeable:
            p.grad = p.grad.copy()
        p.grad[...] = 0


__all__ = ["add_group", "optimizer_repr", "split_groups", "zero_grads"]
