"""torch.optim.lr_scheduler's CyclicLR, OneCycleLR and CosineAnnealingWarmRestarts, with
the arithmetic of torch/optim/lr_scheduler.py's get_lr and step in Python floats (so the lrs
are PyTorch's to the last bit), and the momentum (or Adam's beta1) they cycle with the lr,
written into the param groups as PyTorch writes it (the group's keys in PyTorch's order)."""

from __future__ import annotations

import math
from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from . import pycalls
from .pyerrors import PyException
from .pymodules import MODULES, Native
from .pyoptim import Optimizer
from .pysched import Scheduler
from .pysched2 import number


def _error(text: str) -> PyException:
    return PyException.error("ValueError", text)


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """_format_param: one value for every group, or a list of one per group."""
    n = len(optimizer.groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise _error(f"{name} must have the same length as optimizer.param_groups. {name} "
                         f"has {len(value)} values, param_groups has {n}.")
        return [number(v) for v in value]
    return [number(value)] * n


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _value(v: Any) -> Any:
    """An option as Python has it: a wrapped Python number as that number."""
    if isinstance(v, Tensor) and v.weak and v.value.size == 1:
        return v.value.item()
    return v


class Cycling(Scheduler):
    """A scheduler that also sets each group's momentum (``betas[0]`` for Adam)."""

    def momentum_setup(self, optimizer: Optimizer, cycle: bool, base: Any, top: Any) -> None:
        self.cycle_momentum = bool(cycle)
        if not self.cycle_momentum:
            return
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise _error("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        self.max_momentums = _per_group("max_momentum", optimizer, top)
        self.base_momentums = _per_group("base_momentum", optimizer, base)
        for m, b, group in zip(self.max_momentums, self.base_momentums, optimizer.groups):
            self.set_momentum(group, m)
            group["max_momentum"] = weak(m)
            group["base_momentum"] = weak(b)

    def set_momentum(self, group: dict, m: float) -> None:
        if self.use_beta1:
            betas = group.get("betas", self.optimizer.defaults["betas"])
            group["betas"] = (weak(m), *tuple(betas)[1:])
        else:
            group["momentum"] = weak(m)

    def keep(self, ev) -> None:
        super().keep(ev)
        if ev.journal is not None and getattr(self, "cycle_momentum", False):
            for group in self.optimizer.groups:
                key = "betas" if self.use_beta1 else "momentum"
                ev.journal.bind(group, key, group[key])


class CyclicLR(Cycling):
    kind = "CyclicLR"

    def __init__(self, ev, node, optimizer: Any, o: dict) -> None:
        if not isinstance(optimizer, Optimizer):
            raise DdxTypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, o["base_lr"])
        for lr, group in zip(base_lrs, optimizer.groups):
            group["lr"] = weak(lr)
        self.max_lrs = _per_group("max_lr", optimizer, o["max_lr"])
        up = float(number(o["step_size_up"]))
        down = float(number(o["step_size_down"])) if o["step_size_down"] is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        mode, self.custom = o["mode"], o["scale_fn"]
        if mode not in ("triangular", "triangular2", "exp_range") and self.custom is None:
            raise _error("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_mode = mode, number(o["gamma"]), o["scale_mode"]
        if self.custom is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.momentum_setup(optimizer, o["cycle_momentum"], o["base_momentum"],
                            o["max_momentum"])
        super().__init__(ev, node, optimizer, {})
        self.base_lrs = base_lrs

    def scale(self, ev, node, x: float) -> float:
        if self.custom is not None:
            return number(pycalls.call_value(ev, node, self.custom, [weak(x)], {}))
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def step(self, ev, node) -> None:
        self.last_epoch += 1
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            factor = x / self.step_ratio
        else:
            factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = []
        base_lrs = getattr(self, "base_lrs", None) or [number(g["lr"])
                                                       for g in self.optimizer.groups]
        for base, top in zip(base_lrs, self.max_lrs):
            lrs.append(base + (top - base) * factor * self.scale(ev, node, at))
        if self.cycle_momentum:
            for base, top, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.groups):
                self.set_momentum(group, top - (top - base) * factor * self.scale(ev, node, at))
        for lr, group in zip(lrs, self.optimizer.groups):
            group["lr"] = weak(lr)
        self.last_lr = lrs


class OneCycleLR(Cycling):
    kind = "OneCycleLR"

    def __init__(self, ev, node, optimizer: Any, o: dict) -> None:
        if not isinstance(optimizer, Optimizer):
            raise DdxTypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        total, epochs, per = (_value(o[k]) for k in ("total_steps", "epochs", "steps_per_epoch"))
        if total is not None:
            if not _int(total) or total <= 0:
                raise _error(f"Expected positive integer total_steps, but got {total}")
            self.total_steps = total
        elif epochs is not None and per is not None:
            if not _int(epochs) or epochs <= 0:
                raise _error(f"Expected positive integer epochs, but got {epochs}")
            if not _int(per) or per <= 0:
                raise _error(f"Expected positive integer steps_per_epoch, but got {per}")
            self.total_steps = epochs * per
        else:
            raise _error("You must define either total_steps OR (epochs AND steps_per_epoch)")
        pct = _value(o["pct_start"])
        n = self.total_steps
        if _value(o["three_phase"]):
            self.phases = [(float(pct * n) - 1, "initial_lr", "max_lr", "max_momentum",
                            "base_momentum"),
                           (float(2 * pct * n) - 2, "max_lr", "initial_lr", "base_momentum",
                            "max_momentum"),
                           (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(float(pct * n) - 1, "initial_lr", "max_lr", "max_momentum",
                            "base_momentum"),
                           (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if not isinstance(pct, float) or pct < 0 or pct > 1:
            raise _error(f"Expected float between 0 and 1 pct_start, but got {pct}")
        self.anneal = o["anneal_strategy"]
        if self.anneal not in ("cos", "linear"):
            raise _error("anneal_strategy must be one of 'cos' or 'linear', instead got "
                         f"{self.anneal}")
        div, final = number(o["div_factor"]), number(o["final_div_factor"])
        for top, group in zip(_per_group("max_lr", optimizer, o["max_lr"]), optimizer.groups):
            group["initial_lr"] = weak(top / div)
            group["max_lr"] = weak(top)
            group["min_lr"] = weak(top / div / final)
        self.momentum_setup(optimizer, o["cycle_momentum"], o["base_momentum"],
                            o["max_momentum"])
        super().__init__(ev, node, optimizer, {})

    def annealed(self, start: float, end: float, pct: float) -> float:
        if self.anneal == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def step(self, ev, node) -> None:
        self.last_epoch += 1
        step = self.last_epoch
        if step > self.total_steps:
            raise _error(f"Tried to step {step} times. The specified number of total steps is "
                         f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self.annealed(number(group[lr0]), number(group[lr1]), pct))
                    if self.cycle_momentum:
                        self.set_momentum(group, self.annealed(number(group[m0]),
                                                               number(group[m1]), pct))
                    break
                start = end
        for lr, group in zip(lrs, self.optimizer.groups):
            group["lr"] = weak(lr)
        self.last_lr = lrs


class CosineAnnealingWarmRestarts(Scheduler):
    kind = "CosineAnnealingWarmRestarts"

    def __init__(self, ev, node, optimizer: Any, o: dict) -> None:
        t0, mult, eta = _value(o["T_0"]), _value(o["T_mult"]), _value(o["eta_min"])
        if not _int(t0) or t0 <= 0:
            raise _error(f"Expected positive integer T_0, but got {t0}")
        if not _int(mult) or mult < 1:
            raise _error(f"Expected integer T_mult >= 1, but got {mult}")
        if not isinstance(eta, (float, int)):
            raise _error(f"Expected float or int eta_min, but got {eta} of type "
                         f"{type(eta).__name__}")
        self.T_0 = self.T_i = t0
        self.T_mult, self.eta_min, self.T_cur = mult, eta, -1
        super().__init__(ev, node, optimizer, {})

    def step(self, ev, node, epoch: Any = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise _error(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = []
        for base, group in zip(self.base_lrs, self.optimizer.groups):
            lr = (self.eta_min + (base - self.eta_min) *
                  (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2)
            group["lr"] = weak(lr)
            self.last_lr.append(lr)

    def keep(self, ev) -> None:
        super().keep(ev)
        if ev.journal is not None:
            for key in ("T_cur", "T_i"):
                ev.journal.keep(self, key)

    def py_method(self, ev, node, name, args, kw):
        if name == "step" and (args or kw):
            epoch = _value(args[0] if args else kw.get("epoch", (None,))[0])
            if epoch is not None and not isinstance(epoch, (int, float)):
                raise DdxTypeError("step(): epoch must be a number")
            self.keep(ev)
            self.step(ev, node, epoch)
            return None
        return super().py_method(ev, node, name, args, kw)

    def py_attr(self, ev, node, name):
        if name in ("T_0", "T_i", "T_mult", "T_cur", "eta_min"):
            return weak(getattr(self, name))
        return super().py_attr(ev, node, name)


# class -> its parameters after the optimizer, in order, with their defaults (None: required)
_REQUIRED = object()
PARAMS = {
    CyclicLR: (("base_lr", _REQUIRED), ("max_lr", _REQUIRED), ("step_size_up", 2000),
               ("step_size_down", None), ("mode", "triangular"), ("gamma", 1.0),
               ("scale_fn", None), ("scale_mode", "cycle"), ("cycle_momentum", True),
               ("base_momentum", 0.8), ("max_momentum", 0.9), ("last_epoch", -1)),
    OneCycleLR: (("max_lr", _REQUIRED), ("total_steps", None), ("epochs", None),
                 ("steps_per_epoch", None), ("pct_start", 0.3), ("anneal_strategy", "cos"),
                 ("cycle_momentum", True), ("base_momentum", 0.85), ("max_momentum", 0.95),
                 ("div_factor", 25.0), ("final_div_factor", 1e4), ("three_phase", False),
                 ("last_epoch", -1)),
    CosineAnnealingWarmRestarts: (("T_0", _REQUIRED), ("T_mult", 1), ("eta_min", 0.0),
                                  ("last_epoch", -1)),
}


def _maker(cls):
    params = PARAMS[cls]
    names = [n for n, _ in params]

    def make(ev, node, args, kw):
        if not args and "optimizer" not in kw:
            raise DdxTypeError(f"{cls.kind}.__init__() missing 1 required positional "
                               "argument: 'optimizer'")
        optimizer = args[0] if args else kw["optimizer"][0]
        if len(args) > len(names) + 1:
            raise DdxTypeError(f"{cls.kind}.__init__() takes from 2 to {len(names) + 2} "
                               f"positional arguments but {len(args) + 1} were given")
        given = dict(params)
        given.update(zip(names, args[1:]))
        for key, (value, _) in kw.items():
            if key == "optimizer":
                continue
            if key not in given:
                raise DdxTypeError(f"{cls.kind}.__init__() got an unexpected keyword "
                                   f"argument '{key}'")
            given[key] = value
        for name, value in given.items():
            if value is _REQUIRED:
                raise DdxTypeError(f"{cls.kind}.__init__() missing 1 required positional "
                                   f"argument: '{name}'")
        if _value(given.pop("last_epoch")) != -1:
            raise DdxTypeError(f"ddx's {cls.kind} starts at last_epoch=-1 only")
        return cls(ev, node, optimizer, {k: v if isinstance(v, Tensor) and not v.weak
                                         else _value(v) for k, v in given.items()})

    return Native(cls.kind, make)


def register() -> None:
    members = MODULES["torch.optim.lr_scheduler"].members
    for cls in PARAMS:
        members[cls.kind] = _maker(cls)


register()

__all__ = ["PARAMS", "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"]
