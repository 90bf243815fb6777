"""What --emit torch / --emit jax write for the reduction rows (ddx/ops/rows_reduce.py), and
their kink tests."""

from __future__ import annotations

import math

import numpy as np


# --- emitted code --------------------------------------------------------------------------------
def _tail(kw: dict, lib: str, params: tuple = ()) -> str:
    parts = []
    for key in params:
        if key in kw:
            parts.append(f"{key}={kw[key]!r}")
    dim = kw.get("dim")
    if dim is not None:
        parts.append(f"{'dim' if lib == 'torch' else 'axis'}={dim!r}")
    if kw.get("keepdim"):
        parts.append("keepdim=True" if lib == "torch" else "keepdims=True")
    return "".join(", " + p for p in parts)


def emit_reduction(torch_name: str, jax_name: str):
    """torch.X(x, dim=..., keepdim=True) / jnp.X(x, axis=..., keepdims=True)."""
    def emit(args, t, lib):
        name = torch_name if lib == "torch" else jax_name
        return f"{name}({args[0]}{_tail(t.kw, lib)})"
    return emit


def emit_extreme(name: str):
    """max/min: the values of torch.max(x, dim) (its .values), jnp.max(x, axis)."""
    def emit(args, t, lib):
        dim = t.kw.get("dim")
        if lib == "torch":
            if dim is None:
                return f"torch.{name}({args[0]})"
            keep = ", keepdim=True" if t.kw.get("keepdim") else ""
            return f"torch.{name}({args[0]}, dim={dim}{keep}).values"
        return f"jnp.{name}({args[0]}{_tail(t.kw, lib)})"
    return emit


def emit_var(name: str):
    def emit(args, t, lib):
        c = t.kw.get("correction", 1.0)
        if lib == "torch":
            return f"torch.{name}({args[0]}{_tail(t.kw, lib)}, correction={c!r})"
        return f"jnp.{name}({args[0]}{_tail(t.kw, lib)}, ddof={c!r})"
    return emit


def _number(v: float) -> str:
    """A float as Python source: inf is float('inf')."""
    return repr(v) if math.isfinite(v) else f"float('{v!r}')"


def emit_norm(args, t, lib):
    p = t.kw.get("p", 2.0)
    if lib == "torch":
        return f"torch.linalg.vector_norm({args[0]}, ord={_number(p)}{_tail(t.kw, lib, ())})"
    a = args[0]
    dim = t.kw.get("dim")
    axis = f", axis={dim!r}" if dim is not None else ""
    keep = ", keepdims=True" if t.kw.get("keepdim") else ""
    if p == 2:  # (jnp.linalg.norm's gradient at 0 is nan; PyTorch's is 0)
        return f"jnp.sqrt(jnp.sum({a} * {a}{axis}{keep}))"
    if p == 1:
        return f"jnp.sum(jnp.abs({a}){axis}{keep})"
    if p == math.inf:
        return f"jnp.max(jnp.abs({a}){axis}{keep})"
    if p == -math.inf:
        return f"jnp.min(jnp.abs({a}){axis}{keep})"
    if p == 0:
        return f"jnp.sum(({a} != 0).astype({a}.dtype){axis}{keep})"
    return f"(jnp.sum(jnp.abs({a}) ** {p!r}{axis}{keep}) ** {1 / p!r})"


def emit_logsumexp(args, t, lib):
    dim = t.kw.get("dim")
    keep = t.kw.get("keepdim", False)
    if lib == "torch":
        d = dim if dim is not None else f"tuple(range({args[0]}.dim()))"
        return f"torch.logsumexp({args[0]}, dim={d}, keepdim={keep})"
    axis = f", axis={dim!r}" if dim is not None else ""
    return f"jax.scipy.special.logsumexp({args[0]}{axis}, keepdims={keep})"


def emit_cumulative(name: str):
    def emit(args, t, lib):
        dim = t.kw.get("dim", 0)
        if lib == "torch":
            return f"torch.{name}({args[0]}, dim={dim})"
        return f"jnp.{name}({args[0]}, axis={dim})" if t.value.ndim else args[0]
    return emit


def emit_index(name: str):
    """argmax/argmin: torch.argmax(x, dim, keepdim) / jnp.argmax(x, axis, keepdims)."""
    def emit(args, t, lib):
        dim = t.kw.get("dim")
        keep = t.kw.get("keepdim", False)
        if lib == "torch":
            return f"torch.{name}({args[0]}, dim={dim!r}, keepdim={keep})"
        return f"jnp.{name}({args[0]}, axis={dim!r}, keepdims={keep})"
    return emit


# --- kinks ---------------------------------------------------------------------------------------
def at_reduced_tie(a, dim=None, keepdim=False, **kw):
    a = np.asarray(a)
    top = np.max(a, axis=dim, keepdims=True)
    return np.count_nonzero(a == top, axis=dim) > 1
