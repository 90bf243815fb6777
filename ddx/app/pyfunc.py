"""torch.func in the REPL, registered: grad, grad_and_value, jacrev, jacfwd and hessian
(pyfunc_jac.py), jvp, vjp and linearize (pyfunc_jvp.py), functional_call and
stack_module_state (pyfunc_call.py), vmap, also torch.vmap (pyvmap.py); importing this module
also registers functools and copy (pyfunctools.py). torch.autograd.forward_ad is not provided
yet: its calls are one line of ddx's error naming what to use instead."""

from __future__ import annotations

from ..errors import DdxRuntimeError
from . import (
    pyfunc_call,
    pyfunc_jac,
    pyfunc_jvp,
    pyfunctools,  # noqa: F401  (registers functools, copy)
    pyvmap,
)
from .pymodules import EXTRA, MODULES, Native, PyModule


def _not_provided(name: str, instead: str):
    def call(ev, node, args, kw):
        raise DdxRuntimeError(f"ddx does not provide {name}: {instead}")
    return Native(name, call)


FORWARD_AD = ("use torch.autograd.functional.jvp(f, inputs, v) for a Jacobian-vector product "
              "(ddx's forward mode)")


def register() -> None:
    func = PyModule("torch.func", {
        name: Native(name, pyfunc_jac.make(name)) for name in pyfunc_jac.KINDS})
    func.members.update(pyfunc_jvp.NATIVES)
    func.members["functional_call"] = Native("functional_call", pyfunc_call.fn_functional_call)
    func.members["stack_module_state"] = Native("stack_module_state",
                                                pyfunc_call.fn_stack_module_state)
    MODULES["torch.func"] = func
    pyvmap.register()
    EXTRA["torch"].setdefault("func", func)
    forward_ad = PyModule("torch.autograd.forward_ad", {
        name: _not_provided(f"torch.autograd.forward_ad.{name}", FORWARD_AD)
        for name in ("dual_level", "make_dual", "unpack_dual", "enter_dual_level",
                     "exit_dual_level")})
    MODULES["torch.autograd.forward_ad"] = forward_ad
    EXTRA["torch.autograd"].setdefault("forward_ad", forward_ad)


register()

__all__ = ["FORWARD_AD"]
