"""The switches seeding code sets before it trains, as PyTorch 2.13's CPU build answers them:
``torch.use_deterministic_algorithms(mode, warn_only=False)`` with
``are_deterministic_algorithms_enabled()`` and ``is_deterministic_algorithms_warn_only_
enabled()`` (ddx's kernels are deterministic whatever the mode), and ``torch.backends``:
``cudnn.deterministic`` / ``benchmark`` / ``enabled`` / ``allow_tf32`` (settable flags; no
cuDNN: ``is_available()`` is False), ``mps.is_available()`` / ``is_built()`` (False) and
``cuda.matmul.allow_tf32``."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from .pycompat import flag as _flag
from .pymodules import EXTRA, Native, PyModule

DETERMINISTIC = {"mode": False, "warn_only": False}


class Flags:
    """A torch.backends module whose flags a script sets (cudnn.deterministic = True)."""

    def __init__(self, name: str, flags: dict, functions: dict) -> None:
        self.name, self.flags, self.functions = name, dict(flags), functions

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"

    def py_attr(self, ev, node, name: str) -> Any:
        if name in self.flags:
            return self.flags[name]
        if name in self.functions:
            return self.functions[name]
        raise DdxTypeError(f"module '{self.name}' has no attribute '{name}'")

    def py_method(self, ev, node, name: str, args: list, kw: dict) -> Any:
        return self.py_attr(ev, node, name).fn(ev, node, args, kw)

    def py_setattr(self, name: str, value: Any) -> None:
        if name not in self.flags:
            raise DdxTypeError(f"ddx's '{self.name}' has no flag '{name}'")
        self.flags[name] = value if isinstance(value, Flags) else _flag(value)


def _answer(value: Any) -> Native:
    return Native("is_available", lambda ev, node, args, kw: value)


def _use_deterministic_algorithms(ev, node, args: list, kw: dict) -> None:
    mode = args[0] if args else kw.get("mode", (None,))[0]
    if mode is None:
        raise DdxTypeError("use_deterministic_algorithms() missing required argument 'mode' "
                           "(pos 1)")
    DETERMINISTIC["mode"] = _flag(mode)
    DETERMINISTIC["warn_only"] = _flag(args[1] if len(args) > 1 else
                                       kw.get("warn_only", (False,))[0])
    return None


def register() -> None:
    cudnn = Flags("torch.backends.cudnn", {"deterministic": False, "benchmark": False,
                                           "enabled": True, "allow_tf32": True},
                  {"is_available": _answer(False), "version": _answer(None)})
    mps = Flags("torch.backends.mps", {}, {"is_available": _answer(False),
                                           "is_built": _answer(False)})
    matmul = Flags("torch.backends.cuda.matmul", {"allow_tf32": False,
                                                  "allow_fp16_reduced_precision_reduction": True},
                   {})
    cuda = Flags("torch.backends.cuda", {"matmul": matmul}, {"is_built": _answer(False)})
    torch = EXTRA["torch"]
    torch.setdefault("backends", PyModule("torch.backends", {"cudnn": cudnn, "mps": mps,
                                                             "cuda": cuda}))
    torch["use_deterministic_algorithms"] = Native("use_deterministic_algorithms",
                                                   _use_deterministic_algorithms)
    torch["are_deterministic_algorithms_enabled"] = Native(
        "are_deterministic_algorithms_enabled",
        lambda ev, node, args, kw: DETERMINISTIC["mode"])
    torch["is_deterministic_algorithms_warn_only_enabled"] = Native(
        "is_deterministic_algorithms_warn_only_enabled",
        lambda ev, node, args, kw: DETERMINISTIC["warn_only"])


register()

__all__ = ["DETERMINISTIC", "Flags"]
