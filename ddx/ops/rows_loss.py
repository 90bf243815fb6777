"""The op table's softmax and loss rows (one op(...) call per op; see ddx/ops/table.py for a
row's fields). The losses PyTorch builds from other ops (l1_loss, cross_entropy, kl_div,
cosine_similarity) are recorded as those ops by their callers, ddx/graph/calls_loss.py."""

from __future__ import annotations

from .kernels_bce import bce_logits
from .kernels_cpu import xlogy, xlogy_da, xlogy_db
from .kernels_loss import (
    BCE,
    HUBER,
    MSE,
    SMOOTH_L1,
    clamped,
    emit_clamped,
    emit_nll,
    emit_pointwise,
    emit_softmax,
    log_softmax,
    log_softmax_jvp,
    log_softmax_vjp,
    nll,
    nll_jvp,
    nll_vjp,
    nll_weight_vjp,
    no_grad,
    softmax,
    softmax_jvp,
    softmax_vjp,
)
from .table import op

_SOFT = ("torch", "Tensor", "F", "special")
_PAIR = {"x": (2, 3), "y": (2, 3)}
_ROW = {"x": (3,), "y": (3,)}

op("softmax", "SoftmaxBackward0", softmax, softmax_vjp, jvp=softmax_jvp, elementwise=False,
   reads="o", call="softmax", spaces=_SOFT,
   emit={"torch": emit_softmax("softmax", "softmax"), "jax": emit_softmax("softmax", "softmax")},
   example=("softmax(x, 1)", {"x": (2, 3)}))
op("log_softmax", "LogSoftmaxBackward0", log_softmax, log_softmax_vjp, jvp=log_softmax_jvp,
   elementwise=False, reads="o", call="softmax", spaces=_SOFT,
   emit={"torch": emit_softmax("log_softmax", "log_softmax"),
         "jax": emit_softmax("log_softmax", "log_softmax")},
   example=("log_softmax(x, dim=0)", {"x": (2, 3)}))

# --- pointwise losses (input, target[, weight...]; reduction='mean'|'sum'|'none') ----------------
_D2 = "(({0}) - ({1}))"
op("mse_loss", "MseLossBackward0", MSE[0], MSE[1], MSE[2], jvp=MSE[3], elementwise=False,
   call="loss", spaces=("F",),
   emit={"torch": emit_pointwise("mse_loss", ""),
         "jax": emit_pointwise("mse_loss", f"jnp.square({_D2})")},
   example=("mse_loss(x, y, reduction='none')", _PAIR))
op("smooth_l1_loss", "SmoothL1LossBackward0", SMOOTH_L1[0], SMOOTH_L1[1], SMOOTH_L1[2],
   jvp=SMOOTH_L1[3], elementwise=False, call="loss", spaces=("F",),
   emit={"torch": emit_pointwise("smooth_l1_loss", "", ("beta",)),
         "jax": emit_pointwise("smooth_l1_loss",
                               f"jnp.where(jnp.abs({_D2}) < {{beta}}, 0.5 * jnp.square({_D2}) "
                               f"/ {{beta}}, jnp.abs({_D2}) - 0.5 * {{beta}})", ("beta",))},
   example=("smooth_l1_loss(x, y, beta=0.5)", _PAIR))
op("huber_loss", "HuberLossBackward0", HUBER[0], HUBER[1], HUBER[2], jvp=HUBER[3],
   elementwise=False, call="loss", spaces=("F",),
   emit={"torch": emit_pointwise("huber_loss", "", ("delta",)),
         "jax": emit_pointwise("huber_loss",
                               f"jnp.where(jnp.abs({_D2}) < {{delta}}, 0.5 * jnp.square({_D2}), "
                               f"{{delta}} * (jnp.abs({_D2}) - 0.5 * {{delta}}))", ("delta",))},
   example=("huber_loss(x, y, delta=0.5, reduction='sum')", _PAIR))

_BCE_JAX = "(-({1}) * jnp.maximum(jnp.log({0}), -100.0) - (1 - {1}) * " \
           "jnp.maximum(jnp.log(1 - {0}), -100.0))"
op("binary_cross_entropy", "BinaryCrossEntropyBackward0", BCE[0], BCE[1], BCE[2], jvp=BCE[3],
   elementwise=False, call="loss", spaces=("F",), domain=(0.1, 0.9),
   emit={"torch": emit_pointwise("binary_cross_entropy", ""),
         "jax": emit_pointwise("binary_cross_entropy", _BCE_JAX)},
   hint="binary_cross_entropy takes probabilities: its log is clamped at -100 at 0 and 1",
   example=("binary_cross_entropy(x, y)", _ROW))
op("binary_cross_entropy_weight", "BinaryCrossEntropyBackward0", BCE[0], BCE[1], BCE[2],
   *BCE[4], jvp=BCE[3], elementwise=False, shown="binary_cross_entropy", domain=(0.1, 0.9),
   emit={"torch": emit_pointwise("binary_cross_entropy", "", (), ("weight",)),
         "jax": emit_pointwise("binary_cross_entropy", "({weight} * %s)" % _BCE_JAX, (),
                               ("weight",))},
   example=("binary_cross_entropy(x, y, weight=[0.5, 2, 1], reduction='sum')", _ROW))

_SP = "(jnp.maximum(-({0}), 0) + jnp.log1p(jnp.exp(-jnp.abs({0}))))"
_JAX_LOGITS = {(False, False): f"((1 - {{1}}) * {{0}} + {_SP})",
               (True, False): f"({{weight}} * ((1 - {{1}}) * {{0}} + {_SP}))",
               (False, True): f"((1 - {{1}}) * {{0}} + (1 + ({{pos_weight}} - 1) * {{1}}) * {_SP})",
               (True, True): f"({{weight}} * ((1 - {{1}}) * {{0}} + (1 + ({{pos_weight}} - 1) * "
                             f"{{1}}) * {_SP}))"}
for (_w, _pw), _jax in _JAX_LOGITS.items():
    _k = bce_logits(_w, _pw)
    _extra = ("weight",) * _w + ("pos_weight",) * _pw
    _name = "_".join(("binary_cross_entropy_with_logits",) + _extra)
    _lits = "".join(f", {k}=[0.5, 2, 1]" for k in _extra)
    op(_name, "BinaryCrossEntropyWithLogitsBackward0", _k[0], _k[1], _k[2],
       *_k[4], jvp=_k[3], elementwise=False,
       call=None if _extra else "loss", spaces=("torch", "F"),
       shown="binary_cross_entropy_with_logits",
       emit={"torch": emit_pointwise("binary_cross_entropy_with_logits", "", (), _extra),
             "jax": emit_pointwise("binary_cross_entropy_with_logits", _jax, (), _extra)},
       example=(f"binary_cross_entropy_with_logits(x, y{_lits})", _ROW))

# --- nll_loss: log-probabilities and class indices (an integer target) ---------------------------
op("nll_loss", "NllLossBackward0", nll, nll_vjp, no_grad(1), jvp=nll_jvp, elementwise=False,
   call="loss", spaces=("F",), emit={"torch": emit_nll, "jax": emit_nll},
   example=("nll_loss(x, [1, 0], reduction='none')", {"x": (2, 3)}))
op("nll_loss_weight", "NllLossBackward0", nll, nll_vjp, no_grad(1), nll_weight_vjp, jvp=nll_jvp,
   elementwise=False, shown="nll_loss", emit={"torch": emit_nll, "jax": emit_nll},
   example=("nll_loss(x, [2, 0], weight=[0.5, 2, 1])", {"x": (2, 3)}))

# --- the parts of kl_div and cosine_similarity --------------------------------------------------
op("xlogy", "XlogyBackward0", xlogy, xlogy_da, xlogy_db, call="binary",
   spaces=("torch", "Tensor", "special"), domain=(0.25, 2.0),
   emit={"torch": "torch.xlogy({0}, {1})", "jax": "jax.scipy.special.xlogy({0}, {1})"})
op("clamped", "CloneBackward0", clamped, lambda g, o, a, *, eps: g, saves=False, reads="",
   shown="clone", emit={"torch": emit_clamped, "jax": emit_clamped},
   example=("cosine_similarity(x, y)", _PAIR))
