"""Anomaly detection in the REPL's Python, as torch.autograd's:

- ``with torch.autograd.detect_anomaly(check_nan=True):`` turns it on for the block (with
  PyTorch's warning that it slows the program down);
- ``torch.autograd.set_detect_anomaly(mode, check_nan=True)`` turns it on or off at once, and
  as a ``with`` context puts back what was there before at the block's end;
- ``torch.is_anomaly_enabled()``, ``torch.is_anomaly_check_nan_enabled()``.

While it is on, a node whose backward returns nan stops the backward with PyTorch's
"Function 'SqrtBackward0' returned nan values in its 0th output." (engine/reverse.py checks;
engine/nodehooks.ANOMALY holds the mode)."""

from __future__ import annotations

from ..engine.nodehooks import ANOMALY
from ..errors import DdxTypeError
from ..graph.values import truth
from .pymodules import EXTRA, Native

ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime "
                   "and should only be enabled for debugging.")


class AnomalyMode:
    """detect_anomaly() / set_detect_anomaly(): the mode it sets, and the one it replaced."""

    def __init__(self, name: str, mode: bool, check_nan: bool) -> None:
        self.name, self.mode, self.check_nan = name, mode, check_nan
        self.before = list(ANOMALY)

    def __repr__(self) -> str:
        return f"<torch.autograd.anomaly_mode.{self.name} object>"

    def py_enter(self, ev) -> None:  # (what it replaced was noted when it was made)
        ANOMALY[:] = [self.mode, self.check_nan]

    def py_exit(self, ev) -> None:
        ANOMALY[:] = self.before


def _flags(node, args: list, kw: dict, names: tuple, what: str) -> list:
    for name in kw:
        if name not in names:
            raise DdxTypeError(f"{what}() got an unexpected keyword argument '{name}'")
    if len(args) > len(names):
        raise DdxTypeError(f"{what}() takes at most {len(names)} arguments "
                           f"({len(args)} given)")
    given = dict(zip(names, args))
    given.update({k: v[0] for k, v in kw.items()})
    return [given.get(n) for n in names]


def _detect_anomaly(ev, node, args: list, kw: dict) -> AnomalyMode:
    check_nan, = _flags(node, args, kw, ("check_nan",), "detect_anomaly")
    ev.warnings.append(ENABLED_WARNING)
    return AnomalyMode("detect_anomaly", True, True if check_nan is None else truth(check_nan))


def _set_detect_anomaly(ev, node, args: list, kw: dict) -> AnomalyMode:
    mode, check_nan = _flags(node, args, kw, ("mode", "check_nan"), "set_detect_anomaly")
    if mode is None:
        raise DdxTypeError("set_detect_anomaly() missing 1 required positional argument: "
                           "'mode'")
    ctx = AnomalyMode("set_detect_anomaly", truth(mode),
                      True if check_nan is None else truth(check_nan))
    ANOMALY[:] = [ctx.mode, ctx.check_nan]  # (at once, as PyTorch's __init__ does)
    return ctx


def _no_args(name: str, value):
    def fn(ev, node, args: list, kw: dict):
        if args or kw:
            raise DdxTypeError(f"{name}() takes no arguments")
        return value()
    return Native(name, fn)


def register() -> None:
    EXTRA["torch.autograd"]["detect_anomaly"] = Native("detect_anomaly", _detect_anomaly)
    EXTRA["torch.autograd"]["set_detect_anomaly"] = Native("set_detect_anomaly",
                                                           _set_detect_anomaly)
    EXTRA["torch"]["is_anomaly_enabled"] = _no_args("is_anomaly_enabled", lambda: ANOMALY[0])
    EXTRA["torch"]["is_anomaly_check_nan_enabled"] = _no_args(
        "is_anomaly_check_nan_enabled", lambda: ANOMALY[1])


register()

__all__ = ["AnomalyMode"]
