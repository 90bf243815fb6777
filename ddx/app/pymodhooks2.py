"""nn.Module's full backward hooks, as torch/utils/hooks.py's BackwardHook builds them around a
call of a module with ``register_full_backward_hook`` / ``register_full_backward_pre_hook``
hooks: the tensors among the positional args, when one requires grad, go through a
``BackwardHookFunctionBackward`` node (what forward sees), and so do the tensors the module
returns (what the caller sees). When the backward pass reaches the outputs' node, the pre-hooks
run on ``grad_output`` (a tuple over the outputs, None for a non-tensor or an output that got
no gradient) and may replace it; when it reaches the inputs' node, the full hooks run on
``(grad_input, grad_output)`` (grad_input a tuple over the positional args: zeros for a tensor
that takes no gradient, None for a non-tensor) and may replace grad_input. No input requires
grad: the full hooks run at the outputs' node (grad_input all None), with PyTorch's warning.

ddx's nodes have one output each: several tensors that require grad go through one hidden
node holding them packed (its post-hook sees all of their gradients at once), each shown
through a node of its own. A tensor that requires no grad passes as it is."""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Function, NodeHooks, Tensor
from ..ops.table import Op
from . import pyhooks
from .pyvalues import type_label

NAME = "BackwardHookFunctionBackward"
# a tensor a BackwardHookFunction node returned -> (its output number, whether one of several)
VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
NO_INPUT_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")
_VIEW_ERROR = "Output {} of BackwardHookFunction is a view and is being modified inplace. "
_CUSTOM = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.")
_MULTI = (  # (when the node has several differentiable outputs)
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation "
    "by an out-of-place one.")
_NOT_WRITES = ("requires_grad_", "resize_")
_GUARDED: list = []


class _Named:
    name = "hook"  # (PyTorch's checks name the inner function of BackwardHook: 'hook')


def _is_tensor(a) -> bool:
    return isinstance(a, Tensor) and not a.weak


def _node(op: Op, value, inputs: tuple, label) -> Tensor:
    t = Tensor(value, True)
    t.op, t.inputs, t.kw, t.label = op.name, inputs, {}, label
    t.grad_fn = Function(op, op.grad_fn, inputs, {}, t)
    return t


def _op(fn, vjps: tuple, jvp) -> Op:
    return Op("custom_BackwardHookFunction", NAME, fn, vjps, jvp=jvp, saves=False,
              elementwise=False)


_IDENTITY = _op(lambda x: x, (lambda g, o, x, **kw: g,), lambda ts, o, x, **kw: ts[0])


def _wrap(tensors: list, stash: dict | None) -> tuple[list, Function]:
    """The tensors as BackwardHookFunction returns them, and the node whose post-hook sees
    the gradients of all that require grad (``stash``: where each output's own node notes the
    gradient it got, for the outputs' hook to tell a zero gradient from none)."""
    diff = [j for j, t in enumerate(tensors) if t.requires_grad]
    new = list(tensors)
    if len(diff) == 1:
        j = diff[0]
        new[j] = _node(_IDENTITY, tensors[j].value, (tensors[j],), tensors[j].label)
        VIEWS[new[j]] = (j, False)
        return new, new[j].grad_fn
    spans, at = [], 0
    for j in diff:
        spans.append((at, at + tensors[j].value.size, tensors[j].value.shape))
        at += tensors[j].value.size
    packed = np.concatenate([np.asarray(tensors[j].value).reshape(-1) for j in diff])

    def part(lo, hi, shape):
        return lambda g, o, *xs, **kw: np.asarray(g)[lo:hi].reshape(shape)

    def whole(ts, o, *xs, **kw):
        return np.concatenate([np.zeros(xs[k].size) if t is None else np.asarray(t).reshape(-1)
                               for k, t in enumerate(ts)])

    def pack(*xs):
        return np.concatenate([np.asarray(x).reshape(-1) for x in xs])

    hidden = _node(_op(pack, tuple(part(*s) for s in spans), whole), packed,
                   tuple(tensors[j] for j in diff), None)
    for (lo, hi, shape), j in zip(spans, diff):
        new[j] = _node(_part_op(lo, hi, shape, j, packed, stash), tensors[j].value, (hidden,),
                       tensors[j].label)
        VIEWS[new[j]] = (j, True)
    return new, hidden.grad_fn


def _part_op(lo: int, hi: int, shape: tuple, j: int, packed: np.ndarray, stash) -> Op:
    """The node of one of several tensors, a part of the packed one: its gradient goes into
    its part of the packed gradient (noted in ``stash``, where given)."""
    def scatter(g, o, h, **kw):
        if stash is not None:
            stash[j] = np.asarray(g)
        full = np.zeros(packed.size, dtype=packed.dtype)
        full[lo:hi] = np.asarray(g).reshape(-1)
        return full

    def tangent(ts, o, h, **kw):
        return None if ts[0] is None else np.asarray(ts[0])[lo:hi].reshape(shape)
    return _op(lambda h: np.asarray(h)[lo:hi].reshape(shape), (scatter,), tangent)


def _post_hook(owner: Function, hook) -> None:
    hooks = NodeHooks(owner.node_hooks)
    hooks.post[-1] = hook  # (first: before any the user puts on the node)
    owner.node_hooks = hooks


def _length(value) -> int:
    if isinstance(value, (tuple, list)):
        return len(value)
    if _is_tensor(value):
        if value.value.ndim == 0:
            raise DdxTypeError("len() of a 0-d tensor")
        return value.value.shape[0]
    raise DdxTypeError(f"object of type '{type_label(value)}' has no len()")


def _item(value, i: int):
    if _is_tensor(value):
        return Tensor(value.value[i])
    return value[i]


def _grad(g) -> Tensor | None:
    return None if g is None else pyhooks.grad_tensor(np.asarray(g))


def _sent(value, old):
    """What a hook's entry sends where the node would send ``old``, with the checks PyTorch's
    engine makes of a node post-hook's result."""
    if value is None:  # (no gradient: the nodes after it wait for one gradient less)
        return None
    if old is None:
        raise DdxRuntimeError("can't replace a None gradient with a non-None value")
    if not _is_tensor(value):
        raise DdxTypeError(f"expected Variable, but hook returned '{type_label(value)}'")
    return pyhooks.checked_value(_Named, np.asarray(value.value), np.asarray(old))


class BackwardHook:
    """One call's BackwardHook: the hooks as they were at the call, and its gradients."""

    def __init__(self, ev, node, module, hooks: list, pre_hooks: list) -> None:
        self.ev, self.node, self.module = ev, node, module
        self.user_hooks, self.user_pre_hooks = hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs, self.input_index, self.inputs = -1, None, []
        self.n_outputs, self.output_index, self.outputs = -1, None, []
        self.stash: dict = {}
        _guard_in_place()

    def _call(self, fn, args: list):
        from .pycalls import call_value

        before = record.GRAD_MODE.enabled
        record.GRAD_MODE.enabled = False  # (as the engine runs hooks: create_graph=False)
        try:
            return call_value(pyhooks.current(self.ev), self.node, fn, args, {})
        finally:
            record.GRAD_MODE.enabled = before

    def _apply(self, args: list, hook, stash=None):
        index = [i for i, a in enumerate(args) if _is_tensor(a)]
        tensors = [args[i] for i in index]
        if not (record.GRAD_MODE.enabled and any(t.requires_grad for t in tensors)):
            return args, None, tensors
        new, owner = _wrap(tensors, stash)
        _post_hook(owner, hook)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return out, index, tensors

    def setup_input(self, args: list) -> list:
        out, self.input_index, self.inputs = self._apply(args, self._input_hook)
        self.n_inputs = len(args)
        return out

    def setup_output(self, result):
        if not isinstance(result, (Tensor, tuple)) or isinstance(result, Tensor) and result.weak:
            pyhooks.current(self.ev).warnings.append(
                "For backward hooks to be called, module output should be a Tensor or a tuple "
                f"of Tensors but received <class '{type_label(result)}'>")
        many = isinstance(result, tuple)
        args = list(result) if many else [result]
        out, self.output_index, self.outputs = self._apply(args, self._output_hook, self.stash)
        self.n_outputs = len(args)
        if not many:
            return out[0]
        return tuple(out) if type(result) is tuple else result

    def _pack(self, index: list, values: list, size: int) -> tuple:
        res = [None] * size
        for i, v in zip(index, values):
            res[i] = v
        return tuple(res)

    def _input_hook(self, grads_in: tuple, grads_out: tuple):
        if self.grad_outputs is None:  # (reached without passing the outputs: no call)
            return None
        diff = [j for j, t in enumerate(self.inputs) if t.requires_grad]
        olds = [np.zeros(t.value.shape, dtype=t.value.dtype) for t in self.inputs]
        for k, j in enumerate(diff):
            olds[j] = grads_in[k]
        res = self._pack(self.input_index, [_grad(g) for g in olds], self.n_inputs)
        for fn in self.user_hooks:
            out = self._call(fn, [self.module, res, self.grad_outputs])
            if out is None:
                continue
            if _length(out) != len(res):
                raise DdxRuntimeError("Backward hook returned an invalid number of grad_input, "
                                      f"got {_length(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        values = [_item(res, i) for i in self.input_index]
        sent = [_sent(v, old) for v, old in zip(values, olds)]
        return tuple(sent[j] for j in diff)

    def _output_hook(self, grads_in: tuple, grads_out: tuple):
        diff = [j for j, t in enumerate(self.outputs) if t.requires_grad]
        got = [None] * len(self.outputs)
        if len(diff) == 1:
            got[diff[0]] = grads_out[0]
        else:
            got = [self.stash.get(j) for j in range(len(self.outputs))]
            self.stash.clear()
        self.grad_outputs = self._pack(self.output_index, [_grad(g) for g in got],
                                       self.n_outputs)
        expected = len(self.grad_outputs)
        for fn in self.user_pre_hooks:
            new = self._call(fn, [self.module, self.grad_outputs])
            if new is None:
                continue
            if _length(new) != expected:
                raise DdxRuntimeError("Backward pre hook returned an invalid number of "
                                      f"grad_output, got {_length(new)}, but expected {expected}")
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_index is None:
            pyhooks.current(self.ev).warnings.append(NO_INPUT_WARNING)
            grad_inputs = (None,) * self.n_inputs
            for fn in self.user_hooks:
                res = self._call(fn, [self.module, grad_inputs, self.grad_outputs])
                if res is not None and not (isinstance(res, tuple) and
                                            all(e is None for e in res)):
                    raise DdxRuntimeError("Backward hook for Modules where no input requires "
                                          "gradient should always return None or None for all "
                                          "gradients.")
            self.grad_outputs = None
        olds = [None] * len(self.outputs)
        for k, j in enumerate(diff):
            olds[j] = grads_in[k]
        values = [_item(local, i) for i in self.output_index]
        return tuple(_sent(values[j], olds[j]) for j in diff)


def setup(ev, node, module, hooks: list, pre_hooks: list) -> BackwardHook | None:
    """The call's BackwardHook, when the module (or every module) has backward hooks."""
    return BackwardHook(ev, node, module, hooks, pre_hooks) if hooks or pre_hooks else None


def _guarded(method):
    def run(ev, node, t, args, kw):
        if record.GRAD_MODE.enabled and t in VIEWS:
            j, multi = VIEWS[t]
            raise DdxRuntimeError(_VIEW_ERROR.format(j) + (_MULTI if multi else _CUSTOM))
        return method(ev, node, t, args, kw)
    return run


def _guard_in_place() -> None:
    """x.add_(1), x.relu_(), ... on a tensor a BackwardHookFunction node returned: refused in
    grad mode, as PyTorch refuses an in-place change of a custom Function's view (the methods
    are wrapped once, when the first module with backward hooks is called)."""
    if _GUARDED:
        return
    from .methods import TENSOR_METHODS

    _GUARDED.append(True)
    for name, method in list(TENSOR_METHODS.items()):
        if name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITES:
            TENSOR_METHODS[name] = _guarded(method)


__all__ = ["NAME", "NO_INPUT_WARNING", "VIEWS", "BackwardHook", "setup"]
