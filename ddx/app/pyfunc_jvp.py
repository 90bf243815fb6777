"""torch.func.jvp, vjp and linearize in the REPL, on pytrees of tensors:

- ``jvp(func, primals, tangents, has_aux=False)``: ``(func(*primals), the Jacobian-vector
  product)``, by forward mode through func's recorded graph (engine/forward.py);
- ``vjp(func, *primals, has_aux=False)``: ``(func(*primals), vjp_fn)``; ``vjp_fn(*cotangents)``
  is a tuple with one gradient per primal (reverse mode; the graph is kept, so vjp_fn may be
  called again, as ``vmap(vjp_fn)`` does);
- ``linearize(func, *primals)``: ``(func(*primals), jvp_fn)``.

jvp and vjp of ``grad(f)`` are Hessian-vector products: forward over reverse (dual numbers
through f's backward pass, as pyfunc_jac's Hessians). PyTorch's messages for primals that are
not a tuple, tangents of another structure or size, and cotangents of the wrong shape."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.forward import jvp_pass
from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from . import pytree
from .pyfunc_jac import Transform, call_on, detached, fresh, grads_of, second_order, split_aux
from .pymodules import Native
from .pyvalues import number_of


def _size(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.value.shape) + "]"


def _torch_size(t: Tensor) -> str:
    return "torch.Size([" + ", ".join(str(n) for n in t.value.shape) + "])"


def _flag(kw: dict, name: str) -> bool:
    return bool(number_of(kw[name][0])) if name in kw else False


def _check_kw(kw: dict, names: tuple, what: str) -> None:
    for k in kw:
        if k not in names:
            raise DdxTypeError(f"{what}() got an unexpected keyword argument '{k}'")


def _hvp_target(func: Any) -> Transform | None:
    """grad(f) of a plain f with one int argnums: jvp/vjp of it is a Hessian-vector product."""
    if not isinstance(func, Transform):
        return None
    if func.kind == "grad" and not func.tupled and not func.has_aux and \
            not isinstance(func.func, Transform):
        return func
    raise DdxRuntimeError(f"ddx does not compose jvp/vjp of {func.kind}: it takes jvp and vjp "
                          "of grad(f) (a Hessian-vector product) or of a plain function")


def _grad_run(ev, node, g: Transform, primals: list, kw: dict) -> tuple:
    """grad(f) at primals, with f's graph kept: (leaf x, f's output, the gradient)."""
    full = list(primals)
    (n,) = g.positions(full)
    x = fresh(full[n])
    full[n] = x
    out = call_on(ev, node, g.func, full, dict(kw), [x])
    if not pytree.is_tensor(out) or out.value.ndim != 0:
        raise DdxRuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                              "Tensor")
    with record.fp_guard():
        grad = grads_of(out, np.ones((), dtype=out.value.dtype), [x])[0]
    return n, x, out, Tensor(grad)


def fn_jvp(ev, node, args: list, kw: dict) -> tuple:
    _check_kw(kw, ("func", "primals", "tangents", "has_aux", "strict"), "jvp")
    names = ("func", "primals", "tangents")
    given = dict(zip(names, args))
    given.update({k: v[0] for k, v in kw.items() if k in names})
    if len(given) < 3:
        raise DdxTypeError("jvp() missing required positional arguments: 'primals', 'tangents'")
    func, primals, tangents = given["func"], given["primals"], given["tangents"]
    if not isinstance(primals, tuple):
        raise DdxRuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. "
                              "it should be valid to call f(*primals).")
    p_leaves, p_spec = pytree.flatten(primals)
    t_leaves, t_spec = pytree.flatten(tangents)
    if not isinstance(tangents, tuple) or [n[:2] for n in p_spec.nodes] != \
            [n[:2] for n in t_spec.nodes]:
        raise DdxRuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
            f"Got primals with structure {p_spec.text()} and tangents with structure "
            f"{t_spec.text()}")
    for p, t in zip(p_leaves, t_leaves):
        if pytree.is_tensor(p) and pytree.is_tensor(t) and p.value.shape != t.value.shape:
            raise DdxRuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {_size(p)} while "
                f"the given forward gradient is of size {_size(t)}.")
    has_aux = _flag(kw, "has_aux")
    g = _hvp_target(func)
    if g is not None:
        n, x, out, grad = _grad_run(ev, node, g, list(primals), {})
        tangent = np.asarray(t_leaves[pytree.flatten(primals[:n])[1].leaves].value)
        with record.fp_guard():
            hv = second_order(out, x, np.ones((), dtype=out.value.dtype), tangent)
        return grad, Tensor(hv)
    leaves = [fresh(v) for v in p_leaves]
    given = list(pytree.unflatten(leaves, p_spec))
    out, aux = split_aux(call_on(ev, node, func, given, {}, leaves), has_aux, "jvp")
    outs, o_spec = pytree.flatten(out)
    seeds = {id(x): np.asarray(t.value, dtype=x.value.dtype) for x, t in zip(leaves, t_leaves)}
    result = []
    with record.fp_guard():
        for o in outs:
            order = record.ancestors(o)
            tangents_by_id, _ = jvp_pass(order, seeds)
            got = tangents_by_id.get(id(o))
            result.append(Tensor(np.zeros_like(o.value) if got is None
                                 else np.array(got, dtype=o.value.dtype)))
    value, jvp_out = detached(out), pytree.unflatten(result, o_spec)
    return (value, jvp_out, aux) if has_aux else (value, jvp_out)


class VjpFn:
    """The vjp_fn that vjp gives: cotangents in, one gradient per primal out (a tuple)."""

    py_type_name = "function"

    name = "vjp_fn"

    def __init__(self, outs: list, o_spec, leaves: list, p_spec, hvp=None) -> None:
        self.outs, self.o_spec, self.leaves, self.p_spec = outs, o_spec, leaves, p_spec
        self.hvp = hvp

    def __repr__(self) -> str:
        return f"<function _vjp_with_argnums.<locals>.wrapper at 0x{id(self) & 0xffffffffffff:x}>"

    def py_call(self, ev, node, args: list, kw: dict) -> tuple:
        given = args[0] if len(args) == 1 else tuple(args)
        cots, _ = pytree.flatten(given)
        if len(cots) != len(self.outs):
            raise DdxRuntimeError("Expected pytree structure of cotangents to be the same as "
                                  "pytree structure of outputs to the function.")
        for i, (c, o) in enumerate(zip(cots, self.outs)):
            if not pytree.is_tensor(c) or c.value.shape != o.value.shape:
                shown = _torch_size(c) if isinstance(c, Tensor) else type(c).__name__
                raise DdxRuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                      f"{shown} and output[{i}] has a shape of "
                                      f"{_torch_size(o)}.")
        if self.hvp is not None:
            out, x = self.hvp
            with record.fp_guard():
                hv = second_order(out, x, np.ones((), dtype=out.value.dtype),
                                  np.asarray(cots[0].value))
            return (Tensor(hv),)
        total = [np.zeros_like(t.value) for t in self.leaves]
        with record.fp_guard():
            for o, c in zip(self.outs, cots):
                for j, g in enumerate(grads_of(o, np.asarray(c.value, dtype=o.value.dtype),
                                               self.leaves)):
                    total[j] = total[j] + g
        grads = [Tensor(np.asarray(g, dtype=t.value.dtype)) for g, t in zip(total, self.leaves)]
        return tuple(pytree.unflatten(grads, self.p_spec))


def fn_vjp(ev, node, args: list, kw: dict) -> tuple:
    _check_kw(kw, ("has_aux",), "vjp")
    if not args:
        raise DdxTypeError("vjp() missing 1 required positional argument: 'func'")
    func, primals = args[0], tuple(args[1:])
    has_aux = _flag(kw, "has_aux")
    g = _hvp_target(func)
    if g is not None:
        _, x, out, grad = _grad_run(ev, node, g, list(primals), {})
        return grad, VjpFn([grad], pytree.flatten(grad)[1], [x], pytree.flatten((x,))[1],
                           hvp=(out, x))
    p_leaves, p_spec = pytree.flatten(primals)
    leaves = [fresh(v) for v in p_leaves]
    given = list(pytree.unflatten(leaves, p_spec))
    out, aux = split_aux(call_on(ev, node, func, given, {}, leaves), has_aux, "vjp")
    outs, o_spec = pytree.flatten(out)
    fn = VjpFn(outs, o_spec, leaves, p_spec)
    return (detached(out), fn, aux) if has_aux else (detached(out), fn)


class JvpFn:
    """linearize's jvp_fn: tangents in, the Jacobian-vector product out."""

    py_type_name = "function"

    name = "jvp_fn"

    def __init__(self, outs: list, o_spec, leaves: list) -> None:
        self.outs, self.o_spec, self.leaves = outs, o_spec, leaves

    def __repr__(self) -> str:
        return f"<function linearize.<locals>.jvp_fn at 0x{id(self) & 0xffffffffffff:x}>"

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        tangents, _ = pytree.flatten(tuple(args))
        if len(tangents) != len(self.leaves):
            raise DdxRuntimeError(f"Expected the tangents to have {len(self.leaves)} tensors, "
                                  f"got {len(tangents)}")
        seeds = {}
        for x, t in zip(self.leaves, tangents):
            if not pytree.is_tensor(t) or t.value.shape != x.value.shape:
                raise DdxRuntimeError("linearize: the tangents must have the primals' shapes")
            seeds[id(x)] = np.asarray(t.value, dtype=x.value.dtype)
        result = []
        with record.fp_guard():
            for o in self.outs:
                got = jvp_pass(record.ancestors(o), seeds)[0].get(id(o))
                result.append(Tensor(np.zeros_like(o.value) if got is None
                                     else np.array(got, dtype=o.value.dtype)))
        return pytree.unflatten(result, self.o_spec)


def fn_linearize(ev, node, args: list, kw: dict) -> tuple:
    _check_kw(kw, (), "linearize")
    if not args:
        raise DdxTypeError("linearize() missing 1 required positional argument: 'func'")
    p_leaves, p_spec = pytree.flatten(tuple(args[1:]))
    leaves = [fresh(v) for v in p_leaves]
    out = call_on(ev, node, args[0], list(pytree.unflatten(leaves, p_spec)), {},
                  leaves)
    outs, o_spec = pytree.flatten(out)
    return detached(out), JvpFn(outs, o_spec, leaves)


NATIVES = {"jvp": Native("jvp", fn_jvp), "vjp": Native("vjp", fn_vjp),
           "linearize": Native("linearize", fn_linearize)}

__all__ = ["NATIVES", "JvpFn", "VjpFn", "fn_jvp", "fn_linearize", "fn_vjp"]
