"""Reverse mode: backward() over an iterative topological order, the one backward loop."""

from __future__ import annotations

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.record import FP_EVENTS, WARNINGS, describe
from ..graph.tensor import CHANGED, Function, Tensor
from ..ops.kernels_sum import FLOATS, torch_sum
from . import nodehooks
from .versions import check_saved


def _summed(t: Tensor, total) -> None:
    """After adding gradients for ``t``: report a floating-point event of the sum itself
    (inf + -inf is nan), as the VJPs' own events are reported."""
    if FP_EVENTS:
        FP_EVENTS.clear()
        where = t.label or t.name or "?"
        WARNINGS.append((where, f"the gradients reaching {where} add up to "
                                f"{describe(np.asarray(total))}"))


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a gradient down to an input's shape: undo numpy/PyTorch broadcasting."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if type(g) is np.ndarray and g.dtype in FLOATS:  # PyTorch's sum_to: one sum, kept, viewed
        axes = tuple(range(extra)) + tuple(
            i + extra for i, n in enumerate(shape) if n == 1 and g.shape[i + extra] != 1)
        g = torch_sum(g, axes, keepdim=True).reshape(shape)
        return g[()] if not shape else g
    if extra:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _fresh_grad(t: Tensor, g) -> np.ndarray:
    """A private, writable copy of g laid out as AccumulateGrad lays a new .grad out (its
    clone_obey_contract: a C-contiguous leaf gets a C-contiguous .grad, whatever view the
    rule made, so a later .grad.sum() adds in PyTorch's order)."""
    v = t.value
    order = "C" if not isinstance(v, np.ndarray) or v.flags.c_contiguous else "K"
    return np.array(g, dtype=v.dtype, order=order)


def _accumulate(t: Tensor, g: np.ndarray) -> None:
    """Add into .grad; a fresh .grad is always a private, writable array (zero_() may follow)."""
    t.grad = _fresh_grad(t, g) if t.grad is None else np.asarray(t.grad + g)


def _accumulate_shared(t: Tensor, g: np.ndarray) -> None:
    """As _accumulate, but keeps ``g`` itself when it is a whole writable array: no copy (and no
    page faults) for large gradients. Used where nothing writes into gradients in place."""
    if t.grad is None:
        if g.flags.writeable and g.flags.owndata and g.dtype == t.value.dtype and \
                (g.flags.c_contiguous or not t.value.flags.c_contiguous):
            t.grad = g
        else:
            t.grad = _fresh_grad(t, g)
    else:
        t.grad = np.asarray(t.grad + g)


def initial_grad(root: Tensor, grad_output: np.ndarray | None) -> np.ndarray:
    if grad_output is None:
        if root.value.size != 1:
            raise DdxRuntimeError("grad can be implicitly created only for scalar outputs",
                                  hint="pass --grad-output ones (the gradient= argument of "
                                       "backward()) to weight the outputs")
        return np.ones_like(root.value)
    g = np.array(grad_output, dtype=root.value.dtype)  # a copy: gradients never alias it
    if g.shape != root.value.shape:
        raise DdxRuntimeError(
            f"Mismatch in shape: grad_output[0] has a shape of {torch_size(g.shape)} and "
            f"output[0] has a shape of {torch_size(root.value.shape)}.")
    return g


def torch_size(shape: tuple[int, ...]) -> str:
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


def graph_order(root: Function) -> dict[Function, int]:
    """For every Function reachable from ``root``, how many consumers feed it a gradient."""
    deps: dict[Function, int] = {}
    stack = [root]
    seen = {root}
    while stack:
        fn = stack.pop()
        for t in fn.inputs:
            f = t.grad_fn
            if f is not None and t.requires_grad:
                deps[f] = deps.get(f, 0) + 1
                if f not in seen:
                    seen.add(f)
                    stack.append(f)
    return deps


FREED_TEXT = ("Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the graph "
              "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
              "you need to backward through the graph a second time or if you need to access saved "
              "tensors after calling backward.")


def backward(root: Tensor, grad_output: np.ndarray | None = None, *,
             retain_graph: bool = False, record: dict | None = None,
             counter: list | None = None, shared: bool = False,
             inputs: list[Tensor] | None = None) -> None:
    """Accumulate d(root)/d(leaf) into every leaf's ``.grad``, as ``root.backward()`` does;
    with ``inputs``, into theirs only (a non-leaf among them retains its grad from then on),
    running just the nodes on a path to them, as ``root.backward(inputs=...)``.

    ``record``, when given, receives the total gradient arriving at every Function's output."""
    if not root.requires_grad:
        raise DdxRuntimeError("element 0 of tensors does not require grad and does not have a "
                              "grad_fn")
    g0 = initial_grad(root, grad_output)
    sink = _accumulate_shared if shared else _accumulate
    if inputs is not None:
        for t in inputs:
            t.retain_grad()
        wanted = {id(t) for t in inputs if t.grad_fn is None}
        accumulate = sink

        def sink(t: Tensor, g: np.ndarray) -> None:
            if id(t) in wanted:
                accumulate(t, g)
    n = propagate(root, g0, sink, retain_graph=retain_graph, record=record, only=inputs)
    if counter is not None:
        counter.append(n)


def vjp(root: Tensor, g0: np.ndarray) -> dict[int, np.ndarray]:
    """d<g0, root>/d(leaf) for every leaf reached, keyed by id(leaf); touches no ``.grad``."""
    out: dict[int, np.ndarray] = {}

    def sink(t: Tensor, g: np.ndarray) -> None:
        key = id(t)
        out[key] = np.asarray(out[key] + g) if key in out else g

    propagate(root, np.asarray(g0, dtype=root.value.dtype), sink, retain_graph=True,
              retain_grads=False)
    return out


def run_hooks(t: Tensor, g):
    """A tensor's register_hook functions, in order: each may return a new gradient."""
    for hook in tuple(t.hooks.values()):
        got = hook(g)
        if got is not None:
            g = got
    return g


def _hooked_leaves(root: Function, deps: dict) -> dict:
    """How many gradients each leaf with hooks (its own, or its AccumulateGrad node's)
    receives: its hooks run once, on their sum."""
    counts: dict = {}
    for fn in (root, *deps):
        for t in fn.inputs:
            if t.grad_fn is None and t.requires_grad and (t.hooks or t.acc_hooks()):
                counts[t] = counts.get(t, 0) + 1
    return counts


def _leaf_hook(t: Tensor, g, counts: dict, sums: dict):
    """A leaf with hooks: hold its gradients until the last arrives, then run its tensor
    hooks and its AccumulateGrad's pre-hooks on their sum (None until then)."""
    sums[t] = g if t not in sums else np.asarray(sums[t] + g)
    counts[t] -= 1
    if counts[t]:
        return None
    g = sums.pop(t)
    if t.hooks:
        g = run_hooks(t, g)
    return nodehooks.leaf_pre(t, g)


def _none_sent(t: Tensor, deps: dict, ready: list) -> None:
    """No gradient goes to ``t``: its node waits for one gradient less."""
    f = t.grad_fn
    if f is not None and f in deps:
        deps[f] -= 1
        if deps[f] == 0:
            ready.append(f)


def _skip(fn: Function, deps: dict, ready: list) -> None:
    """A node that receives no gradient (a hook returned None for it) sends none: the nodes
    after it wait for one gradient less."""
    for t in fn.inputs:
        if t.requires_grad:
            _none_sent(t, deps, ready)


def _vjp_event(fn: Function, i: int, gi) -> None:
    """A floating-point event in the VJP of ``fn`` for input i, as a warning."""
    FP_EVENTS.clear()
    out = fn.output
    where = out.label if out is not None and out.label else fn.name
    WARNINGS.append((fn.name, f"the gradient through {fn.name} ({where})"
                              f" for input {i} gives {describe(np.asarray(gi))}"))


def _node_grads(fn: Function, g, args: list, hooks) -> list:
    """What ``fn`` sends each input (None where it takes none), all at once: after its
    post-hooks (PyTorch hands them grad_inputs and grad_outputs and takes what they return
    instead), and in anomaly mode checked for nan as PyTorch's engine checks them."""
    sent: list = []
    for i, t in enumerate(fn.inputs):
        if not t.requires_grad:
            sent.append(None)
            continue
        gi = fn.op.vjp[i](g, fn.value, *args, **fn.kw)
        if gi is None:  # (a custom Function's backward gave None for it)
            sent.append(None)
            continue
        gi = np.asarray(gi)
        if FP_EVENTS:
            _vjp_event(fn, i, gi)
        if gi.shape != t.value.shape:
            gi = unbroadcast(gi, t.value.shape)
        sent.append(gi.astype(t.value.dtype, copy=False))
    if hooks is not None and hooks.post:
        sent = list(nodehooks.run_post(hooks, tuple(sent), (g,)))
    if nodehooks.ANOMALY[0] and nodehooks.ANOMALY[1]:
        for i, gi in enumerate(sent):
            if gi is not None and gi.dtype.kind in "fc" and np.isnan(gi).any():
                raise DdxRuntimeError(f"Function '{fn.name}' returned nan values in its {i}th "
                                      "output.")
    return sent


def propagate(root: Tensor, g0: np.ndarray, sink, *, retain_graph: bool = False,
              record: dict | None = None, retain_grads: bool = True,
              only: list[Tensor] | None = None) -> int:
    """The backward pass: send g0 from ``root`` through the graph; leaves' shares go to ``sink``
    (with ``only``: just the nodes on a path to those tensors run, and only their non-leaves'
    retained grads are written).

    Returns how many VJPs were evaluated."""
    if root.grad_fn is None:
        if root.requires_grad:
            g = run_hooks(root, g0) if root.hooks else g0
            if Tensor.hooked:
                g = nodehooks.leaf_pre(root, g)
            if g is not None:
                sink(root, g)
                if Tensor.hooked:
                    nodehooks.leaf_post(root, g)
        return 0
    deps = graph_order(root.grad_fn)
    if only is not None:
        deps = _toward(root.grad_fn, deps, only)
        if root.grad_fn not in deps:
            return 0
        del deps[root.grad_fn]
    if not Tensor.hooked:
        return _propagate(root, g0, sink, deps, None, retain_graph, record, retain_grads, only)
    leaf_hooks = _hooked_leaves(root.grad_fn, deps)
    nodehooks.TASKS.append((next(nodehooks.SERIALS), root.grad_fn, deps, leaf_hooks))
    try:
        return _propagate(root, g0, sink, deps, leaf_hooks, retain_graph, record, retain_grads,
                          only)
    finally:
        nodehooks.TASKS.pop()


def _toward(root: Function, deps: dict, targets: list[Tensor]) -> dict:
    """``deps`` (with the root, as a key of its own) narrowed to the nodes from which one of
    ``targets`` can be reached, counting only the edges between such nodes."""
    fns = {id(t.grad_fn) for t in targets if t.grad_fn is not None}
    leaves = {id(t) for t in targets if t.grad_fn is None}
    order, left = [root], dict(deps)  # (Kahn's order: every node after all its consumers)
    k = 0
    while k < len(order):
        for t in order[k].inputs:
            f = t.grad_fn
            if f is not None and t.requires_grad:
                left[f] -= 1
                if left[f] == 0:
                    order.append(f)
        k += 1
    toward: set = set()
    for fn in reversed(order):
        if id(fn) in fns or any(
                (id(t) in leaves if t.grad_fn is None else t.grad_fn in toward)
                for t in fn.inputs if t.requires_grad):
            toward.add(fn)
    narrowed: dict = {fn: 0 for fn in toward}
    for fn in toward:
        for t in fn.inputs:
            if t.grad_fn in toward and t.requires_grad:
                narrowed[t.grad_fn] += 1
    return narrowed


def _propagate(root: Tensor, g0, sink, deps: dict, leaf_hooks: dict | None,
               retain_graph: bool, record: dict | None, retain_grads: bool,
               only: list[Tensor] | None = None) -> int:
    leaf_sums: dict = {}
    pending: dict[Function, np.ndarray] = {root.grad_fn: g0}
    owned: set[int] = set()  # ids of pending sums created here, safe to add into in place
    ready = [root.grad_fn]
    count = 0
    while ready:
        fn = ready.pop()
        g = pending.pop(fn, None)
        if g is None:  # (a hook took every gradient away: its inputs get none from here)
            _skip(fn, deps, ready)
            continue
        out = fn.output
        if out is not None and out.hooks:
            g = run_hooks(out, g)
        if retain_grads and out is not None and out.retains_grad:
            _accumulate(out, g)
        hooks = fn.node_hooks
        if hooks is not None and hooks.pre:
            g = nodehooks.run_pre(hooks, (g,))[0]
            if g is None:
                _skip(fn, deps, ready)
                continue
        if fn.freed and fn.op.saves:  # (as PyTorch's: when the node runs, after its hooks)
            raise DdxRuntimeError(FREED_TEXT)
        if CHANGED:  # (something was changed in place: saved tensors may be stale)
            check_saved(fn)
        if hooks is not None and hooks.unpack:
            nodehooks.run_unpack(hooks)
        if record is not None:
            record[fn] = g
        inputs = fn.inputs
        args = [t.value.item() if t.weak else t.value for t in inputs]
        vjps = fn.op.vjp
        kw = fn.kw
        sent = None
        if hooks is not None and hooks.post or nodehooks.ANOMALY[0]:
            sent = _node_grads(fn, g, args, hooks)
            count += sum(gi is not None for gi in sent)
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                continue
            if only is not None and (t.grad_fn not in deps if t.grad_fn is not None
                                     else not any(t is u for u in only)):
                continue  # (this way leads to none of backward's inputs=)
            if sent is not None:
                gi = sent[i]
                if gi is None:  # (a post-hook's None too: the node after waits for one less)
                    _none_sent(t, deps, ready)
                    continue
            else:
                gi = vjps[i](g, fn.value, *args, **kw)
                if gi is None:  # (a custom Function's backward gave None: no gradient)
                    _none_sent(t, deps, ready)
                    continue
                count += 1
                if FP_EVENTS:
                    _vjp_event(fn, i, gi)
                if type(gi) is not np.ndarray:
                    gi = np.asarray(gi)
                value = t.value
                if gi.shape != value.shape:
                    gi = unbroadcast(gi, value.shape)
                if gi.dtype != value.dtype:
                    gi = gi.astype(value.dtype)
            f = t.grad_fn
            if f is None:
                if leaf_hooks and t in leaf_hooks:
                    gi = _leaf_hook(t, gi, leaf_hooks, leaf_sums)
                    if gi is None:
                        continue
                    sink(t, gi)
                    nodehooks.leaf_post(t, gi)
                else:
                    sink(t, gi)
                if FP_EVENTS:
                    _summed(t, t.grad if t.grad is not None else gi)
                continue
            if f not in pending:
                pending[f] = gi
            elif id(pending[f]) in owned and pending[f].shape == gi.shape:
                pending[f] += gi  # a sum this pass made itself: add in place
            else:
                pending[f] = np.asarray(pending[f] + gi)
                owned.add(id(pending[f]))
            if FP_EVENTS:
                _summed(t, pending[f])
            deps[f] -= 1
            if deps[f] == 0:
                ready.append(f)
        if not retain_graph:
            fn.freed = True
    return count
