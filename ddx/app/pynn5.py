"""torch.nn's Threshold, Hardshrink and Softshrink modules (their F.* rows are
ops/rows_shrink.py), printed as PyTorch prints them: ``Threshold(threshold=0, value=0.5)``,
``Hardshrink(0.5)``."""

from __future__ import annotations

from . import pynn_more
from .pynn_more import ACTIVATIONS


def _shown(v) -> str:
    from ..graph.tensor import Tensor

    return repr(v.value.item() if isinstance(v, Tensor) else v)


def register() -> None:
    ACTIVATIONS.update({
        "Threshold": ("threshold", (("threshold", None), ("value", None), ("inplace", False)),
                      lambda g: f"threshold={_shown(g['threshold'])}, value={_shown(g['value'])}"
                      + (", inplace=True" if g.get("inplace") else "")),
        "Hardshrink": ("hardshrink", (("lambd", 0.5),), lambda g: _shown(g["lambd"])),
        "Softshrink": ("softshrink", (("lambd", 0.5),), lambda g: _shown(g["lambd"])),
    })
    pynn_more.register()


register()
