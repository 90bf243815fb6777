"""An optimizer's ``state_dict()`` and ``load_state_dict(sd)``, as torch/optim/optimizer.py
packs them: ``{'state': {index: {name: tensor}}, 'param_groups': [{option: value, ...,
'params': [index, ...]}]}``, the parameters numbered in the order of the groups, only those
with state in ``state`` (``step`` a float32 0-d tensor, as PyTorch keeps it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxValueError
from ..graph.tensor import Tensor
from .values import Str


def state_dict(opt: Any) -> dict:
    index: dict[int, int] = {}
    groups = []
    for group in opt.groups:
        packed = {Str(k): v for k, v in group.items() if k != "params"}
        packed[Str("params")] = [index.setdefault(id(p), len(index)) for p in group["params"]]
        groups.append(packed)
    state = {}
    for group in opt.groups:
        for p in group["params"]:
            st = opt.state.get(id(p))
            if st:
                state[index[id(p)]] = {Str(k): _tensor(k, v) for k, v in st.items()}
    return {Str("state"): state, Str("param_groups"): groups}


def _tensor(name: str, value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return Tensor(value.copy())
    if isinstance(value, float) and name == "step":
        return Tensor(np.asarray(value, dtype=np.float32))
    return value


def load_state_dict(ev, opt: Any, sd: Any) -> None:
    """The options of each group and the state of each parameter from ``sd``, as PyTorch's
    load_state_dict checks and copies them."""
    if not isinstance(sd, dict) or "param_groups" not in sd or "state" not in sd:
        raise DdxValueError("loaded state dict has a different number of parameter groups")
    saved = list(sd["param_groups"])
    if len(saved) != len(opt.groups):
        raise DdxValueError("loaded state dict has a different number of parameter groups")
    if any(len(g["params"]) != len(s["params"]) for g, s in zip(opt.groups, saved)):
        raise DdxValueError("loaded state dict contains a parameter group that doesn't match "
                            "the size of optimizer's group")
    if ev.journal is not None:
        ev.journal.keep(opt, "state")
    params = {i: p for g, s in zip(opt.groups, saved) for i, p in zip(s["params"], g["params"])}
    for g, s in zip(opt.groups, saved):
        for k, v in s.items():
            if k == "params":
                continue
            if ev.journal is not None:
                ev.journal.bind(g, str(k), v)
            else:
                g[str(k)] = v
    state = {}
    for i, st in dict(sd["state"]).items():
        p = params.get(int(i.value.item()) if isinstance(i, Tensor) else int(i))
        if p is None:
            continue
        state[id(p)] = {str(k): (float(v.value.item()) if str(k) == "step" else
                                 np.array(v.value, dtype=p.value.dtype))
                        if isinstance(v, Tensor) else v for k, v in dict(st).items()}
    opt.state = state


__all__ = ["load_state_dict", "state_dict"]
