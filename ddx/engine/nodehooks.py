"""Hooks on grad_fn nodes, as PyTorch's engine runs them (torch/csrc/autograd/engine.cpp's
call_function): a node's tensor hooks, then its pre-hooks on the gradients arriving at its
outputs, then its VJPs, then its post-hooks on the gradients it sends to its inputs. A leaf's
AccumulateGrad node runs its pre-hooks on the leaf's summed gradient before it is accumulated,
its post-hooks after (with no grad_inputs).

And the backward passes running now (``TASKS``): which nodes the current pass will execute,
for torch.autograd.graph.register_multi_grad_hook (torch._C._will_engine_execute_node)."""

from __future__ import annotations

import itertools

from ..graph.tensor import NodeHooks, Tensor

TASKS: list = []  # per backward pass running now: (serial, root Function, deps, hooked leaves)
SERIALS = itertools.count()
# anomaly mode (torch.autograd.set_detect_anomaly): [enabled, check_nan]; when enabled, each
# node's gradients are checked for nan as its backward returns them
ANOMALY = [False, True]


def run_pre(hooks: NodeHooks, grads: tuple) -> tuple:
    """Each pre-hook in order on the gradients arriving at the node; a result replaces them."""
    for hook in tuple(hooks.pre.values()):
        got = hook(grads)
        if got is not None:
            grads = got
    return grads


def run_post(hooks: NodeHooks, grads_in: tuple, grads_out: tuple) -> tuple:
    """Each post-hook in order on (what the node sends its inputs, what it received)."""
    for hook in tuple(hooks.post.values()):
        got = hook(grads_in, grads_out)
        if got is not None:
            grads_in = got
    return grads_in


def run_unpack(hooks: NodeHooks) -> None:
    """The unpack hooks of the node's saved tensors, as its backward unpacks them."""
    for hook in tuple(hooks.unpack.values()):
        hook()


def leaf_pre(t: Tensor, g):
    """A leaf's gradient through its AccumulateGrad node's pre-hooks (None: no gradient)."""
    hooks = t.acc_hooks()
    if hooks is None or not hooks.pre:
        return g
    return run_pre(hooks, (g,))[0]


def leaf_post(t: Tensor, g) -> None:
    """A leaf's AccumulateGrad post-hooks, once its gradient is accumulated."""
    hooks = t.acc_hooks()
    if hooks is not None and hooks.post:
        run_post(hooks, (), (g,))


def will_execute(t: Tensor) -> bool:
    """Whether the backward pass running now reaches ``t``'s node (its grad_fn, or for a leaf
    with hooks its AccumulateGrad)."""
    if not TASKS:
        return False
    _, root, deps, leaves = TASKS[-1]
    if t.grad_fn is not None:
        return t.grad_fn is root or t.grad_fn in deps
    return bool(leaves) and t in leaves


def current_task() -> int:
    """An id of the backward pass running now (-1 outside one), as _current_graph_task_id."""
    return TASKS[-1][0] if TASKS else -1
