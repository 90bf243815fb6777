"""torch.optim.lr_scheduler's MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR,
CosineAnnealingLR, ReduceLROnPlateau, ChainedScheduler and SequentialLR, with the arithmetic of
their get_lr (the chainable forms, from each group's current lr, in Python floats as PyTorch
computes them)."""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from . import pycalls
from .pyerrors import PyException
from .pymodules import MODULES, Native
from .pyoptim import Optimizer
from .pysched import Scheduler, lambdas, maker


def number(value: Any) -> float:
    if isinstance(value, Tensor) and value.value.size == 1:
        return value.value.item()
    if isinstance(value, (int, float)):
        return value
    raise DdxTypeError(f"expected a number, got {type(value).__name__}")


class Chainable(Scheduler):
    """A scheduler whose options are numbers (read once) and which SequentialLR can restart
    at epoch 0 (``step(0)``: PyTorch's closed form there, ``at_zero``)."""

    def setup(self, ev, node) -> None:
        self.o = {k: number(v) for k, v in self.options.items() if k != "lr_lambda"}

    def at_zero(self, ev, node, base: float, current: float) -> float:
        return base



class MultiplicativeLR(Chainable):
    kind = "MultiplicativeLR"

    def setup(self, ev, node) -> None:
        self.lambdas = lambdas(self.options["lr_lambda"], len(self.optimizer.groups))

    def factor(self, ev, node) -> float:
        return number(pycalls.call_value(ev, node, self.lambdas[self.group],
                                         [weak(self.last_epoch)], {}))

    def lr(self, ev, node, current: float) -> float:
        return current if self.last_epoch == 0 else current * self.factor(ev, node)

    def at_zero(self, ev, node, base: float, current: float) -> float:
        return current * self.factor(ev, node)


class ConstantLR(Chainable):
    kind = "ConstantLR"

    def setup(self, ev, node) -> None:
        super().setup(ev, node)
        if self.o["factor"] > 1.0 or self.o["factor"] < 0:
            raise PyException.error("ValueError", "Constant multiplicative factor expected to "
                                    "be between 0 and 1.")

    def lr(self, ev, node, current: float) -> float:
        if self.last_epoch == 0:
            return current * self.o["factor"]
        if self.last_epoch != self.o["total_iters"]:
            return current
        return current * (1.0 / self.o["factor"])

    def at_zero(self, ev, node, base: float, current: float) -> float:
        return base * (self.o["factor"] + (0 >= self.o["total_iters"]) * (1 - self.o["factor"]))


class LinearLR(Chainable):
    kind = "LinearLR"

    def lr(self, ev, node, current: float) -> float:
        start, end, total = self.o["start_factor"], self.o["end_factor"], self.o["total_iters"]
        if self.last_epoch == 0:
            return current * start
        if self.last_epoch > total:
            return current
        return current * (1.0 + (end - start) / (total * start + (self.last_epoch - 1) *
                                                  (end - start)))

    def at_zero(self, ev, node, base: float, current: float) -> float:
        start, end, total = self.o["start_factor"], self.o["end_factor"], self.o["total_iters"]
        return base * (start + (end - start) * min(total, 0) / total)


class PolynomialLR(Chainable):
    kind = "PolynomialLR"

    def lr(self, ev, node, current: float) -> float:
        total = self.o["total_iters"]
        if self.last_epoch == 0 or self.last_epoch > total:
            return current
        decay = ((1.0 - self.last_epoch / total) /
                 (1.0 - (self.last_epoch - 1) / total)) ** self.o["power"]
        return current * decay


class CosineAnnealingLR(Chainable):
    kind = "CosineAnnealingLR"

    def lr(self, ev, node, current: float) -> float:
        t_max, eta_min = self.o["T_max"], self.o["eta_min"]
        base = self.base_lrs[self.group]
        if self.last_epoch == 0:
            return current
        if (self.last_epoch - 1 - t_max) % (2 * t_max) == 0:
            return current + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
        return ((1 + math.cos(math.pi * self.last_epoch / t_max)) /
                (1 + math.cos(math.pi * (self.last_epoch - 1) / t_max)) *
                (current - eta_min) + eta_min)


def restart(ev, node, s: Scheduler) -> None:
    """scheduler.step(0), as SequentialLR calls it at a milestone: the lr of epoch 0 in the
    scheduler's closed form (get_lr where it has none)."""
    s.last_epoch = 0
    s.last_lr = []
    for i, group in enumerate(s.optimizer.groups):
        s.group = i
        base, current = s.base_lrs[i], number(group["lr"])
        if isinstance(s, Chainable):
            new = s.at_zero(ev, node, base, current)
        elif s.kind == "MultiStepLR":
            new = base * s.options["gamma"] ** sum(1 for m in s.options["milestones"] if m <= 0)
        elif s.kind == "LambdaLR":
            new = s.lr(ev, node, current)
        else:  # StepLR, ExponentialLR
            new = base
        group["lr"] = weak(new)
        s.last_lr.append(new)


# class -> (positional parameters after the optimizer, defaults)
TABLE = {
    MultiplicativeLR: (("lr_lambda",), {}),
    ConstantLR: (("factor", "total_iters"), {"factor": 1.0 / 3, "total_iters": 5}),
    LinearLR: (("start_factor", "end_factor", "total_iters"),
               {"start_factor": 1.0 / 3, "end_factor": 1.0, "total_iters": 5}),
    PolynomialLR: (("total_iters", "power"), {"total_iters": 5, "power": 1.0}),
    CosineAnnealingLR: (("T_max", "eta_min"), {"eta_min": 0.0}),
}


class ReduceLROnPlateau:
    """step(metric): the lr times ``factor`` once the metric has not improved (by
    ``threshold``, relative or absolute) for more than ``patience`` steps."""

    kind = "ReduceLROnPlateau"
    NAMES = ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr",
             "eps")
    DEFAULTS = ("min", 0.1, 10, 1e-4, "rel", 0, 0, 1e-8)

    def __init__(self, optimizer: Optimizer, given: dict) -> None:
        o = dict(zip(self.NAMES, self.DEFAULTS))
        o.update(given)
        for k in ("factor", "patience", "threshold", "cooldown", "eps"):
            o[k] = number(o[k])
        if o["factor"] >= 1.0:
            raise PyException.error("ValueError", "Factor should be < 1.0.")
        mins = o["min_lr"] if isinstance(o["min_lr"], (list, tuple)) else \
            [o["min_lr"]] * len(optimizer.groups)
        self.optimizer, self.o, self.min_lrs = optimizer, o, [number(m) for m in mins]
        self.best = math.inf if o["mode"] == "min" else -math.inf
        self.bad = self.cooldown = self.last_epoch = 0
        self.last_lr = [number(g["lr"]) for g in optimizer.groups]

    def __repr__(self) -> str:
        return "<torch.optim.lr_scheduler.ReduceLROnPlateau object>"

    def better(self, a: float) -> bool:
        o, best = self.o, self.best
        rel = o["threshold_mode"] == "rel"
        if o["mode"] == "min":
            return a < (best * (1.0 - o["threshold"]) if rel else best - o["threshold"])
        return a > (best * (o["threshold"] + 1.0) if rel else best + o["threshold"])

    def step(self, metric: float) -> None:
        self.last_epoch += 1
        if self.better(metric):
            self.best, self.bad = metric, 0
        else:
            self.bad += 1
        if self.cooldown > 0:
            self.cooldown -= 1
            self.bad = 0
        if self.bad > self.o["patience"]:
            for i, group in enumerate(self.optimizer.groups):
                old = number(group["lr"])
                new = max(old * self.o["factor"], self.min_lrs[i])
                if old - new > self.o["eps"]:
                    group["lr"] = weak(new)
            self.cooldown, self.bad = self.o["cooldown"], 0
        self.last_lr = [number(g["lr"]) for g in self.optimizer.groups]

    def py_method(self, ev, node, name, args, kw):
        if name == "step":
            metric = args[0] if args else kw.get("metrics", (None,))[0]
            if metric is None:
                raise DdxTypeError("ReduceLROnPlateau.step() missing 1 required positional "
                                   "argument: 'metrics'")
            if ev.journal is not None:
                for key in ("best", "bad", "cooldown", "last_epoch", "last_lr"):
                    ev.journal.keep(self, key)
                for group in self.optimizer.groups:
                    ev.journal.bind(group, "lr", group["lr"])
            self.step(float(number(metric)))
            return None
        if name == "get_last_lr":
            return [weak(v) for v in self.last_lr]
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")

    def py_attr(self, ev, node, name):
        if name in ("best", "last_epoch"):
            return weak(getattr(self, name))
        if name == "optimizer":
            return self.optimizer
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")


def _plateau(ev, node, args, kw):
    if not args and "optimizer" not in kw:
        raise DdxTypeError("ReduceLROnPlateau.__init__() missing 1 required positional "
                           "argument: 'optimizer'")
    optimizer = args[0] if args else kw["optimizer"][0]
    if not isinstance(optimizer, Optimizer):
        raise DdxTypeError(f"{type(optimizer).__name__} is not an Optimizer")
    given = dict(zip(ReduceLROnPlateau.NAMES, args[1:]))
    for key, (value, _) in kw.items():
        if key not in ReduceLROnPlateau.NAMES and key not in ("optimizer", "verbose"):
            raise DdxTypeError(f"ReduceLROnPlateau.__init__() got an unexpected keyword "
                               f"argument '{key}'")
        if key in ReduceLROnPlateau.NAMES:
            given[key] = str(value) if key in ("mode", "threshold_mode") else value
    return ReduceLROnPlateau(optimizer, given)


class Composite:
    """ChainedScheduler (every scheduler steps, in turn) and SequentialLR (the one whose
    milestones the epoch has reached; restarted at epoch 0 at its milestone)."""

    def __init__(self, ev, node, kind: str, optimizer: Optimizer, schedulers: list,
                 milestones: list | None) -> None:
        self.kind, self.optimizer, self.schedulers = kind, optimizer, schedulers
        self.milestones = milestones
        self.last_epoch = 0
        if milestones is None:
            self.last_lr = [number(g["lr"]) for g in optimizer.groups]
            return
        for group in optimizer.groups:  # back to the initial lrs; undo the others' step
            group["lr"] = group["initial_lr"]
        for s in schedulers:
            s.last_epoch -= 1
        first = schedulers[bisect_right(milestones, 0)]
        first.step(ev, node)
        self.last_lr = list(first.last_lr)

    def __repr__(self) -> str:
        return f"<torch.optim.lr_scheduler.{self.kind} object>"

    def step(self, ev, node) -> None:
        if self.milestones is None:
            for s in self.schedulers:
                s.step(ev, node)
            self.last_lr = [number(g["lr"]) for g in self.optimizer.groups]
            return
        self.last_epoch += 1
        idx = bisect_right(self.milestones, self.last_epoch)
        s = self.schedulers[idx]
        if idx > 0 and self.milestones[idx - 1] == self.last_epoch:
            restart(ev, node, s)
        else:
            s.step(ev, node)
        self.last_lr = list(s.last_lr)

    def py_method(self, ev, node, name, args, kw):
        if name == "step":
            if args or kw:
                raise DdxTypeError(f"{self.kind}.step() takes no arguments")
            if ev.journal is not None:
                ev.journal.keep(self, "last_epoch")
                ev.journal.keep(self, "last_lr")
                for s in self.schedulers:
                    s.keep(ev)
            self.step(ev, node)
            return None
        if name == "get_last_lr":
            return [weak(v) for v in self.last_lr]
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")

    def py_attr(self, ev, node, name):
        if name == "optimizer":
            return self.optimizer
        if name == "last_epoch":
            return weak(self.last_epoch)
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")


def _schedulers(kind: str, given: Any, optimizer: Any) -> list:
    items = list(given) if isinstance(given, (list, tuple)) else None
    if not items:
        raise PyException.error("ValueError", f"{kind} expects at least one scheduler")
    for i, s in enumerate(items):
        if isinstance(s, ReduceLROnPlateau):
            raise PyException.error("ValueError", f"{kind} does not support "
                                    "`ReduceLROnPlateau` scheduler")
        if not isinstance(s, (Scheduler, Composite)):
            raise DdxTypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if s.optimizer is not optimizer:
            raise PyException.error("ValueError", f"{kind} expects all schedulers to belong "
                                    "to the same optimizer")
    return items


def _chained(ev, node, args, kw):
    given = args[0] if args else kw.get("schedulers", (None,))[0]
    optimizer = args[1] if len(args) > 1 else kw.get("optimizer", (None,))[0]
    if optimizer is None and isinstance(given, (list, tuple)) and given:
        optimizer = getattr(given[0], "optimizer", None)
    return Composite(ev, node, "ChainedScheduler", optimizer,
                     _schedulers("ChainedScheduler", given, optimizer), None)


def _sequential(ev, node, args, kw):
    names = ("optimizer", "schedulers", "milestones")
    given = dict(zip(names, args))
    given.update({k: v for k, (v, _) in kw.items() if k in names})
    if "optimizer" not in given or "schedulers" not in given or "milestones" not in given:
        raise DdxTypeError("SequentialLR.__init__() needs optimizer, schedulers and milestones")
    scheds = _schedulers("SequentialLR", given["schedulers"], given["optimizer"])
    if any(isinstance(s, Composite) for s in scheds):
        raise DdxTypeError("ddx's SequentialLR does not take a ChainedScheduler or SequentialLR")
    milestones = [int(number(m)) for m in given["milestones"]]
    if len(milestones) != len(scheds) - 1:
        raise PyException.error("ValueError", "Sequential Schedulers expects number of "
                                "schedulers provided to be one more than the number of "
                                f"milestone points, but got number of schedulers {len(scheds)} "
                                f"and the number of milestones to be equal to {len(milestones)}")
    return Composite(ev, node, "SequentialLR", given["optimizer"], scheds, milestones)


def register() -> None:
    members = MODULES["torch.optim.lr_scheduler"].members
    for cls in TABLE:
        members[cls.kind] = maker(cls, TABLE)
    members["ReduceLROnPlateau"] = Native("ReduceLROnPlateau", _plateau)
    members["ChainedScheduler"] = Native("ChainedScheduler", _chained)
    members["SequentialLR"] = Native("SequentialLR", _sequential)


register()

__all__ = ["Chainable", "Composite", "ReduceLROnPlateau", "TABLE"]
