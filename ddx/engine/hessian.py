"""Second order: the Hessian by forward-over-reverse, i.e. forward mode (dual numbers) run through
the forward pass and then through the backward pass that the op table's VJP rules define.

Why forward-over-reverse: the backward pass is already written once, as numpy code in the op
table; pushing dual numbers through it differentiates it without a second set of rules, costs one
pass per input element, and gives exact (not finite-difference) second derivatives."""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from ..errors import DdxRuntimeError, DdxUsageError
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..ops import OPS, UFUNCS
from .forward import MAX_DIRECTIONS, compare, step_for
from .reverse import unbroadcast


def _p(x):
    return x.p if isinstance(x, Dual) else x


def _t(x):
    return x.t if isinstance(x, Dual) else None


class NoDerivative(TypeError):
    """A rule called a numpy function that no row of the op table differentiates."""


class Dual(NDArrayOperatorsMixin):
    """An array with a tangent: numpy ufuncs and the array functions ddx uses carry it along."""

    __slots__ = ("p", "t")

    def __init__(self, p, t=None) -> None:
        self.p = np.asarray(p)
        self.t = np.zeros(self.p.shape) if t is None else np.broadcast_to(
            np.asarray(t, dtype=np.float64), self.p.shape)

    shape = property(lambda self: self.p.shape)
    ndim = property(lambda self: self.p.ndim)
    size = property(lambda self: self.p.size)
    dtype = property(lambda self: self.p.dtype)
    T = property(lambda self: Dual(self.p.T, self.t.T))

    def __getitem__(self, key):
        return Dual(self.p[key], self.t[key])

    def __setitem__(self, key, value):
        self.t = np.array(self.t)
        self.p[key] = _p(value)
        tv = _t(value)
        self.t[key] = 0.0 if tv is None else tv

    def sum(self, axis=None, keepdims=False):
        return Dual(self.p.sum(axis=axis, keepdims=keepdims),
                    self.t.sum(axis=axis, keepdims=keepdims))

    def reshape(self, *shape):
        return Dual(self.p.reshape(*shape), self.t.reshape(*shape))

    def astype(self, dtype, copy=True):
        return Dual(self.p.astype(dtype), self.t)

    def item(self):
        return self.p.item()

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if method == "reduce" and ufunc is np.add:
            return np.sum(inputs[0], **kw)
        if method != "__call__":
            return NotImplemented
        out_arg = kw.pop("out", None)
        if out_arg is not None:  # in-place ops (r *= k): compute, then store into the target
            result = self.__array_ufunc__(ufunc, method, *inputs, **kw)
            target = out_arg[0]
            target.p, target.t = np.asarray(_p(result)), np.asarray(_t(result))
            return target
        ps = [_p(x) for x in inputs]
        with np.errstate(all="ignore"):
            out = ufunc(*ps, **kw)
            if np.asarray(out).dtype == np.bool_:
                return out  # a comparison or a test: no derivative
            if ufunc is np.matmul:
                a, b = inputs
                parts = [np.matmul(_t(a), _p(b)) if _t(a) is not None else None,
                         np.matmul(_p(a), _t(b)) if _t(b) is not None else None]
                return Dual(out, sum(p for p in parts if p is not None))
            row = UFUNCS.get(ufunc)  # the row whose forward this is: its rules differentiate it
            if row is None:
                raise NoDerivative(f"numpy.{ufunc.__name__}")
            tangent = row.tangent([_t(x) for x in inputs], out, *ps)
        return Dual(out, 0.0 if tangent is None else _p(tangent))

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCS.get(func)
        if handler is None:
            raise NoDerivative(f"numpy.{func.__name__}")
        return handler(*args, **kwargs)


def _linear(func):
    def apply(a, *args, **kw):
        return Dual(func(_p(a), *args, **kw),
                    func(_t(a) if _t(a) is not None else np.zeros(np.shape(_p(a))), *args, **kw))
    return apply


def _bilinear(func):
    def apply(a, b):
        out = func(_p(a), _p(b))
        parts = [func(_t(a), _p(b)) if _t(a) is not None else None,
                 func(_p(a), _t(b)) if _t(b) is not None else None]
        return Dual(out, sum(p for p in parts if p is not None))
    return apply


def _where(cond, x, y):
    """where's tangent is the chosen side's; plus 0 times the other side's, which is nan where
    that is not finite: reverse mode (PyTorch's double backward) sends a zero gradient into
    the side not taken, and 0 * inf is nan there too."""
    c = _p(cond)
    tx = _t(x) if _t(x) is not None else 0.0
    ty = _t(y) if _t(y) is not None else 0.0
    with np.errstate(all="ignore"):
        return Dual(np.where(c, _p(x), _p(y)), np.where(c, tx + 0.0 * ty, ty + 0.0 * tx))


def _extreme(func, argfunc):
    def apply(a, axis=None, keepdims=False, **kw):
        p = _p(a)
        out = func(p, axis=axis, keepdims=keepdims)
        t = _t(a) if _t(a) is not None else np.zeros(p.shape)
        if axis is None:
            tangent = t.reshape(-1)[argfunc(p)]
            tangent = np.full(out.shape, tangent)
        else:
            idx = np.expand_dims(argfunc(p, axis=axis), axis)
            tangent = np.take_along_axis(t, idx, axis=axis)
            if not keepdims:
                tangent = np.squeeze(tangent, axis)
        return Dual(out, tangent)
    return apply


def _stack(arrays, axis=0):
    arrays = list(arrays)
    return Dual(np.stack([_p(a) for a in arrays], axis=axis),
                np.stack([_t(a) if _t(a) is not None else np.zeros(np.shape(_p(a)))
                          for a in arrays], axis=axis))


def _broadcast_arrays(*arrays):
    shape = np.broadcast_shapes(*[np.shape(_p(a)) for a in arrays])
    return [np.broadcast_to(a, shape) for a in arrays]


def _put_along_axis(arr, indices, values, axis):
    arr.t = np.array(arr.t)
    np.put_along_axis(arr.p, indices, _p(values), axis)
    tv = _t(values)
    np.put_along_axis(arr.t, indices, 0.0 if tv is None else tv, axis)


def _zeros_like(a, dtype=None, shape=None, **kw):
    shape = np.shape(_p(a)) if shape is None else shape
    return Dual(np.zeros(shape, dtype=dtype or _p(a).dtype), np.zeros(shape))


_FUNCS = {
    np.where: _where,
    np.sum: lambda a, axis=None, keepdims=False, **kw: a.sum(axis=axis, keepdims=keepdims),
    np.mean: lambda a, axis=None, **kw: Dual(np.mean(_p(a), axis=axis), np.mean(_t(a), axis=axis)),
    np.broadcast_to: lambda a, shape, **kw: Dual(np.broadcast_to(_p(a), shape),
                                                 np.broadcast_to(_t(a) if _t(a) is not None
                                                                 else 0.0, shape)),
    np.expand_dims: _linear(np.expand_dims),
    np.transpose: _linear(np.transpose),
    np.cumsum: _linear(np.cumsum),
    np.flip: _linear(np.flip),
    np.squeeze: _linear(np.squeeze),
    np.reshape: _linear(np.reshape),
    np.outer: _bilinear(np.outer),
    np.dot: _bilinear(np.dot),
    np.stack: _stack,
    np.broadcast_arrays: _broadcast_arrays,
    np.max: _extreme(np.max, np.argmax),
    np.min: _extreme(np.min, np.argmin),
    np.argmax: lambda a, axis=None, **kw: np.argmax(_p(a), axis=axis),
    np.argmin: lambda a, axis=None, **kw: np.argmin(_p(a), axis=axis),
    np.count_nonzero: lambda a, **kw: np.count_nonzero(_p(a), **kw),
    np.shape: lambda a: np.shape(_p(a)),
    np.ndim: lambda a: np.ndim(_p(a)),
    np.put_along_axis: _put_along_axis,
    np.zeros_like: _zeros_like,
    np.take_along_axis: lambda a, idx, axis: Dual(np.take_along_axis(_p(a), idx, axis),
                                                 np.take_along_axis(_t(a), idx, axis)),
}


def row_of(t: Tensor):
    """The row a node was made by: the table's, or the node's own (a custom Function's, whose
    rules for dual numbers pycustom_twice.py gives)."""
    row = OPS.get(t.op)
    return row if row is not None else t.grad_fn.op


def _value(t: Tensor, values: dict):
    v = values[id(t)]
    return _p(v).item() if t.weak else v


def gradient_at(output: Tensor, order: list[Tensor], leaves: dict[str, Tensor],
                overrides: dict[int, object], g0) -> dict[int, object]:
    """Forward replay, then the backward pass, on plain arrays or on Duals alike. An override
    of a node that is no leaf (a gradient with respect to a non-leaf: x = w.clone()) makes it
    an independent variable: its value is the override, and the backward stops there."""
    values: dict[int, object] = {}
    for t in order:
        if not t.inputs or id(t) in overrides:
            values[id(t)] = overrides.get(id(t), t.value)
            continue
        row = row_of(t)
        args = [_value(s, values) for s in t.inputs]
        ps = [_p(a) for a in args]
        with np.errstate(all="ignore"):  # forward mode: the row's kernel on the primal values,
            out = np.asarray(row.fn(*ps, **t.kw))  # its JVP on the tangents
            tangent = row.tangent([_t(a) for a in args], out, *ps, **t.kw)
        values[id(t)] = out if tangent is None else Dual(out, _p(tangent))
    adjoint: dict[int, object] = {id(output): g0}
    for t in reversed(order):
        g = adjoint.pop(id(t), None)
        if g is None or not t.inputs or t.grad_fn is None or id(t) in overrides:
            if g is not None:
                adjoint[id(t)] = g
            continue
        args = [_value(s, values) for s in t.inputs]
        for i, s in enumerate(t.inputs):
            if not s.requires_grad:
                continue
            try:
                with np.errstate(all="ignore"):
                    gi = row_of(t).vjp[i](g, values[id(t)], *args, **t.kw)
            except NoDerivative as exc:
                raise DdxRuntimeError(
                    f"--hessian: the derivative rule of {t.op} calls {exc}, which no row of the "
                    "op table differentiates",
                    hint="write the rule with numpy functions that are rows' forwards, or add "
                         "a row for it") from None
            if not isinstance(gi, Dual):
                gi = np.asarray(gi)
            gi = unbroadcast(gi, s.value.shape)
            adjoint[id(s)] = adjoint[id(s)] + gi if id(s) in adjoint else gi
    return {id(leaf): adjoint.get(id(leaf)) for leaf in leaves.values()}


def hessian(trace) -> dict:
    output = trace.output
    leaves = trace.leaves
    n = sum(t.value.size for t in leaves.values())
    if n > MAX_DIRECTIONS:
        raise DdxUsageError(f"--hessian needs one pass per input element: {n} here, over the "
                            f"limit of {MAX_DIRECTIONS}")
    order = ancestors(output)
    g0 = np.ones(output.value.shape, dtype=output.value.dtype)
    H = {a: {b: np.zeros(ta.value.shape + tb.value.shape) for b, tb in leaves.items()}
         for a, ta in leaves.items()}
    for b, tb in leaves.items():
        for j in range(tb.value.size):
            seed = np.zeros(tb.value.shape)
            seed.reshape(-1)[j] = 1.0
            grads = gradient_at(output, order, leaves, {id(tb): Dual(tb.value, seed)}, g0)
            for a, ta in leaves.items():
                g = grads[id(ta)]
                col = np.zeros(ta.value.shape) if not isinstance(g, Dual) else g.t
                H[a][b].reshape(ta.value.size, tb.value.size)[:, j] = np.asarray(col).reshape(-1)
    # the check: central differences of the (reverse-mode) gradient
    h = step_for(output.value.dtype) * 10
    fd = {a: {b: np.zeros(ta.value.shape + tb.value.shape) for b, tb in leaves.items()}
          for a, ta in leaves.items()}
    for b, tb in leaves.items():
        for j in range(tb.value.size):
            x = float(tb.value.reshape(-1)[j])
            hj = h * max(1.0, abs(x))
            up, down = tb.value.copy(), tb.value.copy()
            up.reshape(-1)[j] += hj
            down.reshape(-1)[j] -= hj
            gu = gradient_at(output, order, leaves, {id(tb): up}, g0)
            gd = gradient_at(output, order, leaves, {id(tb): down}, g0)
            for a, ta in leaves.items():
                with np.errstate(all="ignore"):  # (inf - inf: the check says it cannot agree)
                    diff = (np.zeros(ta.value.shape) if gu[id(ta)] is None
                            else (np.asarray(gu[id(ta)]) - np.asarray(gd[id(ta)])) / (2 * hj))
                fd[a][b].reshape(ta.value.size, tb.value.size)[:, j] = diff.reshape(-1)
    flat_h = {f"{a},{b}": v for a, row in H.items() for b, v in row.items()}
    flat_fd = {f"{a},{b}": v for a, row in fd.items() for b, v in row.items()}
    max_abs, max_rel = compare(flat_h, flat_fd)
    ok = all(np.allclose(flat_h[k], flat_fd[k], rtol=1e-4, atol=1e-5) for k in flat_h)
    return {"hessian": H, "method": "forward-over-reverse (dual numbers through the backward "
            "pass)", "cost": {"passes": n},
            "check": {"step": h, "max_abs_error": max_abs, "max_rel_error": max_rel, "ok": ok}}
