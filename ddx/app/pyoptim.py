"""torch.optim in the REPL's Python: SGD (momentum, dampening, weight_decay, nesterov,
maximize) and Adam (betas, eps, weight_decay, amsgrad), with step() and zero_grad() following
torch/optim/sgd.py's and adam.py's single-tensor paths (PyTorch's CPU default), in the
parameters' dtype, with the CPU kernels' fused multiply-adds (add with alpha, lerp)."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from ..ops import vml
from ..ops.rng_math import fma32, fma64
from . import pygroups, pyoptim_state
from .pymodules import EXTRA, Native


def fma(a, b, c, dtype) -> np.ndarray:
    """a*b + c rounded once in ``dtype`` (ATen's vec::fmadd)."""
    return (fma32 if dtype == np.float32 else fma64)(a, b, c).astype(dtype)


def add(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """a.add(b, alpha=alpha): ufunc::add is fmadd(b, alpha, a)."""
    d = a.dtype
    return fma(b, d.type(alpha), a, d)


def lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """start.lerp(end, weight) as ATen's lerp_vec computes it."""
    d = start.dtype
    w = d.type(weight)
    diff = (end - start).astype(d)
    if abs(w) < 0.5:
        return fma(w, diff, start, d)
    return fma(d.type(w - d.type(1)), diff, end, d)


def addcmul(a: np.ndarray, b: np.ndarray, c: np.ndarray, value: float) -> np.ndarray:
    """a.addcmul(b, c, value=value): ATen's kernel is a + value * b * c, which the compiler
    contracts to fmadd(value * b, c, a) (one rounding fewer than numpy's a + value*b*c)."""
    d = a.dtype
    return fma((d.type(value) * b).astype(d), c, a, d)


class Optimizer:
    kind = "Optimizer"

    def __init__(self, params: list, defaults: dict) -> None:
        self.defaults = defaults
        self.opts = dict(defaults)
        self.state: dict[int, dict] = {}
        # opt.param_groups: dicts that stay, so g["lr"] = 0.01 (or a scheduler) changes what
        # step() uses; a list of dicts is one group each, their missing options the defaults
        self.groups: list = []
        for group in pygroups.split_groups(params):
            self.add_group(group)

    @property
    def params(self) -> list:
        return [p for g in self.groups for p in g["params"]]

    def add_group(self, group: dict) -> None:
        pygroups.add_group(self.groups, group, self.defaults, _params)

    def __repr__(self) -> str:
        return pygroups.optimizer_repr(self.kind, self.groups)

    def py_method(self, ev, node, name, args, kw):
        if name == "zero_grad":
            return pygroups.zero_grads(ev, self.params, args, kw)
        if name == "step":
            if args or kw:
                raise DdxTypeError("ddx's step() takes no closure")
            for group in self.groups:
                self.opts = {k: _number(group.get(k, v)) for k, v in self.defaults.items()}
                self.step_group(ev, group["params"])
            return None
        if name == "state_dict":
            return pyoptim_state.state_dict(self)
        if name == "load_state_dict":
            pyoptim_state.load_state_dict(ev, self, args[0] if args else kw["state_dict"][0])
            return None
        if name == "add_param_group":
            if ev.journal is not None:
                ev.journal.keep(self, "groups")
            self.groups = list(self.groups)
            self.add_group(args[0] if args else kw["param_group"][0])
            return None
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")

    def step_group(self, ev, params: list) -> None:
        for p in params:
            if p.grad is None:
                continue
            if ev.journal is not None:
                ev.journal.keep(p, "value")
                ev.journal.keep(self, "state")
            self.state = dict(self.state)
            st = dict(self.state.get(id(p), {}))
            p.value = self.update(p.value, np.asarray(p.grad, dtype=p.value.dtype), st)
            self.state[id(p)] = st

    def py_attr(self, ev, node, name):
        if name == "param_groups":
            return self.groups
        raise DdxTypeError(f"'{self.kind}' object has no attribute '{name}'")


class SGD(Optimizer):
    kind = "SGD"

    def update(self, p: np.ndarray, g: np.ndarray, st: dict) -> np.ndarray:
        o = self.opts
        if o["maximize"]:
            g = -g
        if o["weight_decay"] != 0:
            g = add(g, p, o["weight_decay"])
        if o["momentum"] != 0:
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = g.copy()
            else:
                buf = add((buf * p.dtype.type(o["momentum"])).astype(p.dtype), g,
                          1 - o["dampening"])
            st["momentum_buffer"] = buf
            g = add(g, buf, o["momentum"]) if o["nesterov"] else buf
        return add(p, g, -o["lr"])


class Adam(Optimizer):
    kind = "Adam"

    def update(self, p: np.ndarray, g: np.ndarray, st: dict) -> np.ndarray:
        o = self.opts
        d = p.dtype.type
        beta1, beta2 = o["betas"]
        if o["maximize"]:
            g = -g
        step = st.get("step", 0.0) + 1.0
        st["step"] = step
        if o["weight_decay"] != 0:
            if o.get("decoupled_weight_decay"):  # (AdamW: param.mul_(1 - lr * weight_decay))
                p = (p * d(1 - o["lr"] * o["weight_decay"])).astype(p.dtype)
            else:
                g = add(g, p, o["weight_decay"])
        m = st.get("exp_avg", np.zeros_like(p))
        v = st.get("exp_avg_sq", np.zeros_like(p))
        m = lerp(m, g, 1 - beta1)
        v = (v * d(beta2)).astype(p.dtype)
        v = addcmul(v, g, g, 1 - beta2)
        st["exp_avg"], st["exp_avg_sq"] = m, v
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = o["lr"] / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if o["amsgrad"]:
            vmax = np.maximum(st.get("max_exp_avg_sq", v), v)
            st["max_exp_avg_sq"] = vmax
            v = vmax
        denom = ((vml.sqrt(v) / d(bias_correction2_sqrt)) + d(o["eps"])).astype(p.dtype)
        return (p + (d(-step_size) * m) / denom).astype(p.dtype)


def _params(value) -> list:
    from .pyvalues import iterate

    items = list(value) if isinstance(value, (list, tuple)) else None
    if items is None:
        raise DdxTypeError("params argument given to the optimizer should be an iterable of "
                           "Tensors or dicts, but got " + type(value).__name__)
    for t in items:
        if not isinstance(t, Tensor):
            raise DdxTypeError("optimizer can only optimize Tensors, but one of the params is "
                               f"{type(t).__name__}")
        if not t.is_leaf:
            raise DdxRuntimeError("can't optimize a non-leaf Tensor")
    del iterate
    return items


def _number(v):
    if isinstance(v, Tensor):
        return v.value.item()
    if isinstance(v, (tuple, list)):
        return tuple(_number(x) for x in v)
    return v


def maker(cls, names: tuple, defaults: dict):
    def make(ev, node, args, kw):
        if not args and "params" not in kw:
            raise DdxTypeError(f"{cls.kind}.__init__() missing 1 required positional "
                               "argument: 'params'")
        params = args[0] if args else kw.pop("params")[0]
        given = dict(zip(names, args[1:]))
        for k, (v, _) in kw.items():
            if k not in defaults:
                raise DdxTypeError(f"{cls.kind}.__init__() got an unexpected keyword "
                                   f"argument '{k}'")
            given[k] = v
        opts = {**defaults, **{k: _number(v) for k, v in given.items()}}
        if opts["lr"] < 0:
            raise DdxRuntimeError(f"Invalid learning rate: {opts['lr']}")
        if cls is SGD and opts["nesterov"] and (opts["momentum"] <= 0 or opts["dampening"]):
            raise DdxRuntimeError("Nesterov momentum requires a momentum and zero dampening")
        return cls(params, opts)
    return Native(cls.kind, make)


SGD_DEFAULTS = {"lr": 0.001, "momentum": 0, "dampening": 0, "weight_decay": 0,
                "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
                "fused": None}
ADAM_DEFAULTS = {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
                 "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                 "differentiable": False, "fused": None, "decoupled_weight_decay": False}

EXTRA["torch.optim"].update(
    SGD=maker(SGD, ("lr", "momentum", "dampening", "weight_decay", "nesterov"), SGD_DEFAULTS),
    Adam=maker(Adam, ("lr", "betas", "eps", "weight_decay", "amsgrad"), ADAM_DEFAULTS))

__all__ = ["ADAM_DEFAULTS", "SGD", "Adam", "Optimizer", "add", "addcmul", "lerp", "maker"]
