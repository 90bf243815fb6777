"""A second derivative through a user's torch.autograd.Function (create_graph=True,
gradgradcheck, autograd.functional.hessian), forward over reverse as ddx takes every second
derivative: the node's rules on dual numbers. Its tangent (forward mode) is its forward run
again on dual tensors (the tangents flowing through forward's ops, graph/dual.py); its VJP on
a dual gradient is forward run again on dual inputs, for saved tensors that carry their
tangents, then the user's backward on the dual gradient: the tangents of what it returns are
the second derivatives. PyTorch instead records the backward's ops (reverse over reverse):
the numbers are the same where the backward is made of ops; ddx runs forward once more for
each (where forward prints, it prints again)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..engine.hessian import Dual
from ..graph import dual, record
from ..graph.tensor import Tensor


def plain_of(v: Any) -> np.ndarray:
    return np.asarray(v.p if isinstance(v, Dual) else v)


def _tangent(v: Any):
    return v.t if isinstance(v, Dual) else None


class Twice:
    """The rules of one custom Function node on dual numbers."""

    def __init__(self, ev, node, run_forward, run_backward, args: list,
                 positions: list) -> None:
        self.ev, self.node = ev, node
        self.run_forward, self.run_backward = run_forward, run_backward
        self.args, self.positions = list(args), positions
        self.memo: tuple = ()  # (g, xs, results): the last dual VJP, for the other inputs

    def _forward(self, values: list, tangents: list) -> tuple:
        """forward on dual inputs (inside ddx's own level): (ctx, outputs)."""
        call = list(self.args)
        for k, pos in enumerate(self.positions):
            x = Tensor(np.array(values[k]))
            if tangents[k] is not None:
                dual.set_tangent(x, Tensor(np.asarray(tangents[k], dtype=x.value.dtype)))
            call[pos] = x
        before = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = False
        try:
            return self.run_forward(call)
        finally:
            record.GRAD_MODE.enabled = before

    def grad_name(self, k: int) -> str | None:
        """The grad_fn PyTorch's create_graph gradient at the node's input ``k`` has: that of
        what the user's backward returns there when its ops are recorded (inputs and saved
        outputs requiring grad, as PyTorch's do); None where nothing is recorded (backward made
        it from values kept on ctx: PyTorch's gradient then requires no grad). A silent run:
        what it prints and warns is taken back."""
        ev = self.ev
        printed, partial, warned = len(ev.printed), getattr(ev, "partial", ""), len(ev.warnings)
        before = record.GRAD_MODE.enabled
        try:
            call = list(self.args)
            for pos in self.positions:
                call[pos] = Tensor(np.array(self.args[pos].value), True)
            record.GRAD_MODE.enabled = False
            ctx, result = self.run_forward(call)
            outs = list(result) if isinstance(result, tuple) else [result]
            for o in outs:  # (PyTorch's outputs carry the node: a saved output requires grad)
                if isinstance(o, Tensor) and o.value.dtype.kind == "f" and not o.requires_grad:
                    o.requires_grad = True
            grads = [Tensor(np.ones(np.shape(o.value))) if isinstance(o, Tensor) else None
                     for o in outs]
            got = self.run_backward(ctx, grads, True)
            got = got if isinstance(got, tuple) else (got,)
            pos = self.positions[k]
            item = got[pos] if pos < len(got) else None
            fn = item.grad_fn if isinstance(item, Tensor) else None
            return None if fn is None else fn.name
        finally:
            record.GRAD_MODE.enabled = before
            del ev.printed[printed:]
            ev.partial = partial
            del ev.warnings[warned:]

    def tangents(self, ts: list, xs) -> list:
        """Forward mode: each output's tangent (an array, or None) for the inputs' ``ts``."""
        saved = dual.push()
        try:
            _, result = self._forward([plain_of(x) for x in xs], list(ts))
            outs = result if isinstance(result, tuple) else (result,)
            got = [dual.tangent_of(o) if isinstance(o, Tensor) else None for o in outs]
            return [None if t is None else np.array(t.value) for t in got]
        finally:
            dual.pop(saved)

    def tangent(self, ts: list, out, *xs, **kw):
        """The row's JVP for a Function of one output."""
        return self.tangents(ts, xs)[0]

    def vjp(self, g, xs: tuple) -> tuple:
        """The backward's results for the dual gradient ``g`` at the dual inputs ``xs``: a
        Dual (or an array, where no tangent reaches it) per forward argument. ``g`` is one
        gradient, or a list of one per output."""
        if self.memo and self.memo[0] is g and all(a is b for a, b in zip(self.memo[1], xs)):
            return self.memo[2]
        saved = dual.push()
        try:
            ctx, _ = self._forward([plain_of(x) for x in xs], [_tangent(x) for x in xs])
            grads = []
            for each in (g if isinstance(g, list) else [g]):
                grad = Tensor(np.array(plain_of(each)))
                if _tangent(each) is not None:
                    dual.set_tangent(grad, Tensor(np.asarray(_tangent(each),
                                                             dtype=grad.value.dtype)))
                grads.append(grad)
            got = self.run_backward(ctx, grads)
            got = got if isinstance(got, tuple) else (got,)
            out = []
            for item in got:
                if not isinstance(item, Tensor):
                    out.append(item)
                    continue
                t = dual.tangent_of(item)
                out.append(Dual(np.array(item.value), np.array(t.value)) if t is not None
                           else np.array(item.value))
            self.memo = (g, tuple(xs), tuple(out))
            return self.memo[2]
        finally:
            dual.pop(saved)


OWNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a node -> its Twice


def has_duals(g, xs) -> bool:
    return isinstance(g, Dual) or any(isinstance(x, Dual) for x in xs)


__all__ = ["OWNERS", "Twice", "has_duals", "plain_of"]
