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


def _replace_all_batch_norm_modules_(ev, node, args, kw):
    # (imported when called: importing pybatchnorm here would register nn.BatchNorm* before
    # the surface wraps the nn classes in its order, and give them another module path)
    from .pybatchnorm import replace_all_batch_norm_modules_

    return replace_all_batch_norm_modules_(ev, node, args, kw)


def register() -> None:
    func = PyModule("torch.func", {
        name: Native(name, pyfunc_jac.make(name)) for name in pyfunc_jac.KINDS})
    func.members.update(pyfunc_jvp.NATIVES)
    func.members["functional_call"] = Native("functional_call", pyfunc_call.fn_functional_call)
    func.members["stack_module_state"] = Native("stack_module_state",
                                                pyfunc_call.fn_stack_module_state)
    func.members["replace_all_batch_norm_modules_"] = Native(
        "replace_all_batch_norm_modules_", _replace_all_batch_norm_modules_)
    MODULES["torch.func"] = func
    pyvmap.register()
    EXTRA["torch"].setdefault("func", func)


register()

__all__: list[str] = []
