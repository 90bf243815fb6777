"""torch.autograd.Function in the REPL: a user's class with static ``forward(ctx, ...)`` (or
``forward(...)`` and ``setup_context(ctx, inputs, output)``, PyTorch 2's form) and
``backward(ctx, grad_output)``; ``Cls.apply(...)`` runs forward without recording, then puts
one node in the graph (named ``<Cls>Backward``, as PyTorch names it) whose rule is the user's
backward, run by ddx's interpreter when the backward pass reaches it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import dual, record
from ..graph.tensor import Function, Tensor
from ..graph.values import py_type
from ..ops.table import Op
from . import pydunder, pyhooks
from .pycustom_jvp import MISSING_BACKWARD, with_tangents
from .pycustom_multi import apply_many, input_rule
from .pycustom_twice import OWNERS, Twice
from .pycustom_vmap import PLAIN, under_transforms
from .pyerrors import PyException
from .pymodules import EXTRA, Native
from .pyvalues import UserClass

_CTX_METHODS = ("save_for_backward", "mark_non_differentiable", "mark_dirty",
                "set_materialize_grads")


class Ctx:
    """The ``ctx`` of a custom Function: save_for_backward and saved_tensors."""

    def __init__(self, n_inputs: int) -> None:
        self.saved: tuple = ()
        self.attrs: dict = {}
        self.needs_input_grad: tuple = ()
        self.non_differentiable: set = set()

    def py_method(self, ev, node, name, args, kw):
        if name == "save_for_backward":
            for i, a in enumerate(args):
                if a is not None and not (isinstance(a, Tensor) and not a.weak):
                    raise DdxTypeError("save_for_backward can only save variables, but "
                                       f"argument {i} is of type {py_type(a)}")
            self.saved = tuple(args)
            return None
        if name == "mark_non_differentiable":
            self.non_differentiable.update(id(a) for a in args)
            return None
        if name in ("mark_dirty", "set_materialize_grads"):
            return None
        raise DdxTypeError(f"'FunctionCtx' object has no attribute '{name}'")

    def py_setattr(self, name: str, value: Any) -> None:
        if name.startswith("__"):
            raise DdxTypeError(f"cannot set '{name}' on a FunctionCtx")
        self.attrs[name] = value

    def py_delattr(self, name: str) -> bool:
        """``del ctx.name`` (a jvp freeing what forward kept): whether it was there."""
        return self.attrs.pop(name, self) is not self

    def py_attr(self, ev, node, name):
        if name in _CTX_METHODS:  # (a method as a value: ctx.save_for_backward)
            return Native(name, lambda ev, node, args, kw: self.py_method(ev, node, name, args,
                                                                          kw))
        if name == "saved_tensors":
            return self.saved
        if name == "needs_input_grad":
            return self.needs_input_grad
        if name in self.attrs:
            return self.attrs[name]
        raise DdxTypeError(f"'FunctionCtx' object has no attribute '{name}'")


class FunctionBase:
    """torch.autograd.Function as a base class."""

    def __repr__(self) -> str:
        return "<class 'torch.autograd.function.Function'>"

    def class_attr(self, name: str) -> Any:
        return None

    def bound_class_attr(self, cls: UserClass, name: str) -> Any:
        if name == "apply":
            return Native("apply", lambda ev, node, args, kw: apply(ev, node, cls, args, kw))
        return None


FUNCTION = FunctionBase()


def apply(ev, node, cls: UserClass, args: list, kw: dict) -> Any:
    forward, backward = cls.lookup("forward"), cls.lookup("backward")
    if forward is None:
        raise DdxRuntimeError(f"{cls.name} must define forward as a static method")
    if backward is None:  # (an error when the backward pass reaches it, as PyTorch's)
        backward = MISSING_BACKWARD
    mapped = under_transforms(ev, node, cls, args)
    if mapped is not PLAIN:
        return mapped
    if cls.lookup("setup_context") is not None:
        args, kw = bind_default_args(forward, args, kw)
    ctx = Ctx(len(args))
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    result = _node(ev, node, cls, ctx, args, kw, forward, backward)
    return with_tangents(ev, node, cls, ctx, args, result)


def bind_default_args(forward, args: list, kw: dict) -> tuple[list, dict]:
    """PyTorch 2's apply with a setup_context: forward's arguments bound to its parameters
    (inspect.signature(forward).bind, defaults applied), so ``inputs`` holds one entry per
    parameter; inspect's TypeError texts for a missing or unexpected argument. (A forward
    with *args or keyword-only parameters is called as given.)"""
    params = getattr(forward, "params", None)
    if params is None or any(p.kind != "pos" for p in params):
        return args, kw
    if len(args) > len(params):
        raise PyException.error("TypeError", "too many positional arguments")
    bound = list(args)
    rest = dict(kw)
    for p in params[len(args):]:
        if p.name in rest:
            bound.append(rest.pop(p.name)[0])  # (a keyword's entry: value, position)
        elif p.name in forward.defaults:
            bound.append(forward.defaults[p.name])
        else:
            raise PyException.error("TypeError", f"missing a required argument: '{p.name}'")
    for name in rest:
        if any(p.name == name for p in params):
            raise PyException.error("TypeError", f"multiple values for argument '{name}'")
        raise PyException.error("TypeError", f"got an unexpected keyword argument '{name}'")
    return bound, {}


def _node(ev, node, cls: UserClass, ctx: Ctx, args: list, kw: dict, forward, backward) -> Any:
    """forward run (grad mode off, no tangents: PyTorch unpacks the duals), then its node."""
    from .pycalls import call_value

    before = record.GRAD_MODE.enabled
    record.GRAD_MODE.enabled = False
    depth = dual.LEVEL.depth
    if not dual.LEVEL.through:  # (ddx's own second derivative: the tangents go through)
        dual.LEVEL.depth = 0
    setup = cls.lookup("setup_context")

    def run_forward(call: list):
        fresh = Ctx(len(call))
        return fresh, _forward(ev, node, forward, setup, fresh, call, kw)

    try:
        out = _forward(ev, node, forward, setup, ctx, args, kw)
    finally:
        record.GRAD_MODE.enabled = before
        dual.LEVEL.depth = depth
    many = isinstance(out, tuple) and any(isinstance(t, Tensor) for t in out)
    if not isinstance(out, Tensor) and not many:
        raise DdxTypeError(f"{cls.name}.forward must return a tensor or a tuple of them")
    inputs = [a for a in args if isinstance(a, Tensor) and not a.weak]
    if not (before and any(t.requires_grad for t in inputs)):
        return out
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and not a.weak]
    twice = Twice(ev, node, run_forward,
                  lambda c, gs, rec=False: _run_backward(ev, node, backward, c, gs, rec), args,
                  positions)
    if many:
        return apply_many(ev, node, cls.name, out, inputs, positions,
                          lambda grads: _run_backward(ev, node, backward, ctx, grads),
                          ctx.non_differentiable, twice)
    memo: dict = {}

    def grads(g):
        key = id(g)
        if key not in memo:
            memo.clear()
            record.GRAD_MODE.enabled = False
            try:
                # (the evaluator running backward now: a later statement's, which prints)
                now = pyhooks.ACTIVE[-1] if pyhooks.ACTIVE else ev
                got = call_value(now, node, backward, [ctx, Tensor(np.asarray(g))], {})
            finally:
                record.GRAD_MODE.enabled = True
            got = got if isinstance(got, tuple) else (got,)
            memo[key] = _checked(cls.name, got, args)
        return memo[key]

    row = Op(f"custom_{cls.name}", f"{cls.name}Backward", lambda *xs: out.value,
             tuple(input_rule(grads, positions, k, twice.vjp, none_is_none=True)
                   for k in range(len(inputs))),
             jvp=twice.tangent, elementwise=False)
    result = Tensor(out.value, True)
    if dual.tangent_of(out) is not None:  # (ddx's own level: forward's tangent is the node's)
        dual.set_tangent(result, dual.tangent_of(out))
    result.op = row.name
    result.inputs = tuple(inputs)
    result.kw = {}
    result.grad_fn = Function(row, row.grad_fn, result.inputs, {}, result)
    OWNERS[result.grad_fn] = twice
    result.label = ev.label(node)
    ev.nodes.append(result)
    return result


def _checked(name: str, got: tuple, args: list) -> tuple:
    """What backward returned, as PyTorch's engine checks it: one gradient per input of
    forward (extra Nones dropped), each None or of a shape the input broadcasts to."""
    while len(got) > len(args) and got[-1] is None:
        got = got[:-1]
    if len(got) != len(args):
        raise DdxRuntimeError(f"function {name}Backward returned an incorrect number of "
                              f"gradients (expected {len(args)}, got {len(got)})")
    for i, (g, a) in enumerate(zip(got, args)):
        if isinstance(g, Tensor) and isinstance(a, Tensor) and not a.weak:
            want, shape = a.value.shape, g.value.shape
            ok = len(shape) >= len(want) and all(w in (1, s) for w, s in zip(
                want[::-1], shape[::-1]))
            if not ok:
                raise DdxRuntimeError(f"Function {name}Backward returned an invalid gradient "
                                      f"at index {i} - got {list(shape)} but expected shape "
                                      f"compatible with {list(want)}")
    return got


def _forward(ev, node, forward, setup, ctx: Ctx, args: list, kw: dict) -> Any:
    from .pycalls import call_value

    if setup is not None:  # (PyTorch 2's form: forward(*args), then setup_context)
        out = call_value(ev, node, forward, list(args), kw)
        call_value(ev, node, setup, [ctx, tuple(args), out], {})
        return out
    return call_value(ev, node, forward, [ctx, *args], kw)


def _run_backward(ev, node, backward, ctx: Ctx, grads: list, recording: bool = False):
    """The user's backward on one gradient per output, with grad mode off (on where
    ``recording``: PyTorch's create_graph), run by the evaluator running the backward pass
    (a later statement's, which prints)."""
    from .pycalls import call_value

    record.GRAD_MODE.enabled = recording
    try:
        now = pyhooks.ACTIVE[-1] if pyhooks.ACTIVE else ev
        return call_value(now, node, backward, [ctx, *grads], {})
    finally:
        record.GRAD_MODE.enabled = True


def _staticmethod(ev, node, args, kw):
    (fn,) = args
    return pydunder.method_kind(fn, "static")


EXTRA["torch.autograd"]["Function"] = FUNCTION
STATICMETHOD = Native("staticmethod", _staticmethod)
