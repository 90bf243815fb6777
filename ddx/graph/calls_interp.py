"""The caller of F.interpolate (and so nn.Upsample): functional.py's reading of size and
scale_factor (one of them; a number or one per spatial dim; recompute_scale_factor), the
output size ATen computes from a scale factor (floor(in * s), in double), and the row it
calls: upsample_nearest1d/2d/3d for mode='nearest', upsample_linear1d and upsample_bilinear2d for
'linear' of a 3-d input and 'bilinear' of a 4-d one (the others are refused by name)."""

from __future__ import annotations

import math
from typing import Any

from ..errors import DdxValueError
from ..lang.tree import Ast
from .args import Evaluating, bind
from .calls_shape import fail, int_of, tensor_arg
from .tensor import Tensor


def _values(ev, node, value: Any, n: int, kind) -> list:
    if isinstance(value, Tensor) and not value.weak and value.value.ndim == 1:
        items = [int(v) if kind is int and float(v).is_integer() else v.item()
                 for v in value.value]  # (the one-liner's [5, 5] is a float tensor)
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value] * n
    out = []
    for v in items:
        if kind is int:
            out.append(int_of(ev, node, v))
        else:
            out.append(float(v.value) if isinstance(v, Tensor) else float(v))
    if len(out) != n:
        raise DdxValueError(f"Input and {'output size' if kind is int else 'scale_factor'} "
                            f"must have the same number of spatial dimensions, but got input "
                            f"with spatial dimensions of [{n}] and output size of {out}. "
                            "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                            "output size in (o1, o2, ...,oK) format.", start=node.pos,
                            end=node.end)
    return out


def interpolate(ev: Evaluating, node: Ast, args: list, kw: dict) -> Tensor:
    given = bind(node, args, kw, ("input", "size", "scale_factor", "mode", "align_corners",
                                  "recompute_scale_factor", "antialias"), required=1)
    x = tensor_arg(ev, node, given["input"])
    mode = given.get("mode", "nearest")
    mode = mode if isinstance(mode, str) else str(mode)
    n = x.value.ndim - 2
    if n not in (1, 2, 3):
        raise fail(node, f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{x.value.ndim}D) for the modes: nearest | linear | bilinear | "
                         f"bicubic | trilinear | area | nearest-exact (got {mode})",
                   DdxValueError)  # (PyTorch's NotImplementedError: a usage error)
    if mode not in ("nearest", "linear", "bilinear") or mode == "bilinear" and n != 2 or \
            mode == "linear" and n != 1:
        raise fail(node, f"F.interpolate(mode={mode!r}) is not supported by ddx"
                   + (" on this input" if mode in ("linear", "bilinear") else "")
                   + " (modes 'nearest', 'linear' of a 3-d input and 'bilinear' of a 4-d one "
                   "are)")
    align = given.get("align_corners")
    align = bool(align.value) if isinstance(align, Tensor) else bool(align)
    if mode == "nearest" and given.get("align_corners") is not None:
        raise DdxValueError("align_corners option can only be set with the interpolating "
                            "modes: linear | bilinear | bicubic | trilinear", start=node.pos,
                            end=node.end)
    size, scale = given.get("size"), given.get("scale_factor")
    if size is not None and scale is not None:
        raise DdxValueError("only one of size or scale_factor should be defined",
                            start=node.pos, end=node.end)
    if size is None and scale is None:
        raise DdxValueError("either size or scale_factor should be defined", start=node.pos,
                            end=node.end)
    recompute = given.get("recompute_scale_factor")
    recompute = bool(recompute.value) if isinstance(recompute, Tensor) else bool(recompute)
    if size is not None:
        out, scales = _values(ev, node, size, n, int), [None] * n
    else:
        factors = _values(ev, node, scale, n, float)
        out = [math.floor(float(x.shape[2 + k]) * factors[k]) for k in range(n)]
        scales = [None] * n if recompute else factors
    if any(o <= 0 for o in out):
        raise fail(node, f"Input and output sizes should be greater than 0, but got input "
                         f"({', '.join(str(s) for s in x.shape[2:])}) and output "
                         f"({', '.join(str(o) for o in out)})")
    if mode in ("linear", "bilinear"):
        return ev.op(f"upsample_{mode}{n}d", node, [x],
                     {"output_size": tuple(out), "align_corners": align,
                      "scales": tuple(scales)})
    return ev.op(f"upsample_nearest{n}d", node, [x],
                 {"output_size": tuple(out), "scales": tuple(scales)})


NAMED: dict = {"interpolate": interpolate}
NAMED_SPACES: dict = {"interpolate": ("F",)}

__all__ = ["NAMED", "NAMED_SPACES", "interpolate"]
