"""torch.func in the REPL, registered: grad, grad_and_value, jacrev, jacfwd and hessian
(pyfunc_jac.py), jvp, vjp and linearize (pyfunc_jvp.py), functional_call and
stack_module_state (pyfunc_call.py), vmap, also torch.vmap (pyvmap.py); importing this module
also registers functools and copy (pyfunctools.py). torch.autograd.forward_ad:
pyforward_ad.py."""

from __future__ import annotations

from . import (
    pyfunc_call,
    pyfunc_jac,
    pyfunc_jvp,
    pyfunctools,  # noqa: F401  (registers functools, copy)
    pyvmap,
)
from .pymodules import EXTRA, MODULES, Native, PyModule


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


register()

__all__: list[str] = []
