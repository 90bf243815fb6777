"""torch.optim's AdamW (Adam with decoupled weight decay), RMSprop (alpha, eps,
weight_decay, momentum, centered) and Adagrad (lr_decay, weight_decay,
initial_accumulator_value, eps), following torch/optim's single-tensor code (PyTorch's CPU
default) with ATen's CPU roundings: addcmul's fused multiply-add, addcdiv's
``self + value * t1 / t2``, lerp, torch's float32 sqrt (vml.sqrt)."""

from __future__ import annotations

import numpy as np

from ..ops import vml
from .pymodules import EXTRA
from .pyoptim import ADAM_DEFAULTS, Adam, Optimizer, add, addcmul, lerp, maker


def addcdiv(a: np.ndarray, b: np.ndarray, c: np.ndarray, value: float) -> np.ndarray:
    """a.addcdiv(b, c, value=value): ATen's kernel is a + value * b / c."""
    d = a.dtype
    return (a + ((d.type(value) * b).astype(d) / c).astype(d)).astype(d)


class AdamW(Adam):
    kind = "AdamW"


class RMSprop(Optimizer):
    kind = "RMSprop"

    def update(self, p: np.ndarray, g: np.ndarray, st: dict) -> np.ndarray:
        o = self.opts
        d = p.dtype.type
        if o["maximize"]:
            g = -g
        st["step"] = st.get("step", 0.0) + 1.0
        if o["weight_decay"] != 0:
            g = add(g, p, o["weight_decay"])
        sq = st.get("square_avg", np.zeros_like(p))
        sq = addcmul((sq * d(o["alpha"])).astype(p.dtype), g, g, 1 - o["alpha"])
        st["square_avg"] = sq
        if o["centered"]:
            ga = lerp(st.get("grad_avg", np.zeros_like(p)), g, 1 - o["alpha"])
            st["grad_avg"] = ga
            avg = vml.sqrt(addcmul(sq, ga, ga, -1))
        else:
            avg = vml.sqrt(sq)
        avg = (avg + d(o["eps"])).astype(p.dtype)
        if o["momentum"] > 0:
            buf = st.get("momentum_buffer", np.zeros_like(p))
            buf = addcdiv((buf * d(o["momentum"])).astype(p.dtype), g, avg, 1)
            st["momentum_buffer"] = buf
            return add(p, buf, -o["lr"])
        return addcdiv(p, g, avg, -o["lr"])


class Adagrad(Optimizer):
    kind = "Adagrad"

    def update(self, p: np.ndarray, g: np.ndarray, st: dict) -> np.ndarray:
        o = self.opts
        d = p.dtype.type
        step = st.get("step", 0.0) + 1.0
        st["step"] = step
        if o["maximize"]:
            g = -g
        if o["weight_decay"] != 0:
            g = add(g, p, o["weight_decay"])
        clr = o["lr"] / (1 + (step - 1) * o["lr_decay"])
        total = st.get("sum")
        if total is None:
            total = np.full_like(p, d(o["initial_accumulator_value"]))
        total = addcmul(total, g, g, 1)
        st["sum"] = total
        std = (vml.sqrt(total) + d(o["eps"])).astype(p.dtype)
        return addcdiv(p, g, std, -clr)


ADAMW_DEFAULTS = {**ADAM_DEFAULTS, "weight_decay": 1e-2, "decoupled_weight_decay": True}
RMSPROP_DEFAULTS = {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0, "momentum": 0,
                    "centered": False, "capturable": False, "foreach": None, "maximize": False,
                    "differentiable": False}
ADAGRAD_DEFAULTS = {"lr": 1e-2, "lr_decay": 0, "weight_decay": 0,
                    "initial_accumulator_value": 0, "eps": 1e-10, "foreach": None,
                    "maximize": False, "differentiable": False, "fused": None}


EXTRA["torch.optim"].update(
    AdamW=maker(AdamW, ("lr", "betas", "eps", "weight_decay", "amsgrad"), ADAMW_DEFAULTS),
    RMSprop=maker(RMSprop, ("lr", "alpha", "eps", "weight_decay", "momentum", "centered"),
                  RMSPROP_DEFAULTS),
    Adagrad=maker(Adagrad, ("lr", "lr_decay", "weight_decay", "initial_accumulator_value",
                            "eps"), ADAGRAD_DEFAULTS))

__all__ = ["Adagrad", "AdamW", "RMSprop", "addcdiv"]
