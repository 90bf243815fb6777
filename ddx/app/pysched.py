"""torch.optim.lr_scheduler's StepLR, MultiStepLR, ExponentialLR and LambdaLR, as PyTorch
computes them: each step() moves ``last_epoch`` on and sets the optimizer's param group
``lr`` (the chainable forms multiply the current lr by gamma, as PyTorch's get_lr does, so
the floats are PyTorch's), which the next optimizer step() reads."""

from __future__ import annotations

from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from . import pycalls
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pyoptim import Optimizer


def _plain(value: Any) -> float:
    """An lr as the number it is: an int lr stays an int until a factor changes it, as
    PyTorch prints it (lr=5: get_last_lr() is [5])."""
    if isinstance(value, Tensor) and value.value.size == 1:
        got = value.value.item()
        return got if isinstance(got, int) and not isinstance(got, bool) else float(got)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _float(value)


def _float(value: Any) -> float:
    if isinstance(value, Tensor) and value.value.size == 1:
        return float(value.value.item())
    if isinstance(value, (int, float)):
        return float(value)
    raise DdxTypeError(f"expected a number, got {type(value).__name__}")


class Scheduler:
    kind = "LRScheduler"

    def __init__(self, ev, node, optimizer: Any, options: dict) -> None:
        if not isinstance(optimizer, Optimizer):
            raise DdxTypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer, self.options = optimizer, options
        for group in optimizer.groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [_plain(g["initial_lr"]) for g in optimizer.groups]
        self.last_epoch = -1
        self.last_lr = [_plain(g["lr"]) for g in optimizer.groups]
        self.setup(ev, node)
        self.step(ev, node)  # (PyTorch's _initial_step: epoch 0, the lr as it is)

    def __repr__(self) -> str:
        return f"<torch.optim.lr_scheduler.{self.kind} object>"

    def setup(self, ev, node) -> None:  # what a scheduler checks or makes from its options
        pass

    def lr(self, ev, node, current: float) -> float:  # the lr at self.last_epoch
        raise NotImplementedError

    def step(self, ev, node) -> None:
        self.last_epoch += 1
        self.last_lr = []
        for i, group in enumerate(self.optimizer.groups):
            self.group = i  # (the group lr() computes for: its base_lrs[i], its lambda)
            new = self.lr(ev, node, _plain(group["lr"]))
            group["lr"] = weak(new)
            self.last_lr.append(new)

    def keep(self, ev) -> None:
        """What step() changes, kept for the REPL's undo."""
        if ev.journal is not None:
            ev.journal.keep(self, "last_epoch")
            ev.journal.keep(self, "last_lr")
            for group in self.optimizer.groups:
                ev.journal.bind(group, "lr", group["lr"])

    def py_method(self, ev, node, name, args, kw):
        if name == "step":
            if args or kw:
                raise DdxTypeError("ddx's scheduler step() takes no epoch")
            self.keep(ev)
            self.step(ev, node)
            return None
        if name == "get_last_lr":
            return [weak(v) for v in self.last_lr]
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")

    def py_attr(self, ev, node, name):
        if name == "last_epoch":
            return weak(self.last_epoch)
        if name == "base_lrs":
            return [weak(v) for v in self.base_lrs]
        if name == "optimizer":
            return self.optimizer
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")


class StepLR(Scheduler):
    kind = "StepLR"

    def lr(self, ev, node, current: float) -> float:
        size = int(self.options["step_size"])
        if self.last_epoch == 0 or self.last_epoch % size != 0:
            return current
        return current * self.options["gamma"]


class MultiStepLR(Scheduler):
    kind = "MultiStepLR"

    def lr(self, ev, node, current: float) -> float:
        hits = sum(1 for m in self.options["milestones"] if int(m) == self.last_epoch)
        return current if hits == 0 else current * self.options["gamma"] ** hits


class ExponentialLR(Scheduler):
    kind = "ExponentialLR"

    def lr(self, ev, node, current: float) -> float:
        return current if self.last_epoch == 0 else current * self.options["gamma"]


class LambdaLR(Scheduler):
    kind = "LambdaLR"

    def setup(self, ev, node) -> None:
        self.lambdas = lambdas(self.options["lr_lambda"], len(self.optimizer.groups))

    def lr(self, ev, node, current: float) -> float:
        factor = pycalls.call_value(ev, node, self.lambdas[self.group],
                                    [weak(self.last_epoch)], {})
        return self.base_lrs[self.group] * _float(factor)


def lambdas(given: Any, n: int) -> list:
    """lr_lambda: one function for every group, or a list of one per group."""
    if not isinstance(given, (list, tuple)):
        return [given] * n
    if len(given) != n:
        from .pyerrors import PyException

        raise PyException.error("ValueError", f"Expected {n} lr_lambdas, but got {len(given)}")
    return list(given)


# class -> (positional parameters after the optimizer, defaults)
SCHEDULERS = {StepLR: (("step_size", "gamma"), {"gamma": 0.1}),
              MultiStepLR: (("milestones", "gamma"), {"gamma": 0.1}),
              ExponentialLR: (("gamma",), {}),
              LambdaLR: (("lr_lambda",), {})}


def maker(cls, table: dict | None = None):
    names, defaults = (table or SCHEDULERS)[cls]

    def make(ev, node, args, kw):
        if not args and "optimizer" not in kw:
            raise DdxTypeError(f"{cls.kind}.__init__() missing 1 required positional "
                               "argument: 'optimizer'")
        optimizer = args[0] if args else kw["optimizer"][0]
        given = dict(defaults)
        given.update(zip(names, args[1:]))
        for key, (value, _) in kw.items():
            if key == "optimizer":
                continue
            if key not in names and key not in ("last_epoch", "verbose"):
                raise DdxTypeError(f"{cls.kind}.__init__() got an unexpected keyword "
                                   f"argument '{key}'")
            given[key] = value
        for name in names:
            if name not in given:
                raise DdxTypeError(f"{cls.kind}.__init__() missing 1 required positional "
                                   f"argument: '{name}'")
        options = {k: (_float(v) if k in ("gamma", "step_size") else
                       [_float(m) for m in v] if k == "milestones" else v)
                   for k, v in given.items() if k not in ("last_epoch", "verbose")}
        return cls(ev, node, optimizer, options)

    return Native(cls.kind, make)


def register() -> None:
    module = PyModule("torch.optim.lr_scheduler", {cls.kind: maker(cls) for cls in SCHEDULERS})
    EXTRA["torch.optim"]["lr_scheduler"] = module
    MODULES["torch.optim.lr_scheduler"] = module


register()

__all__ = ["SCHEDULERS", "Scheduler", "lambdas", "maker"]
