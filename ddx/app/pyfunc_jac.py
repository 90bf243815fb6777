"""torch.func's derivative transforms in the REPL: grad, grad_and_value, jacrev, jacfwd and
hessian of the user's functions, with ``argnums`` an int or a tuple, ``has_aux``, and
arguments that are pytrees of tensors (``grad(loss)(params)`` of a dict of parameters gives a
dict of gradients). Each call runs the function once on fresh leaves (PyTorch's transforms see
their inputs detached too) and differentiates its graph: reverse mode, one pass per output
element (jacrev, grad), or forward mode, one pass per input element (jacfwd,
engine/forward.py).

Second order: ``hessian(f)``, which is ``jacfwd(jacrev(f))``, and that composition written out,
or ``jacrev(jacrev(f))``, ``jacfwd(jacfwd(f))``, ``jacfwd(grad(f))``, ``grad(grad(f))`` of a
number (the same argnums), give
d²f_i/dx_j dx_k by forward over reverse (dual numbers through the backward pass,
engine/hessian.py), one pass per output and input element. Other nestings of transforms are
one line of ddx's error (vmap of any transform, and jvp/vjp of grad, are pyvmap.py's and
pyfunc_jvp.py's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import reverse
from ..engine.forward import jvp_pass
from ..engine.hessian import Dual, gradient_at
from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor
from . import pycalls, pytree
from .pyerrors import PyException
from .pytwice import check_rows
from .pyvalues import number_of
from .pyvmapstate import note_copy

KINDS = ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian")
OPTIONS = ("argnums", "has_aux", "chunk_size", "randomness", "_preallocate_and_copy")
NESTED = ("ddx does not compose torch.func transforms this way: a transform inside another's "
          "function, of a tensor that depends on the outer one's inputs (ddx nests them as "
          "hessian, jacfwd/jacrev/grad of jacrev/jacfwd/grad, jvp/vjp of grad, and vmap of any)")
DEPTH = [0]  # transforms' functions running now (call_on)
SCALAR = ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
          "with {dims} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")


def parse_argnums(value: Any) -> tuple[bool, list[int]]:
    if isinstance(value, (tuple, list)):
        return True, [int(number_of(v)) for v in value]
    n = number_of(value)
    if not isinstance(n, int) or isinstance(n, bool):
        raise DdxTypeError(f"argnums must be int or Tuple[int, ...], got: {type(value).__name__}")
    return False, [n]


def fresh(value: Any) -> Tensor:
    """A leaf that requires grad, with the value of a tensor of the user's."""
    if not pytree.is_tensor(value):
        kind = "float" if isinstance(value, Tensor) and value.value.dtype.kind == "f" else \
            "int" if isinstance(value, Tensor) else type(value).__name__
        raise PyException.error("ValueError", "Thing passed to transform API must be Tensor, "
                                f"got <class '{kind}'>")
    copy = Tensor(np.array(value.value), True, name=value.name)
    note_copy(copy, value)
    return copy


def detached(value: Any) -> Any:
    """A result as torch.func gives it back: tensors without their graph."""
    return pytree.map_leaves(
        lambda v: Tensor(np.array(v.value)) if pytree.is_tensor(v) else v, value)


def call_on(ev, node, func, args: list, kw: dict, own: list) -> Any:
    """func on a transform's fresh leaves ``own``, with grad enabled (also under no_grad, as
    torch.func's transforms). Inside another transform's function, a result that depends on
    a tensor requiring grad other than ``own`` (the outer transform's inputs, passed or
    captured) is refused: ddx's transforms differentiate their own graph, so the outer one
    would see no dependence and give zeros."""
    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = True
    DEPTH[0] += 1
    try:
        out = pycalls.call_value(ev, node, func, args, kw)
    finally:
        DEPTH[0] -= 1
        record.GRAD_MODE.enabled = before
    if DEPTH[0]:
        mine = {id(t) for t in own}
        for o in pytree.flatten(out)[0]:
            if pytree.is_tensor(o) and o.requires_grad and any(
                    not t.inputs and t.requires_grad and id(t) not in mine
                    for t in record.ancestors(o)):
                raise DdxRuntimeError(NESTED)
    return out


def split_aux(out: Any, has_aux: bool, what: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise DdxRuntimeError(f"{what}(f)(*args): output of function f should be a tuple: "
                              "(output, aux) if has_aux is True")
    return out[0], detached(out[1])


def grads_of(out: Tensor, g0: np.ndarray, leaves: list) -> list[np.ndarray]:
    """d<g0, out>/d leaf for each leaf (zeros where out does not depend on it)."""
    got = reverse.vjp(out, g0) if out.requires_grad else {}
    return [np.asarray(got[id(t)], dtype=t.value.dtype) if id(t) in got
            else np.zeros_like(t.value) for t in leaves]


def jac_rows(out: Tensor, leaves: list) -> list[np.ndarray]:
    """d out / d leaf, by reverse mode: one pass per element of ``out``."""
    jac = [np.zeros(out.value.shape + t.value.shape, dtype=out.value.dtype) for t in leaves]
    if not out.requires_grad:
        return jac
    for i in range(out.value.size):
        g0 = np.zeros(out.value.shape, dtype=out.value.dtype)
        g0.reshape(-1)[i] = 1
        for j, g in enumerate(grads_of(out, g0, leaves)):
            jac[j].reshape((out.value.size,) + leaves[j].value.shape)[i] = g
    return jac


def jac_columns(out: Tensor, leaves: list) -> list[np.ndarray]:
    """d out / d leaf, by forward mode: one pass per element of each leaf."""
    order = record.ancestors(out)
    check_rows(order, "forward mode (jacfwd)")
    jac = []
    for t in leaves:
        j = np.zeros(out.value.shape + (t.value.size,), dtype=out.value.dtype)
        for k in range(t.value.size):
            seed = np.zeros(t.value.shape, dtype=t.value.dtype)
            seed.reshape(-1)[k] = 1
            tangents, _ = jvp_pass(order, {id(t): seed})
            if id(out) in tangents:
                j[..., k] = tangents[id(out)]
        jac.append(j.reshape(out.value.shape + t.value.shape))
    return jac


def second_order(out: Tensor, x: Tensor, g0: np.ndarray, tangent: np.ndarray,
                 order: list | None = None) -> np.ndarray:
    """The tangent of d<g0, out>/dx along ``tangent`` (forward over reverse): H v.
    ``order``: out's graph (record.ancestors), already checked, when the caller has it."""
    if not out.requires_grad:
        return np.zeros_like(x.value)
    if order is None:
        order = record.ancestors(out)
        check_rows(order, "a second derivative")
    adj = gradient_at(out, order, {"0": x}, {id(x): Dual(x.value, tangent)}, g0)
    got = adj.get(id(x))
    if not isinstance(got, Dual):
        return np.zeros_like(x.value)
    return np.asarray(got.t, dtype=x.value.dtype)


def hessian_blocks(out: Tensor, xs: list) -> list:
    """d² out / dx_a dx_b for every pair of ``xs`` (tuple argnums): block [a][b] shaped
    out.shape + x_a.shape + x_b.shape; each column a tangent seeded on x_b alone (forward
    over reverse), read at every x_a."""
    n = out.value.size
    blocks = [[np.zeros((n, xa.value.size, xb.value.size), dtype=out.value.dtype)
               for xb in xs] for xa in xs]
    if out.requires_grad:
        order = record.ancestors(out)
        check_rows(order, "a second derivative")
        named = {str(i): x for i, x in enumerate(xs)}
        with record.fp_guard():
            for b, xb in enumerate(xs):
                for k in range(xb.value.size):
                    seed = np.zeros(xb.value.shape)
                    seed.reshape(-1)[k] = 1.0
                    for i in range(n):
                        g0 = np.zeros(out.value.shape, dtype=out.value.dtype)
                        g0.reshape(-1)[i] = 1
                        adj = gradient_at(out, order, named, {id(xb): Dual(xb.value, seed)},
                                          g0)
                        for a, xa in enumerate(xs):
                            got = adj.get(id(xa))
                            if isinstance(got, Dual):
                                blocks[a][b][i, :, k] = np.asarray(got.t).reshape(-1)
    return [[blocks[a][b].reshape(out.value.shape + xa.value.shape + xb.value.shape)
             for b, xb in enumerate(xs)] for a, xa in enumerate(xs)]


class Transform:
    """What grad(f), jacrev(f), ... give: a function of f's arguments."""

    py_type_name = "function"

    def __init__(self, kind: str, func: Any, argnums: Any, has_aux: bool) -> None:
        self.kind, self.func, self.has_aux = kind, func, has_aux
        self.argnums = argnums
        self.tupled, self.nums = parse_argnums(argnums)
        self.name = f"{kind}({getattr(func, 'name', 'f')})"

    def __repr__(self) -> str:
        shown = getattr(self.func, "name", "f")  # (functools.wraps: the function's own name)
        shown = "<lambda>" if shown == "lambda" else shown
        return f"<function {shown} at 0x{id(self) & 0xffffffffffff:x}>"

    def positions(self, args: list) -> list[int]:
        out = []
        for n in self.nums:
            if not -len(args) <= n < len(args):
                raise DdxRuntimeError(f"Got argnums={n} but only {len(args)} positional inputs")
            out.append(n % len(args))
        return out

    def py_call(self, ev, node, args: list, kw: dict) -> Any:
        inner = self.func
        if self.kind == "hessian" or isinstance(inner, Transform):
            return self._second(ev, node, list(args), kw)
        full = list(args)
        where = self.positions(full)
        flats = []
        for n in where:
            leaves, spec = pytree.flatten(full[n])
            leaves = [fresh(v) for v in leaves]
            flats.append((leaves, spec))
            full[n] = pytree.unflatten(leaves, spec)
        every = [t for leaves, _ in flats for t in leaves]
        out, aux = split_aux(call_on(ev, node, inner, full, dict(kw), every), self.has_aux,
                             self.kind)
        with record.fp_guard():
            if self.kind in ("grad", "grad_and_value"):
                if not pytree.is_tensor(out) or out.value.ndim != 0:
                    dims = out.value.ndim if isinstance(out, Tensor) else "no"
                    raise DdxRuntimeError(SCALAR.format(dims=dims))
                got = self._shaped(flats, [Tensor(g) for g in grads_of(
                    out, np.ones((), dtype=out.value.dtype), every)])
                if self.kind == "grad_and_value":
                    value = Tensor(np.array(out.value))
                    return (got, (value, aux)) if self.has_aux else (got, value)
                return (got, aux) if self.has_aux else got
            outs, out_spec = pytree.flatten(out)
            rows = []
            for o in outs:
                if not pytree.is_tensor(o):
                    raise DdxRuntimeError(f"{self.kind}(f)(*args): Expected f to return a "
                                          "Tensor or a pytree of Tensors")
                jac = jac_rows(o, every) if self.kind == "jacrev" else jac_columns(o, every)
                rows.append(self._shaped(flats, [Tensor(j) for j in jac]))
            got = pytree.unflatten(rows, out_spec)
        return (got, aux) if self.has_aux else got

    def _shaped(self, flats: list, values: list) -> Any:
        """Per-leaf results put back in the arguments' structures (a tuple for tuple argnums)."""
        out, pos = [], 0
        for leaves, spec in flats:
            out.append(pytree.unflatten(values[pos:pos + len(leaves)], spec))
            pos += len(leaves)
        return tuple(out) if self.tupled else out[0]

    def _second(self, ev, node, args: list, kw: dict) -> Any:
        """hessian(f), and jacfwd/jacrev of jacrev/jacfwd/grad of a plain function."""
        inner = self.func
        f = inner
        if self.kind != "hessian":
            first = ("jacrev", "jacfwd", "grad")
            if not (isinstance(inner, Transform) and inner.kind in first and self.kind in first
                    and not isinstance(inner.func, Transform)
                    and inner.nums == self.nums and not inner.has_aux and not self.has_aux):
                what = f"{self.kind}({getattr(inner, 'kind', 'f')}(...))"
                raise DdxRuntimeError(
                    f"ddx does not compose {what}: it nests torch.func transforms as hessian, "
                    "jacfwd/jacrev/grad of jacrev/jacfwd/grad of a plain function (same "
                    "argnums), "
                    "jvp/vjp of grad, and vmap of any")
            f = inner.func
        elif isinstance(inner, Transform):
            raise DdxRuntimeError("ddx does not compose hessian of a torch.func transform: "
                                  "hessian takes a plain function")
        full = list(args)
        where = self.positions(full)
        xs = []
        for n in where:
            if not pytree.is_tensor(full[n]):
                raise DdxRuntimeError(f"{self.kind}(f)(*args): ddx's Hessians take tensor "
                                      "arguments (not pytrees) at argnums")
            full[n] = fresh(full[n])
            xs.append(full[n])
        x = xs[0]
        out, aux = split_aux(call_on(ev, node, f, full, dict(kw), xs), self.has_aux,
                             self.kind)
        if not pytree.is_tensor(out):
            raise DdxRuntimeError(f"{self.kind}(f)(*args): ddx's Hessians take a function "
                                  "that returns one Tensor")
        if getattr(inner, "kind", None) == "grad" and out.value.ndim != 0:
            raise DdxRuntimeError(SCALAR.format(dims=out.value.ndim))
        if self.kind == "grad" and x.value.ndim != 0:  # (grad of grad(f), shaped as x)
            raise DdxRuntimeError(SCALAR.format(dims=x.value.ndim))
        blocks = hessian_blocks(out, xs)  # (tuple argnums: a tuple of tuples of blocks)
        got = tuple(tuple(Tensor(h) for h in row) for row in blocks) if self.tupled else \
            Tensor(blocks[0][0])
        return (got, aux) if self.has_aux else got


def make(kind: str):
    """kind(func, argnums=0, has_aux=False): a Transform."""
    def call(ev, node, args, kw):
        if not args:
            raise DdxTypeError(f"{kind}() missing 1 required positional argument: 'func'")
        for name in kw:
            if name not in OPTIONS:
                raise DdxTypeError(f"{kind}() got an unexpected keyword argument '{name}'")
        argnums = args[1] if len(args) > 1 else kw["argnums"][0] if "argnums" in kw else 0
        has_aux = args[2] if len(args) > 2 else kw["has_aux"][0] if "has_aux" in kw else False
        return Transform(kind, args[0], argnums, bool(number_of(has_aux) or False))
    return call


__all__ = ["KINDS", "Transform", "call_on", "detached", "fresh", "grads_of", "make",
           "second_order", "split_aux"]
