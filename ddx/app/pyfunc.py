"""torch.func's everyday transforms in the REPL: grad, grad_and_value, jacrev, jacfwd and
hessian of the user's functions, built on torch.autograd.functional's jacobian and hessian
(reverse mode, one pass per output element; forward over reverse): ``grad(f)(x)``,
``grad(f, argnums=(0, 1))(x, y)``, ``has_aux=True``. vmap is not provided: its call is one
line of ddx's error naming what to use instead (torch.autograd.forward_ad: pyforward_ad.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from . import pycalls
from .pyfunctional import FUNCTIONAL
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pyvalues import number_of


def _argnums(value: Any) -> tuple[bool, list[int]]:
    if isinstance(value, (tuple, list)):
        return True, [int(number_of(v)) for v in value]
    n = number_of(value)
    if not isinstance(n, int) or isinstance(n, bool):
        raise DdxTypeError(f"argnums must be int or Tuple[int, ...], got: {type(value).__name__}")
    return False, [n]


def _options(kw: dict, what: str) -> tuple[Any, bool]:
    for name in kw:
        if name not in ("argnums", "has_aux", "chunk_size", "randomness"):
            raise DdxTypeError(f"{what}() got an unexpected keyword argument '{name}'")
    argnums = kw["argnums"][0] if "argnums" in kw else 0
    has_aux = bool(kw["has_aux"][0]) if "has_aux" in kw else False
    return argnums, has_aux


def _transform(what: str):
    """what(func, argnums=0, has_aux=False): a function of the same arguments."""
    def make(ev, node, args, kw):
        if not args:
            raise DdxTypeError(f"{what}() missing 1 required positional argument: 'func'")
        func = args[0]
        argnums, has_aux = _options(kw, what)
        if len(args) > 1:
            argnums = args[1]
        tupled, nums = _argnums(argnums)

        def apply(ev, inner, call_args, call_kw):
            full = list(call_args)
            for n in nums:
                if not -len(full) <= n < len(full):
                    raise DdxRuntimeError(f"Got argnums={n} but only {len(full)} positional "
                                          "inputs")
                if not isinstance(full[n], Tensor):
                    raise DdxRuntimeError(f"{what}(f)(*args): Expected argument {n} to be a "
                                          f"Tensor, got {type(full[n]).__name__}")
            aux: list = []

            def partial(ev, node2, xs, _kw):
                given = list(full)
                for n, x in zip(nums, xs):
                    given[n] = x
                out = pycalls.call_value(ev, node2, func, given, dict(call_kw))
                if has_aux:
                    if not isinstance(out, (tuple, list)) or len(out) != 2:
                        raise DdxRuntimeError(f"{what}_and_value(f)(*args): output of "
                                              "function f should be a tuple: (output, aux) "
                                              "if has_aux is True")
                    out, extra = out
                    aux.append(_detached(extra))
                if what in ("grad", "grad_and_value", "hessian"):
                    if not isinstance(out, Tensor) or out.value.ndim != 0:
                        dims = out.value.ndim if isinstance(out, Tensor) else "no"
                        raise DdxRuntimeError(
                            f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                            f"Tensor, got tensor with {dims} dims. Maybe you wanted to use the "
                            "vjp or jacrev APIs instead?")
                if what == "grad_and_value":
                    aux.insert(0, out)
                return out

            inputs = [full[n] for n in nums]
            inputs = tuple(inputs) if tupled else inputs[0]
            if what == "jacfwd":
                got = _forward_jacobian(ev, inner, Native(what, partial), inputs, tupled)
            else:
                kind = "hessian" if what == "hessian" else "jacobian"
                got = FUNCTIONAL[kind](ev, inner, [Native(what, partial), inputs], {})
            if what == "grad_and_value":
                value = aux.pop(0)
                value = Tensor(value.value.copy())
                return (got, (value, aux[0])) if has_aux else (got, value)
            return (got, aux[0]) if has_aux else got
        return Native(f"{what}({getattr(func, 'name', 'f')})", apply)
    return make


def _forward_jacobian(ev, node, fn, inputs, tupled: bool):
    """jacfwd: a forward-mode pass (autograd.functional.jvp) per input element, one column of
    the Jacobian each, as torch.func pushes the unit tangents."""
    xs = list(inputs) if tupled else [inputs]
    cols: dict = {}
    out_tuple = False
    for m, x in enumerate(xs):
        for k in range(x.value.size):
            vs = [np.zeros_like(t.value) for t in xs]
            vs[m].reshape(-1)[k] = 1
            v = tuple(Tensor(u) for u in vs) if tupled else Tensor(vs[0])
            _, tangent = FUNCTIONAL["jvp"](ev, node, [fn, inputs, v], {})
            out_tuple = isinstance(tangent, tuple)
            cols[m, k] = list(tangent) if out_tuple else [tangent]
    outs = cols[0, 0] if cols else []
    jac = []
    for o, out in enumerate(outs):
        per_input = []
        for m, x in enumerate(xs):
            j = np.zeros(out.value.shape + x.value.shape, dtype=out.value.dtype)
            flat = j.reshape(out.value.shape + (x.value.size,))
            for k in range(x.value.size):
                flat[..., k] = cols[m, k][o].value
            per_input.append(Tensor(j))
        jac.append(tuple(per_input) if tupled else per_input[0])
    return tuple(jac) if out_tuple else jac[0]


def _detached(value: Any) -> Any:
    """has_aux's value as torch.func gives it back: tensors without their graph."""
    if isinstance(value, Tensor) and not value.weak:
        return Tensor(value.value.copy())
    if isinstance(value, tuple):
        return tuple(_detached(v) for v in value)
    if isinstance(value, list):
        return [_detached(v) for v in value]
    return value


def _not_provided(name: str, instead: str):
    def call(ev, node, args, kw):
        raise DdxRuntimeError(f"ddx does not provide {name}: {instead}")
    return Native(name, call)


def register() -> None:
    func = PyModule("torch.func", {
        name: Native(name, _transform(name))
        for name in ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian")})
    func.members["vmap"] = _not_provided("torch.func.vmap", "call the function in a loop, or "
                                                            "write it for the whole batch")
    MODULES["torch.func"] = func
    EXTRA["torch"].setdefault("func", func)


register()

__all__: list[str] = []
