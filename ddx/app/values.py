"""The Python values the REPL surface gives: None, torch.Size, a str result, an .item() number."""

from __future__ import annotations


class NoneType:
    """What statements such as x.backward() give (Python's None): the REPL prints nothing."""

    def __repr__(self) -> str:
        return "None"


NOTHING = NoneType()


class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""


class Str(str):
    """A string result (``grad_fn.name()``)."""


class PyNumber(float):
    """What .item() gives: a Python number, printed as Python prints it."""

    def __new__(cls, v):
        obj = super().__new__(cls, v)
        obj.raw = v
        return obj
