"""The op table's comparison and selection rows: the comparisons (bool results that never
require grad), where, clamp and its one-sided forms, lerp and nan_to_num."""

from __future__ import annotations

import numpy as np

from .kernels_unary import kept
from .table import op

INF = float("inf")


def _none(g, o, *inputs, **kw):  # a comparison's rule: never run (its result needs no grad)
    return g * 0


# PyTorch's operator, its function names, and numpy's ufunc
_COMPARISONS = (("lt", "<", ("less",), np.less), ("le", "<=", ("less_equal",), np.less_equal),
                ("gt", ">", ("greater",), np.greater),
                ("ge", ">=", ("greater_equal",), np.greater_equal),
                ("eq", "==", (), np.equal), ("ne", "!=", ("not_equal",), np.not_equal))
for _name, _sym, _aliases, _fn in _COMPARISONS:
    op(_name, "", _fn, _none, _none, saves=False, reads="", call="compare", names=_aliases,
       text="{0} %s {1}" % _sym, prec=0, symbol=_sym, dtype="bool", differentiable=False,
       emit={"torch": "({0} %s {1})" % _sym, "jax": "({0} %s {1})" % _sym},
       example=(f"x {_sym} y", {}))


def _where_taken(g, o, c, a, b):
    return kept(g, c)


def _where_other(g, o, c, a, b):
    return kept(g, np.logical_not(c))


op("where", "WhereBackward0", lambda c, a, b: np.where(c, a, b), _none, _where_taken,
   _where_other, reads="i", call="where", elementwise=False,
   jvp=lambda ts, o, c, a, b: np.where(c, 0 if ts[1] is None else ts[1],
                                       0 if ts[2] is None else ts[2]),
   emit={"torch": "torch.where({0}, {1}, {2})", "jax": "jnp.where({0}, {1}, {2})"},
   example=("where(x > 0.5, x, y)", {}))


# --- clamp: bounds as plain numbers (keyword arguments) or as tensors (inputs) -------------
def clamp(a, min=None, max=None):
    """At a bound (-0.0 against 0, say) the input itself, as ATen's clamp with numbers gives
    (np.maximum and np.minimum give their second argument where the two are equal)."""
    out = a if min is None else np.maximum(min, a)
    return out if max is None else np.minimum(max, out)


def _inside(a, lo, hi):
    keep = np.ones(np.shape(a), dtype=bool)
    if lo is not None:
        keep = keep & (a >= lo)
    if hi is not None:
        keep = keep & (a <= hi)
    return keep


def _emit_clamp(args, t, lib):
    kw = t.kw
    lo, hi = kw.get("min"), kw.get("max")
    if lib == "torch":
        return f"torch.clamp({args[0]}, min={lo!r}, max={hi!r})"
    return f"jnp.clip({args[0]}, {lo!r}, {hi!r})"


op("clamp", "ClampBackward1", clamp,
   lambda g, o, a, min=None, max=None: kept(g, _inside(a, min, max)), reads="i", call="clamp",
   names=("clip",), emit={"torch": _emit_clamp, "jax": _emit_clamp},
   kink=(lambda a, min=None, max=None: (a == min) | (a == max),
         "at a bound PyTorch passes the gradient through (the bounds are inside)"),
   example=("clamp(x, -0.5, 1)", {}))
op("clamp_min", "ClampMinBackward0", lambda a, min: np.maximum(min, a),
   lambda g, o, a, min: kept(g, a >= min), reads="i", call="clamp",
   emit={"torch": "torch.clamp_min({0}, {min!r})", "jax": "jnp.maximum({0}, {min!r})"},
   kink=(lambda a, min: a == min, "at the bound PyTorch passes the gradient through"),
   example=("clamp_min(x, 0.5)", {}))
op("clamp_max", "ClampMaxBackward0", lambda a, max: np.minimum(max, a),
   lambda g, o, a, max: kept(g, a <= max), reads="i", call="clamp",
   emit={"torch": "torch.clamp_max({0}, {max!r})", "jax": "jnp.minimum({0}, {max!r})"},
   kink=(lambda a, max: a == max, "at the bound PyTorch passes the gradient through"),
   example=("clamp_max(x, 0.5)", {}))


def _clamp_tensor(a, lo, hi):
    return np.minimum(np.maximum(a, lo), hi)


op("clamp_tensor", "ClampBackward0", _clamp_tensor,
   lambda g, o, a, lo, hi: kept(g, (a >= lo) & (a <= hi)),
   lambda g, o, a, lo, hi: kept(g, a < lo),
   lambda g, o, a, lo, hi: kept(g, a > hi), reads="i", shown="clamp",
   symbol="clamp", emit={"torch": "torch.clamp({0}, {1}, {2})", "jax": "jnp.clip({0}, {1}, {2})"},
   example=("clamp(x, y - 1, y + 1)", {}))
op("clamp_min_tensor", "ClampMinBackward1", np.maximum,
   lambda g, o, a, lo: np.where(a >= lo, g, 0 * g),
   lambda g, o, a, lo: np.where(a < lo, g, 0 * g), reads="i", shown="clamp_min",
   symbol="clamp_min", emit={"torch": "torch.clamp_min({0}, {1})", "jax": "jnp.maximum({0}, {1})"},
   example=("clamp_min(x, y)", {}))
op("clamp_max_tensor", "ClampMaxBackward1", np.minimum,
   lambda g, o, a, hi: np.where(a <= hi, g, 0 * g),
   lambda g, o, a, hi: np.where(a > hi, g, 0 * g), reads="i", shown="clamp_max",
   symbol="clamp_max", emit={"torch": "torch.clamp_max({0}, {1})", "jax": "jnp.minimum({0}, {1})"},
   example=("clamp_max(x, y)", {}))

# --- lerp: start + weight * (end - start) ------------------------------------------------
op("lerp", "LerpBackward0", lambda a, b, *, weight: a + weight * (b - a),
   lambda g, o, a, b, *, weight: g * (1 - weight), lambda g, o, a, b, *, weight: g * weight,
   reads="i", call="lerp",
   emit={"torch": "torch.lerp({0}, {1}, {weight!r})",
         "jax": "({0} + {weight!r} * ({1} - {0}))"},
   example=("lerp(x, y, 0.25)", {}))
op("lerp_tensor", "LerpBackward1", lambda a, b, w: a + w * (b - a),
   lambda g, o, a, b, w: g * (1 - w), lambda g, o, a, b, w: g * w,
   lambda g, o, a, b, w: g * (b - a), reads="i", shown="lerp", symbol="lerp",
   emit={"torch": "torch.lerp({0}, {1}, {2})", "jax": "({0} + {2} * ({1} - {0}))"},
   example=("lerp(x, y, x * y)", {}))


def nan_to_num(a, nan=0.0, posinf=None, neginf=None):
    info = np.finfo(a.dtype if np.asarray(a).dtype.kind == "f" else np.float64)
    return np.nan_to_num(a, nan=nan, posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


op("nan_to_num", "NanToNumBackward0", nan_to_num,
   lambda g, o, a, **kw: np.where(np.isfinite(a), g, 0 * g), reads="i", call="unary",
   params={"nan": 0.0, "posinf": None, "neginf": None},
   emit={"torch": "torch.nan_to_num({0})", "jax": "jnp.nan_to_num({0})"})


# --- advanced indexing: x[[0, 2]], x[idx], x[mask] (IndexBackward0) -----------------------
# The key is kept hashable: per dimension None (all of it) or (shape, flat indices).
def index_key(key: tuple) -> tuple:
    return tuple(slice(None) if k is None else np.asarray(k[1], dtype=np.intp).reshape(k[0])
                 for k in key)


def _index(a, *, key):
    return a[index_key(key)]


def _index_vjp(g, o, a, *, key):
    """Every picked element's gradient added back where it came from (a repeated index
    accumulates). Plain arrays: np.add.at; dual or symbolic numbers: a 0/1 matrix product."""
    k = index_key(key)
    if type(g) is np.ndarray:
        out = np.zeros(np.shape(a), dtype=g.dtype)
        np.add.at(out, k, g)
        return out
    n = int(np.prod(np.shape(a), dtype=np.int64))
    where = np.arange(n).reshape(np.shape(a))[k].reshape(-1)
    pick = np.zeros((n, where.size))
    pick[where, np.arange(where.size)] = 1.0
    return np.reshape(pick @ np.reshape(g, -1), np.shape(a))


def _emit_index(args, t, lib):
    parts = []
    for k in t.kw["key"]:
        if k is None:
            parts.append(":")
        else:
            shown = np.asarray(k[1]).reshape(k[0]).tolist()
            parts.append(f"torch.tensor({shown})" if lib == "torch" else f"jnp.array({shown})")
    return f"{args[0]}[{', '.join(parts)}]"


op("index", "IndexBackward0", _index, _index_vjp, elementwise=False, reads="",
   jvp=lambda ts, o, a, *, key: np.broadcast_to(ts[0], np.shape(a))[index_key(key)],
   saves=False, symbol="[idx]", emit={"torch": _emit_index, "jax": _emit_index},
   example=("x[[0, 2, 0]]", {"x": (3,)}))


# x[:, :] (every part a whole dimension): PyTorch records an alias of x
op("alias", "AliasBackward0", lambda a: a, lambda g, o, a: g, jvp=lambda ts, o, a: ts[0],
   saves=False, reads="", elementwise=False, symbol="[:]",
   emit={"torch": "{0}[...]", "jax": "{0}"}, example=("x[:, :]", {"x": (2, 3)}))
