"""The op table's rows for orderings and tests (one op(...) call per op; see ddx/ops/table.py
for a row's fields): sort, topk, median, mode, aminmax, var_mean/std_mean, and the ones
without a gradient (argsort, isnan/isinf/isfinite, count_nonzero, nonzero, searchsorted,
bucketize, bincount, histc). Their callers are in ddx/graph/calls_more.py; they are called
by name through it (Op.call None), since most return PyTorch's named tuples."""

from __future__ import annotations

import numpy as np

from .emit_reduce import emit_reduction
from .kernels_count import (
    bincount,
    bincount_jvp,
    bincount_weighted,
    bincount_weights_vjp,
    bucketize,
    count_nonzero,
    histc,
    nonzero,
    searchsorted,
    unique,
    unique_counts,
    unique_inverse,
    unique_jvp,
    unique_vjp,
)
from .kernels_extreme import amax, amin
from .kernels_more import (
    chosen,
    chosen_index,
    chosen_jvp,
    chosen_vjp,
    median_all,
    median_all_jvp,
    median_all_vjp,
    no_gradient_of,
    no_tangent,
    share_jvp,
    share_vjp,
    sort_jvp,
    sort_order,
    sort_values,
    sort_vjp,
    topk_jvp,
    topk_order,
    topk_values,
    topk_vjp,
)
from .kernels_reduce import (
    average,
    average_vjp,
    no_gradient,
    reduce_linear,
)
from .kernels_var import (
    deviation,
    deviation_jvp,
    deviation_vjp,
    variance,
    variance_jvp,
    variance_vjp,
)
from .table import op

_MATRIX = {"x": (2, 3)}
_PICK = dict(elementwise=False, reads="i")
_VALUE = dict(saves=False, elementwise=False, reads="", differentiable=False, jvp=no_tangent)


def _kwargs(t, names: tuple, lib: str = "torch") -> str:
    """", dim=1, keepdim=True" for the keyword arguments of a node that were given."""
    parts = []
    for key in names:
        if key in t.kw and t.kw[key] is not None:
            parts.append(f"{key}={t.kw[key]!r}")
    return "".join(", " + p for p in parts)


def _jax_axis(t) -> str:
    return f", axis={t.kw['dim']}" if t.kw.get("dim") is not None else ""


def _keep(t, text: str) -> str:
    """A jnp result along axis dim, given back its size-1 dim when keepdim."""
    return f"jnp.expand_dims({text}, {t.kw['dim']})" if t.kw.get("keepdim") else text


# --- orderings: the picked values carry the gradient, their indices do not ---------------------
def _emit_sort(args, t, lib):
    if lib == "torch":
        return f"torch.sort({args[0]}{_kwargs(t, ('dim', 'descending', 'stable'))}).values"
    return (f"jnp.sort({args[0]}, axis={t.kw.get('dim', -1)}, stable=True, "
            f"descending={bool(t.kw.get('descending'))})")


op("sort", "SortBackward0", sort_values, sort_vjp, jvp=sort_jvp, **_PICK,
   variants={"stable": "SortBackward1"},
   kink=(lambda a, **kw: np.asarray(False), "tied values: the gradient follows the stable order"),
   emit={"torch": _emit_sort, "jax": _emit_sort},
   example=("sort(x, dim=1, descending=True)[0]", _MATRIX))


def _emit_topk(args, t, lib):
    k, dim, largest = t.kw["k"], t.kw.get("dim", -1), t.kw.get("largest", True)
    if lib == "torch":
        ordered = t.kw.get("sorted", True)
        return f"torch.topk({args[0]}, {k}, dim={dim}, largest={largest}, sorted={ordered}).values"
    return (f"jnp.take(jnp.sort({args[0]}, axis={dim}, stable=True, descending={largest}), "
            f"jnp.arange({k}), axis={dim})")


op("topk", "TopkBackward0", topk_values, topk_vjp, jvp=topk_jvp, **_PICK,
   emit={"torch": _emit_topk, "jax": _emit_topk},
   example=("topk(x, 2)[0]", _MATRIX))


def _emit_median_all(args, t, lib):
    if lib == "torch":
        return f"torch.median({args[0]})"
    n = t.inputs[0].value.size
    return f"jnp.sort(jnp.ravel({args[0]}))[{(n - 1) // 2}]"


op("median_all", "MedianBackward0", median_all, median_all_vjp, jvp=median_all_jvp,
   elementwise=False,
   shown="median", emit={"torch": _emit_median_all, "jax": _emit_median_all},
   example=("median(x)", _MATRIX))


def _emit_chosen(args, t, lib):
    how, dim = t.kw["how"], t.kw["dim"]
    keep = ", keepdim=True" if t.kw.get("keepdim") else ""
    if lib == "torch":
        return f"torch.{how}({args[0]}, {dim}{keep}).values"
    # (jnp has no mode: the indices this trace picked, as constants)
    index = np.asarray(chosen_index(t.inputs[0].value, how=how, dim=dim, keepdim=True)).tolist()
    picked = f"jnp.take_along_axis({args[0]}, jnp.array({index!r}), axis={dim})"
    return picked if t.kw.get("keepdim") else f"jnp.squeeze({picked}, {dim})"


op("median_dim", "MedianBackward1", chosen, chosen_vjp, jvp=chosen_jvp, **_PICK,
   shown="median", emit={"torch": _emit_chosen, "jax": _emit_chosen},
   example=("median(x, 1)[0]", _MATRIX))
op("mode", "ModeBackward0", chosen, chosen_vjp, jvp=chosen_jvp, **_PICK,
   emit={"torch": _emit_chosen, "jax": _emit_chosen},
   example=("mode(x, 0, keepdim=True)[0]", _MATRIX))
# the indices of median(dim) and mode, and of sort and topk
op("chosen_index", "", chosen_index, no_gradient, **_VALUE, dtype="int64", shown="indices",
   emit={"torch": lambda args, t, lib: f"torch.{t.kw['how']}({args[0]}, {t.kw['dim']}"
                                        f"{', keepdim=True' if t.kw.get('keepdim') else ''})"
                                        ".indices"},
   example=("median(x, 1)[1]", _MATRIX))
op("argsort", "", sort_order, no_gradient, **_VALUE, dtype="int64",
   emit={"torch": lambda args, t, lib: f"torch.argsort({args[0]}"
                                        f"{_kwargs(t, ('dim', 'descending', 'stable'))})",
         "jax": lambda args, t, lib: f"jnp.argsort({args[0]}, axis={t.kw.get('dim', -1)}, "
                                      f"stable=True, descending={bool(t.kw.get('descending'))})"},
   example=("argsort(x, dim=0, descending=True)", _MATRIX))
op("topk_index", "", topk_order, no_gradient, **_VALUE, dtype="int64", shown="indices",
   emit={"torch": lambda args, t, lib: f"torch.topk({args[0]}, {t.kw['k']}"
                                        f"{_kwargs(t, ('dim', 'largest', 'sorted'))}).indices"},
   example=("topk(x, 2, largest=False)[1]", _MATRIX))


# --- aminmax, var_mean, std_mean: two results of one PyTorch node -------------------------------
def _emit_pair(torch_name, field, jax_name, params=("dim", "keepdim")):
    def emit(args, t, lib):
        if lib == "torch":
            extra = f", correction={t.kw['correction']!r}" if "correction" in t.kw else ""
            return f"torch.{torch_name}({args[0]}{_kwargs(t, params)}{extra})[{field}]"
        ddof = f", ddof={t.kw.get('correction', 1.0)!r}" if jax_name in ("var", "std") else ""
        keep = ", keepdims=True" if t.kw.get("keepdim") else ""
        return f"jnp.{jax_name}({args[0]}{_jax_axis(t)}{keep}{ddof})"
    return emit


op("aminmax_min", "AminmaxBackward0", amin, share_vjp, jvp=share_jvp, elementwise=False,
   shown="aminmax", emit={"torch": _emit_pair("aminmax", 0, "min"),
                          "jax": _emit_pair("aminmax", 0, "min")},
   example=("aminmax(x, dim=1)[0]", _MATRIX))
op("aminmax_max", "AminmaxBackward0", amax, share_vjp, jvp=share_jvp, elementwise=False,
   shown="aminmax", emit={"torch": _emit_pair("aminmax", 1, "max"),
                          "jax": _emit_pair("aminmax", 1, "max")},
   example=("aminmax(x)[1]", _MATRIX))
for _name, _spread, _vjp, _jvp in (("var", variance, variance_vjp, variance_jvp),
                                   ("std", deviation, deviation_vjp, deviation_jvp)):
    _grad_fn = f"{_name.capitalize()}MeanBackward0"
    op(f"{_name}_mean_{_name}", _grad_fn, _spread, _vjp, jvp=_jvp, elementwise=False,
       reads="i" if _name == "var" else "io", shown=f"{_name}_mean",
       emit={"torch": _emit_pair(f"{_name}_mean", 0, _name),
             "jax": _emit_pair(f"{_name}_mean", 0, _name)},
       example=(f"{_name}_mean(x, 1)[0]", _MATRIX))
    op(f"{_name}_mean_mean", _grad_fn, average, average_vjp, jvp=reduce_linear(average),
       saves=False, elementwise=False, reads="", shown=f"{_name}_mean",
       emit={"torch": _emit_pair(f"{_name}_mean", 1, "mean"),
             "jax": _emit_pair(f"{_name}_mean", 1, "mean")},
       example=(f"{_name}_mean(x, dim=0, keepdim=True)[1]", _MATRIX))


# --- tests and counts: no gradient ---------------------------------------------------------------
for _name in ("isnan", "isinf", "isfinite"):
    _fn = getattr(np, _name)
    op(_name, "", lambda a, _fn=_fn: _fn(a), no_gradient, **_VALUE, dtype="bool",
       emit={"torch": f"torch.{_name}({{0}})", "jax": f"jnp.{_name}({{0}})"},
       example=(f"{_name}(x)", {}))
op("count_nonzero", "", count_nonzero, no_gradient, **_VALUE, dtype="int64",
   emit={"torch": emit_reduction("torch.count_nonzero", "jnp.count_nonzero"),
         "jax": emit_reduction("torch.count_nonzero", "jnp.count_nonzero")},
   example=("count_nonzero(x > 0.5, 1)", _MATRIX))
op("nonzero", "", nonzero, no_gradient, **_VALUE, dtype="int64",
   emit={"torch": "torch.nonzero({0})", "jax": "jnp.argwhere({0})"},
   example=("nonzero(x)", _MATRIX))
op("searchsorted", "", searchsorted, no_gradient_of(0), no_gradient_of(1), **_VALUE, dtype="int64",
   emit={"torch": lambda args, t, lib: f"torch.searchsorted({args[0]}, {args[1]}"
                                        f"{_kwargs(t, ('right',))})"},
   example=("searchsorted(sort(x)[0], y)", {"x": (5,), "y": (2, 3)}))
op("bucketize", "", bucketize, no_gradient_of(0), no_gradient_of(1), **_VALUE, dtype="int64",
   emit={"torch": lambda args, t, lib: f"torch.bucketize({args[0]}, {args[1]}"
                                        f"{_kwargs(t, ('right',))})"},
   example=("bucketize(x, sort(y)[0], right=True)", {"x": (2, 3), "y": (4,)}))
op("bincount", "", bincount, no_gradient, **_VALUE, dtype="int64",
   emit={"torch": lambda args, t, lib: f"torch.bincount({args[0]}"
                                        f"{_kwargs(t, ('minlength',))})"},
   example=("bincount(argsort(x), minlength=5)", {"x": (3,)}))
op("bincount_weighted", "", bincount_weighted, no_gradient_of(0), bincount_weights_vjp,
   **dict(_VALUE, jvp=bincount_jvp, reads="i"), shown="bincount",
   emit={"torch": lambda args, t, lib: f"torch.bincount({args[0]}, {args[1]}"
                                        f"{_kwargs(t, ('minlength',))})"},
   example=("bincount(argsort(x), y)", {"x": (3,), "y": (3,)}))
op("histc", "", histc, no_gradient, **_VALUE,
   emit={"torch": lambda args, t, lib: f"torch.histc({args[0]}"
                                        f"{_kwargs(t, ('bins', 'min', 'max'))})"},
   example=("histc(x, bins=4, min=-1, max=1)", {"x": (9,)}))
for _name, _fn, _dtype in (("unique", unique, "same"), ("unique_inverse", unique_inverse, "int64"),
                           ("unique_counts", unique_counts, "int64")):
    _part = {"unique": "[0]", "unique_inverse": "[1]", "unique_counts": "[2]"}[_name]
    _rules = dict(jvp=unique_jvp, reads="i") if _name == "unique" else {}
    op(_name, "", _fn, unique_vjp if _name == "unique" else no_gradient,
       **dict(_VALUE, **_rules), dtype=_dtype, shown="unique",
       emit={"torch": lambda args, t, lib, _part=_part:
             f"torch.unique({args[0]}, return_inverse=True, return_counts=True"
             f"{_kwargs(t, ('dim',))}){_part}"},
       example=(f"unique(x, return_inverse=True, return_counts=True){_part}", _MATRIX))
