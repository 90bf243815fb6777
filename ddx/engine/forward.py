"""Forward mode (one JVP pass per input direction) and central finite differences, over the same
recorded graph and op table as reverse mode; also full Jacobians both ways."""

from __future__ import annotations

import numpy as np

from ..errors import DdxUsageError
from ..graph.record import ancestors
from ..graph.tensor import Tensor
from ..limits import limit
from ..ops import OPS
from .reverse import vjp

MAX_DIRECTIONS = limit("DDX_MAX_DIRECTIONS")  # (read when this module is first imported)


def _args(t: Tensor) -> list:
    return [s.value.item() if s.weak else s.value for s in t.inputs]


def jvp_pass(order: list[Tensor], seeds: dict[int, np.ndarray]) -> tuple[dict, int]:
    """Push tangents from the seeded leaves through ``order``; (tangent by id, ops evaluated)."""
    tangents: dict[int, np.ndarray] = {}
    ops = 0
    for t in order:
        if not t.inputs:
            if id(t) in seeds:
                tangents[id(t)] = seeds[id(t)]
            continue
        if not t.requires_grad:
            continue
        row = OPS.get(t.op) or t.grad_fn.op  # (a custom Function's node: its own row)
        r = row.tangent([tangents.get(id(s)) for s in t.inputs], t.value, *_args(t), **t.kw)
        if r is None:
            continue
        tangents[id(t)] = np.broadcast_to(np.asarray(r, dtype=t.value.dtype), t.value.shape)
        ops += 1
    return tangents, ops


def replay(order: list[Tensor], overrides: dict[int, np.ndarray]) -> np.ndarray:
    """Re-evaluate the recorded computation with some leaf values replaced."""
    values: dict[int, object] = {}
    for t in order:
        if not t.inputs:
            v = overrides.get(id(t), t.value)
            values[id(t)] = v.item() if t.weak else v
            continue
        args = [values[id(s)] for s in t.inputs]
        values[id(t)] = np.asarray(OPS[t.op].fn(*args, **t.kw))
    return np.asarray(values[id(order[-1])])


def _directions(leaves: dict[str, Tensor], what: str) -> int:
    n = sum(t.value.size for t in leaves.values())
    if n > MAX_DIRECTIONS:
        raise DdxUsageError(f"{what} needs one pass per input element: {n} here, over the limit "
                            f"of {MAX_DIRECTIONS} (DDX_MAX_DIRECTIONS)",
                            hint="use it on smaller inputs, or --wrt; the environment variable "
                                 "DDX_MAX_DIRECTIONS raises the limit")
    return n


def forward_gradients(output: Tensor, leaves: dict[str, Tensor],
                      grad_output: np.ndarray) -> tuple[dict[str, np.ndarray], dict]:
    """<grad_output, d output/d leaf> by forward mode: one JVP pass per leaf element."""
    _directions(leaves, "--forward")
    order = ancestors(output)
    grads: dict[str, np.ndarray] = {}
    passes = ops = 0
    for name, leaf in leaves.items():
        g = np.zeros(leaf.value.shape, dtype=leaf.value.dtype)
        flat = g.reshape(-1)
        for j in range(leaf.value.size):
            seed = np.zeros(leaf.value.shape, dtype=leaf.value.dtype)
            seed.reshape(-1)[j] = 1
            tangents, n = jvp_pass(order, {id(leaf): seed})
            passes += 1
            ops += n
            t_out = tangents.get(id(output))
            flat[j] = 0 if t_out is None else np.sum(grad_output * t_out)
        grads[name] = g
    return grads, {"passes": passes, "ops": ops}


def op_count(output: Tensor) -> int:
    return sum(1 for t in ancestors(output) if t.inputs and t.requires_grad)


def step_for(dtype: np.dtype) -> float:
    """Central differences: error ~ h^2 + eps/h, smallest near h = eps^(1/3)."""
    return 1e-3 if np.dtype(dtype) == np.float32 else 1e-6


def finite_differences(output: Tensor, leaves: dict[str, Tensor], grad_output: np.ndarray,
                       *, step: float | None = None) -> tuple[dict[str, np.ndarray], float]:
    """<grad_output, d output/d leaf> by central differences, step scaled by max(1, |x|)."""
    _directions(leaves, "--check")
    order = ancestors(output)
    h = step or step_for(output.value.dtype)
    grads: dict[str, np.ndarray] = {}
    for name, leaf in leaves.items():
        base = leaf.value.astype(np.float64)
        g = np.zeros(base.shape)
        for j in range(base.size):
            x = base.reshape(-1)[j]
            hj = h * max(1.0, abs(x))
            up = base.copy()
            up.reshape(-1)[j] = x + hj
            down = base.copy()
            down.reshape(-1)[j] = x - hj
            cast = leaf.value.dtype
            f_up = replay(order, {id(leaf): up.astype(cast)})
            f_down = replay(order, {id(leaf): down.astype(cast)})
            g.reshape(-1)[j] = np.sum(grad_output * (f_up.astype(np.float64) -
                                                     f_down.astype(np.float64))) / (2 * hj)
        grads[name] = g
    return grads, h


def compare(a: dict[str, np.ndarray | None], b: dict[str, np.ndarray]) -> tuple[float, float]:
    """Largest absolute and relative difference over all leaves (nan if any side is nan)."""
    max_abs = max_rel = 0.0
    for name, bv in b.items():
        av = a.get(name)
        av = np.zeros_like(bv) if av is None else np.asarray(av, dtype=np.float64)
        bv = np.asarray(bv, dtype=np.float64)
        with np.errstate(all="ignore"):
            diff = np.abs(av - bv)
            rel = diff / np.maximum(np.abs(bv), np.abs(av)).clip(min=1e-300)
            rel = np.where(diff == 0, 0.0, rel)
        if diff.size:  # (np.max, not max(): a nan must win, not lose every comparison)
            max_abs = float(np.max([max_abs, np.max(diff)]))
            max_rel = float(np.max([max_rel, np.max(rel)]))
    return max_abs, max_rel


def jacobians(output: Tensor, leaves: dict[str, Tensor]) -> dict:
    """The full Jacobian d output/d leaf, by reverse mode (a pass per output element) and by
    forward mode (a pass per input element), with what each cost."""
    n_in = _directions(leaves, "--jacobian")
    n_out = output.value.size
    if n_out > MAX_DIRECTIONS:
        raise DdxUsageError(f"--jacobian: the output has {n_out} elements, over the limit of "
                            f"{MAX_DIRECTIONS} (DDX_MAX_DIRECTIONS)")
    order = ancestors(output)
    rev = {name: np.zeros(output.value.shape + t.value.shape) for name, t in leaves.items()}
    rev_ops = 0
    n_ops = op_count(output)
    for i in range(n_out):
        g0 = np.zeros(output.value.shape, dtype=output.value.dtype)
        g0.reshape(-1)[i] = 1
        got = vjp(output, g0)
        rev_ops += n_ops
        for name, t in leaves.items():
            if id(t) in got:
                rev[name].reshape((n_out,) + t.value.shape)[i] = got[id(t)]
    fwd = {name: np.zeros(output.value.shape + t.value.shape) for name, t in leaves.items()}
    fwd_ops = 0
    for name, leaf in leaves.items():
        view = fwd[name].reshape((n_out, leaf.value.size))
        for j in range(leaf.value.size):
            seed = np.zeros(leaf.value.shape, dtype=leaf.value.dtype)
            seed.reshape(-1)[j] = 1
            tangents, n = jvp_pass(order, {id(leaf): seed})
            fwd_ops += n
            t_out = tangents.get(id(output))
            if t_out is not None:
                view[:, j] = np.asarray(t_out).reshape(-1)
    return {"reverse": rev, "forward": fwd,
            "cost": {"reverse": {"passes": n_out, "ops": rev_ops + n_ops},
                     "forward": {"passes": n_in, "ops": fwd_ops}},
            "difference": compare(rev, fwd)}
