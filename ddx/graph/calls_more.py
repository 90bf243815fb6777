"""Callers for ddx/ops/rows_more.py (see ddx/graph/args.py for what a caller is): sort,
argsort, topk, median, mode, aminmax, var_mean, std_mean with PyTorch's named results, and
the tests and counts (isnan, count_nonzero, nonzero, searchsorted, bucketize, bincount, histc)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..lang.tree import Ast
from .args import Evaluating, bind, number, truth_arg
from .calls_loss import aliased
from .calls_reduce import dim_arg, int_dim, reduced_input, spread_args
from .calls_shape import dim_of, fail, int_of, tensor_arg
from .tensor import Tensor
from .values import ReturnTypes


def _dim(ev: Evaluating, node: Ast, a: Tensor, value: Any, default: int | None = -1) -> int:
    """One ``dim`` (default the last); a 0-d tensor's is 0."""
    if isinstance(value, (tuple, list)):
        raise DdxTypeError(f"{node.value}(): argument 'dim' must be int, not "
                           f"{type(value).__name__}", start=node.pos, end=node.end)
    return dim_of(ev, node, default if value is None else value, a.value.ndim)


def _flag(node: Ast, given: dict, key: str, default: bool) -> bool:
    return truth_arg(node, key, given[key]) if given.get(key) is not None else default


def _sorted_kw(a: Tensor, dim: int, descending: bool) -> dict:
    """The kernels' keywords (the order is stable either way, as PyTorch's CPU sort's)."""
    kw = {"dim": dim}
    if descending:
        kw["descending"] = True
    return kw


def call_sort(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
    """sort(input, dim=-1, descending=False, stable=False): (values, indices); the order is
    always stable, as PyTorch's CPU sort is."""
    given = bind(node, args, aliased(node, kw), ("input", "dim", "descending", "stable"))
    a = reduced_input(ev, node, given["input"])
    dim = _dim(ev, node, a, given.get("dim"))
    skw = _sorted_kw(a, dim, _flag(node, given, "descending", False))
    if given.get("stable") is not None:  # (the overload with stable: SortBackward1)
        skw["stable"] = _flag(node, given, "stable", False)
    return ReturnTypes("sort", ("values", "indices"),
                       (ev.op("sort", node, [a], skw), ev.op("argsort", node, [a], skw)))


def call_argsort(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "descending", "stable"))
    a = reduced_input(ev, node, given["input"])
    dim = _dim(ev, node, a, given.get("dim"))
    _flag(node, given, "stable", False)
    return ev.op("argsort", node, [a], _sorted_kw(a, dim, _flag(node, given, "descending",
                                                                 False)))


def call_topk(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
    """topk(input, k, dim=-1, largest=True, sorted=True): (values, indices)."""
    given = bind(node, args, aliased(node, kw), ("input", "k", "dim", "largest", "sorted"),
                 required=2)
    a = reduced_input(ev, node, given["input"])
    k = int_of(ev, node, given["k"])
    dim = _dim(ev, node, a, given.get("dim"))
    size = a.shape[dim] if a.value.ndim else 1
    if not 0 <= k <= size:
        raise fail(node, "selected index k out of range")
    tkw = {"k": k, "dim": dim}
    if not _flag(node, given, "largest", True):
        tkw["largest"] = False
    if not _flag(node, given, "sorted", True):
        tkw["sorted"] = False
    return ReturnTypes("topk", ("values", "indices"),
                       (ev.op("topk", node, [a], tkw), ev.op("topk_index", node, [a], tkw)))


def _chosen(ev: Evaluating, node: Ast, a: Tensor, how: str, dim: int, keepdim: bool):
    if a.value.ndim and a.shape[dim] == 0:
        raise fail(node, f"{how}(): Expected reduction dim {dim} to have non-zero size.")
    ckw = {"how": how, "dim": dim}
    if keepdim:
        ckw["keepdim"] = True
    row = "median_dim" if how == "median" else "mode"
    return ReturnTypes(how, ("values", "indices"),
                       (ev.op(row, node, [a], ckw), ev.op("chosen_index", node, [a], ckw)))


def call_median(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    """median(input): the lower median; median(input, dim, keepdim=False): (values, indices)."""
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim"))
    a = reduced_input(ev, node, given["input"])
    if given.get("dim") is None:
        if "keepdim" in given:
            raise fail(node, "median(): keepdim needs a dim", DdxTypeError)
        if a.value.size == 0:
            raise fail(node, "median() input tensor cannot be empty")
        return ev.op("median_all", node, [a])
    return _chosen(ev, node, a, "median", _dim(ev, node, a, given["dim"]),
                   _flag(node, given, "keepdim", False))


def call_mode(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim"))
    a = reduced_input(ev, node, given["input"])
    return _chosen(ev, node, a, "mode", _dim(ev, node, a, given.get("dim")),
                   _flag(node, given, "keepdim", False))


def call_aminmax(ev: Evaluating, node: Ast, args: list, kw: dict) -> ReturnTypes:
    """aminmax(input, *, dim=None, keepdim=False): (min, max)."""
    given = bind(node, args, aliased(node, kw), ("input", "dim", "keepdim"))
    a = reduced_input(ev, node, given["input"])
    dim = int_dim(ev, node, a, given.get("dim"))
    keepdim = _flag(node, given, "keepdim", False)
    if a.value.size == 0 and dim is None:
        raise fail(node, "aminmax(): cannot compute aminmax over an empty dimension as the "
                         "operation has no identity.")
    if dim is not None and a.value.ndim and a.shape[dim] == 0:
        raise fail(node, f"aminmax(): Expected reduction dim {dim} to have non-zero size.")
    akw: dict = {}
    if dim is not None and a.value.ndim:
        akw["dim"] = dim
    if keepdim:
        akw["keepdim"] = True
    if dim is None and keepdim and a.value.ndim:
        akw["dim"] = tuple(range(a.value.ndim))
    return ReturnTypes("aminmax", ("min", "max"), (ev.op("aminmax_min", node, [a], akw),
                                                   ev.op("aminmax_max", node, [a], akw)))


def _with_mean(name: str):
    """var_mean/std_mean(input, dim=None, *, correction=1, keepdim=False) (and unbiased):
    a plain tuple (spread, mean)."""
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> tuple:
        a, dim, keepdim, correction = spread_args(ev, node, args, kw, f"{name}_mean")
        base: dict = {}
        if dim is not None:
            base["dim"] = dim
        if keepdim:
            base["keepdim"] = True
        spread = dict(base, **({"correction": correction} if correction != 1 else {}))
        return (ev.op(f"{name}_mean_{name}", node, [a], spread),
                ev.op(f"{name}_mean_mean", node, [a], base))
    return call


# --- tests and counts -------------------------------------------------------------------------
def _test(name: str):
    def call(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
        given = bind(node, args, aliased(node, kw), ("input",))
        return ev.op(name, node, [tensor_arg(ev, node, given["input"])])
    return call


def call_count_nonzero(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "dim"))
    a = tensor_arg(ev, node, given["input"])
    dim = dim_arg(ev, node, a, given.get("dim"))
    return ev.op("count_nonzero", node, [a], {} if dim is None else {"dim": dim})


def call_nonzero(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    given = bind(node, args, aliased(node, kw), ("input", "as_tuple"))
    a = tensor_arg(ev, node, given["input"])
    out = ev.op("nonzero", node, [a])
    if not _flag(node, given, "as_tuple", False):
        return out
    cols = out.value.T if a.value.ndim else np.zeros((1, out.value.shape[0]), dtype=np.int64)
    return tuple(Tensor(np.ascontiguousarray(c)) for c in cols)


def _right(node: Ast, given: dict) -> bool:
    right = _flag(node, given, "right", False)
    side = given.get("side")
    if side is not None:
        if side not in ("left", "right"):
            raise fail(node, f"torch.searchsorted(): side can only be 'left' or 'right' but "
                             f"got {side}")
        if given.get("right") is not None and right != (side == "right"):
            raise fail(node, "torch.searchsorted(): side and right can't be set to opposites, "
                             f"got side of {side} while right was True")
        right = side == "right"
    if given.get("out_int32"):
        raise fail(node, "searchsorted(out_int32=True) is not supported by ddx", DdxTypeError)
    return right


def _check_sorted(node: Ast, seq: Tensor, values: Tensor) -> None:
    if seq.value.ndim > 1 and seq.shape[:-1] != values.shape[:-1]:
        raise fail(node, "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                         "first N-1 dimensions of boundaries tensor and input value tensor must "
                         f"match, but we got boundaries tensor {list(seq.shape)} and input value "
                         f"tensor {list(values.shape)}")
    if seq.value.ndim == 0:
        raise fail(node, "torch.searchsorted(): boundaries tensor should have positive "
                         "dimension, but got 0 dimension")


def call_searchsorted(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("sorted_sequence", "input", "out_int32",
                                                  "right", "side", "sorter"), required=2)
    if given.get("sorter") is not None:
        raise fail(node, "searchsorted(sorter=) is not supported by ddx", DdxTypeError)
    seq = tensor_arg(ev, node, given["sorted_sequence"])
    values = tensor_arg(ev, node, given["input"])
    _check_sorted(node, seq, values)
    skw = {"right": True} if _right(node, given) else {}
    return ev.op("searchsorted", node, [seq, values], skw)


def call_bucketize(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "boundaries", "out_int32", "right"),
                 required=2)
    values = tensor_arg(ev, node, given["input"])
    seq = tensor_arg(ev, node, given["boundaries"])
    if seq.value.ndim != 1:
        raise fail(node, f"boundaries tensor must be 1 dimension, but got dim({seq.value.ndim})")
    skw = {"right": True} if _right(node, given) else {}
    return ev.op("bucketize", node, [values, seq], skw)


def call_bincount(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "weights", "minlength"))
    a = tensor_arg(ev, node, given["input"])
    v = a.value
    whole = v.dtype.kind in "iu" or (not ev.repl and v.dtype.kind == "f"
                                     and bool(np.all(np.mod(v, 1) == 0)))
    if not whole:
        raise fail(node, f"\"bincount_cpu\" not implemented for '{_torch_name(v)}'")
    if v.ndim != 1:
        raise fail(node, "bincount only supports 1-d non-negative integral inputs.")
    if v.size and np.min(v) < 0:
        raise fail(node, "bincount only supports 1-d non-negative integral inputs.")
    minlength = int_of(ev, node, given.get("minlength", 0))
    if minlength < 0:
        raise fail(node, "minlength should be >= 0")
    bkw = {"minlength": minlength} if minlength else {}
    w = given.get("weights")
    if w is None:
        return ev.op("bincount", node, [a], bkw)
    w = tensor_arg(ev, node, w)
    if w.value.ndim != 1 or w.value.shape[0] != v.shape[0]:
        raise fail(node, "weights should be 1-d and have the same length as input")
    return ev.op("bincount_weighted", node, [a, w], bkw)


def _torch_name(v: np.ndarray) -> str:
    return {"float32": "Float", "float64": "Double", "bool": "Bool"}.get(str(v.dtype),
                                                                         str(v.dtype))


def call_histc(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, aliased(node, kw), ("input", "bins", "min", "max"))
    a = tensor_arg(ev, node, given["input"])
    if a.value.dtype.kind != "f":
        raise fail(node, f"\"histogram_cpu\" not implemented for '{_torch_name(a.value)}'")
    bins = int_of(ev, node, given.get("bins", 100))
    if bins <= 0:
        raise fail(node, "torch.histogram(): bins must be > 0, but got "
                         f"{bins} for dimension 0")
    lo = number(node, "min", given["min"]) if given.get("min") is not None else 0.0
    hi = number(node, "max", given["max"]) if given.get("max") is not None else 0.0
    if lo > hi:
        raise fail(node, f"torch.histc(): max must be larger than min, but got min {lo:g} "
                         f"max {hi:g}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise fail(node, f"torch.histc(): range of [{lo:g}, {hi:g}] is not finite")
    if lo == hi and a.value.size and not np.isfinite(a.value).all():
        raise fail(node, "torch.histc(): range of [nan, nan] is not finite")
    hkw = {"bins": bins}
    if lo or hi:
        hkw.update(min=lo, max=hi)
    return ev.op("histc", node, [a], hkw)


def call_unique(ev: Evaluating, node: Ast, args: list, kw: dict) -> Any:
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None): the
    values, in order (sorted=False too, as ATen's CPU kernel gives them), and the inverse
    indices and counts when asked for (a tuple then)."""
    given = bind(node, args, aliased(node, kw), ("input", "sorted", "return_inverse",
                                                  "return_counts", "dim"))
    a = tensor_arg(ev, node, given["input"])
    for key in ("sorted", "return_inverse", "return_counts"):
        _flag(node, given, key, False)
    ukw: dict = {}
    if given.get("dim") is not None:
        ukw["dim"] = dim_of(ev, node, given["dim"], a.value.ndim)
    out = [ev.op("unique", node, [a], ukw)]
    if _flag(node, given, "return_inverse", False):
        out.append(ev.op("unique_inverse", node, [a], ukw))
    if _flag(node, given, "return_counts", False):
        out.append(ev.op("unique_counts", node, [a], ukw))
    return out[0] if len(out) == 1 else tuple(out)


NAMED: dict = {
    "sort": call_sort, "argsort": call_argsort, "topk": call_topk, "median": call_median,
    "mode": call_mode, "aminmax": call_aminmax, "var_mean": _with_mean("var"),
    "std_mean": _with_mean("std"), "isnan": _test("isnan"), "isinf": _test("isinf"),
    "isfinite": _test("isfinite"), "count_nonzero": call_count_nonzero, "nonzero": call_nonzero,
    "searchsorted": call_searchsorted, "bucketize": call_bucketize, "bincount": call_bincount,
    "histc": call_histc, "unique": call_unique,
}
NAMED_SPACES: dict = {name: ("torch", "Tensor") for name in NAMED}
NAMED_SPACES.update({"var_mean": ("torch",), "std_mean": ("torch",), "searchsorted": ("torch",),
                     "bucketize": ("torch",)})
