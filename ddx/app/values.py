"""The Python values the REPL surface gives: None, torch.Size, a str result, an .item() number,
torch.device."""

from __future__ import annotations

from typing import Any

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from .pyvmapstate import FRAMES, check_truth


class NoneType:
    """What statements such as x.backward() give (Python's None): the REPL prints nothing."""

    def __repr__(self) -> str:
        return "None"


NOTHING = NoneType()


class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``; ``.numel()`` its product."""

    sliced_keeps_kind = True

    def py_method(self, ev, node, name: str, args: list, kw: dict) -> Any:
        if name == "numel":
            n = 1
            for d in self:
                n *= d
            return n
        if name in ("count", "index"):
            return getattr(tuple(self), name)(*[_plain(a) for a in args])
        raise DdxTypeError(f"'torch.Size' object has no attribute '{name}'")

    def py_attr(self, ev, node, name: str) -> Any:
        if name in ("numel", "count", "index"):
            return name  # (hasattr: a method it has)
        raise DdxTypeError(f"'torch.Size' object has no attribute '{name}'")


def _plain(value: Any) -> Any:
    """A number as Python's (a weak one-element tensor: its number)."""
    if isinstance(value, Tensor) and value.value.size == 1:
        return value.value.reshape(-1)[0].item()
    return getattr(value, "raw", value)


class DictView(list):
    """d.keys(), d.values(), d.items(): a list that prints as Python's view does
    (``dict_keys(['a', 'b'])``; ``odict_keys`` for a state_dict's OrderedDict)."""

    def __new__(cls, items, kind: str):
        obj = super().__new__(cls)
        obj.kind = kind
        return obj

    def __init__(self, items, kind: str) -> None:
        super().__init__(items)


class Str(str):
    """A string result (``grad_fn.name()``)."""


class PyType(Str):
    """What type(x) gives for a value that is not a class of the user's: it prints as
    ``<class 'torch.Tensor'>``, and its ``__name__`` is the last part (``Tensor``)."""

    def __new__(cls, qualified: str):
        obj = super().__new__(cls, f"<class '{qualified}'>")
        obj.short = qualified.rpartition(".")[2]
        return obj


class PyNumber(float):
    """What .item() gives: a Python number, printed as Python prints it."""

    def __new__(cls, v):
        obj = super().__new__(cls, v)
        obj.raw = v
        return obj


class Device:
    """torch.device: any of PyTorch's device types can be named (``torch.device('cuda')``
    is a value on a CPU-only machine too); only the CPU can hold a tensor (require_cpu)."""

    def __init__(self, kind: str, index: int | None = None) -> None:
        self.kind, self.index = kind, index

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.kind}'{index})"

    def __str__(self) -> str:
        return self.kind if self.index is None else f"{self.kind}:{self.index}"

    def __eq__(self, other) -> bool:  # (torch.device('cpu') == 'cpu' is False, as in torch)
        return isinstance(other, Device) and (other.kind, other.index) == (self.kind, self.index)

    def py_attr(self, ev, node, name: str) -> Any:
        if name == "type":
            return self.kind
        if name == "index":
            return self.index
        raise DdxTypeError(f"'torch.device' object has no attribute '{name}'")

    def __hash__(self) -> int:
        return hash((self.kind, self.index))


def python_truth(value: Any) -> bool:
    if value is None or value is NOTHING:
        return False
    if isinstance(value, Tensor):
        if value.value.size != 1:
            raise DdxRuntimeError("Boolean value of Tensor with more than one value is "
                                  "ambiguous")
        if FRAMES:
            check_truth(value)
        return bool(value.value.item())
    if isinstance(value, (bool, int, float, str, list, tuple, dict, set, range)):
        return bool(value)
    return True
