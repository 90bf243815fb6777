"""torch.autograd.gradcheck in the REPL, as PyTorch's slow mode checks: each input that
requires grad is perturbed by ``eps`` element by element (central differences, in the
input's dtype, gradient mode off) for the numerical Jacobian; the analytical one is the
backward pass of each output element (a one-hot gradient, autograd.grad's path, so no
``.grad`` changes); they must agree within ``atol + rtol * |numerical|``. A mismatch is
PyTorch's GradcheckError (a RuntimeError) in its words, or False with
``raise_exception=False``. Also ``torch.autograd.function``: ``Function`` and
``once_differentiable``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from ..graph.values import truth
from .pyautograd import gradients
from .pyerrors import PyException
from .pyforward_ad import forward_jacobian
from .pymodules import EXTRA, MODULES, Native, PyModule

OPTIONS = ("eps", "atol", "rtol", "raise_exception", "nondet_tol", "check_undefined_grad",
           "check_grad_dtypes", "check_batched_grad", "check_batched_forward_grad",
           "check_forward_ad", "check_backward_ad", "fast_mode", "masked")
# inputs times outputs: the Jacobians are built entry by entry (a backward pass per output
# element, two forward passes per input element, as PyTorch's slow mode)
MAX_ELEMENTS = 4_000_000
FLOAT32_WARNING = ("Input #{} requires gradient and is not a double precision floating point "
                   "or complex. This check will likely fail if all the inputs are not of "
                   "double precision floating point or complex. ")


def _outputs(value: Any) -> list:
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [t for t in items if isinstance(t, Tensor) and not t.weak]


def _call(ev, node, func: Any, inputs: list) -> list:
    return _outputs(ev.surface.call_value(ev, node, func, list(inputs), {}))


def _numerical(ev, node, func, inputs: list, i: int, eps: float) -> list:
    """d(output o)/d(input i) by central differences: one (numel_i, numel_o) array per
    output."""
    x = inputs[i]
    cols: list = []
    saved = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    try:
        for j in range(x.value.size):
            shifted = []
            for sign in (-1, 1):
                arr = np.array(x.value, copy=True)
                flat = arr.reshape(-1)
                flat[j] = flat[j] + arr.dtype.type(sign * eps)
                moved = list(inputs)
                moved[i] = Tensor(arr)
                shifted.append(_call(ev, node, func, moved))
            cols.append([(np.asarray(b.value, dtype=b.value.dtype) - a.value).reshape(-1) /
                         (2 * eps) for a, b in zip(*shifted)])
    finally:
        record.GRAD_MODE.enabled = saved
    n_out = len(cols[0]) if cols else 0
    return [np.stack([c[o] for c in cols]) if cols else np.zeros((0, 0))
            for o in range(n_out)]


def _analytical(ev, outputs: list, inputs: list, wanted: list) -> dict:
    """d(output o)/d(input i) for every wanted input i by the backward pass, one pass per
    output element (all the inputs' columns at once): input -> one (numel_i, numel_o) array
    per output."""
    xs = [inputs[i] for i in wanted]
    out: dict = {i: [] for i in wanted}
    for o in outputs:
        jacs = [np.zeros((x.value.size, o.value.size), dtype=x.value.dtype) for x in xs]
        if o.requires_grad:
            onehot = np.zeros(o.value.size, dtype=o.value.dtype)
            for k in range(o.value.size):
                onehot[k] = 1
                seed = Tensor(onehot.reshape(o.value.shape).copy())
                onehot[k] = 0
                for jac, g in zip(jacs, gradients(ev, [o], xs, [seed], True)):
                    if g is not None:
                        jac[:, k] = np.asarray(g).reshape(-1)
        for i, jac in zip(wanted, jacs):
            out[i].append(jac)
    return out


def gradcheck(ev, node, args: list, kw: dict) -> bool:
    """torch.autograd.gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3,
    raise_exception=True, ...)."""
    for name in kw:
        if name not in (*OPTIONS, "func", "inputs"):
            raise DdxTypeError(f"gradcheck() got an unexpected keyword argument '{name}'")
    given = dict(zip(("func", "inputs"), args))
    given.update({k: v for k, (v, _) in kw.items()})
    if "func" not in given or "inputs" not in given:
        raise DdxTypeError("gradcheck() missing a required argument: 'func' or 'inputs'")
    func, inputs = given["func"], given["inputs"]
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    eps = float(_number(given.get("eps", 1e-6)))
    atol = float(_number(given.get("atol", 1e-5)))
    rtol = float(_number(given.get("rtol", 1e-3)))
    raise_exception = truth(given.get("raise_exception", True))
    wanted = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wanted:
        raise PyException.error("ValueError", "gradcheck expects at least one input tensor to "
                                              "require gradient, but none of them have "
                                              "requires_grad=True.")
    for k in wanted:
        if inputs[k].value.dtype != np.float64:
            ev.warnings.append(FLOAT32_WARNING.format(k))
    saved = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = True
    try:
        outputs = _call(ev, node, func, inputs)
    finally:
        record.GRAD_MODE.enabled = saved
    size = sum(inputs[k].value.size for k in wanted) * sum(o.value.size for o in outputs)
    if size > MAX_ELEMENTS:
        raise DdxTypeError(f"ddx's gradcheck builds Jacobians of at most {MAX_ELEMENTS:,} "
                           f"entries (this one has {size:,})")
    modes = [m for m, on in (("backward", truth(given.get("check_backward_ad", True))),
                             ("forward", truth(given.get("check_forward_ad", False)))) if on]
    backward = _analytical(ev, outputs, inputs, wanted) if "backward" in modes else {}
    for k in wanted:
        numerical = _numerical(ev, node, func, inputs, k, eps)
        pairs = []
        for mode in modes:
            analytical = backward[k] if mode == "backward" else \
                forward_jacobian(ev, node, lambda xs: _call(ev, node, func, xs), inputs, k,
                                 len(outputs))
            pairs.extend(enumerate(zip(numerical, analytical)))
        for o, (num, ana) in pairs:
            if np.all(np.abs(ana - num) <= atol + rtol * np.abs(num)):
                continue
            if not raise_exception:
                return False
            raise PyException.error(
                "GradcheckError",
                f"Jacobian mismatch for output {o:d} with respect to input {k:d},\n"
                f"numerical:{ev.surface.show(ev, Tensor(num))}\n"
                f"analytical:{ev.surface.show(ev, Tensor(ana))}\n")
    return True


def _number(value: Any) -> float:
    if isinstance(value, Tensor) and value.value.size == 1:
        return value.value.item()
    if isinstance(value, (int, float)):
        return value
    raise DdxTypeError(f"gradcheck's tolerances are numbers, not {type(value).__name__}")


def _once_differentiable(ev, node, args: list, kw: dict) -> Any:
    (fn,) = args  # (ddx runs a custom backward once: nothing to wrap)
    return fn


def register() -> None:
    from .pycustom import FUNCTION

    check = Native("gradcheck", gradcheck)
    EXTRA["torch.autograd"]["gradcheck"] = check
    function = PyModule("torch.autograd.function", {
        "Function": FUNCTION, "once_differentiable": Native("once_differentiable",
                                                            _once_differentiable)})
    EXTRA["torch.autograd"]["function"] = function
    MODULES["torch.autograd.function"] = function


register()

__all__ = ["gradcheck"]
