"""torch.nn's module classes as values: ``nn.Linear`` prints as
``<class 'torch.nn.modules.linear.Linear'>``, and ``type(m)`` of a module ddx builds is its
class, so ``type(m) is nn.Linear`` (nn.Module.apply's documented example) holds; the type of
an nn.Parameter is ``<class 'torch.nn.parameter.Parameter'>``."""

from __future__ import annotations

from typing import Any

from ..graph.tensor import Tensor
from .pymodules import EXTRA, Native
from .pynn import PARAMETERS, Builtin
from .pynn_dtype import factory

# the file of torch/nn/modules/ each class is defined in, where it is not activation.py
# (nor loss.py: a name ending in Loss)
FILES = {
    "linear": ("Linear", "Identity", "Bilinear", "LazyLinear"),
    "container": ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"),
    "flatten": ("Flatten", "Unflatten"),
    "dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"),
}


class NNClass(Native):
    """A module class ddx provides (called, it makes the module)."""

    is_class_value = True  # (== is identity: type(m) == nn.Linear)

    def __init__(self, name: str, fn, path: str) -> None:
        super().__init__(name, factory(name, fn))  # (device=, dtype=: pynn_dtype.py)
        self.path = path

    def __repr__(self) -> str:
        return f"<class '{self.path}.{self.name}'>"


def _path(name: str) -> str:
    if name == "Parameter":
        return "torch.nn.parameter"
    for file, names in FILES.items():
        if name in names:
            return f"torch.nn.modules.{file}"
    return "torch.nn.modules." + ("loss" if name.endswith("Loss") else "activation")


def wrap_all() -> None:
    nn = EXTRA["torch.nn"]
    for name, value in list(nn.items()):
        if type(value) is Native and name[:1].isupper():
            nn[name] = NNClass(name, value.fn, _path(name))


def class_of(value: Any) -> Any:
    """type(value) for a module ddx builds or an nn.Parameter; None for anything else."""
    nn = EXTRA["torch.nn"]
    if isinstance(value, Builtin) and isinstance(nn.get(value.kind), NNClass):
        return nn[value.kind]
    if isinstance(value, Tensor) and not value.weak and value in PARAMETERS:
        return nn["Parameter"]
    return None


__all__ = ["NNClass", "class_of", "wrap_all"]
