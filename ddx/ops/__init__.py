"""THE op table: one row per primitive holds everything ddx knows about it.

A row has its numpy forward, one VJP per input (and a JVP where the op is not elementwise),
the grad_fn name and its variants by argument, the names a user calls it by, how it is
written (in ddx's language, in pictures, in the JSON, in emitted torch/JAX scripts), the
notes --explain gives where its domain ends or it has a kink, its result dtype, and an
example call that the table's tests and every mode are run on. Nothing else in ddx names an
op: adding an op is adding a row here (with a kernel function beside it where it needs one).

The VJP rules are written with numpy's functions, so that they run unchanged on the number
types that implement numpy's protocols: plain arrays (the engine), dual numbers (second
order, ddx/engine/hessian.py) and symbolic values (the explain view's formulas, ddx/engine/symbolic.py).
Both of those find the derivative of each numpy function a rule uses in this same table
(``UFUNCS``), so no second derivative table exists."""

from __future__ import annotations

from . import (  # noqa: F401 - registering the rows
    rows,
    rows_arith,
    rows_cast,
    rows_compare,
    rows_conv,
    rows_div,
    rows_layers,
    rows_linalg,
    rows_loss,
    rows_m,
    rows_m2,
    rows_misc,
    rows_more,
    rows_reduce,
    rows_round,
    rows_shape,
    rows_shrink,
    rows_upsample,
)
from .rows import stack_op
from .table import CALLS, OPS, UFUNCS, Op, display_name, op, unregister

__all__ = ["CALLS", "OPS", "UFUNCS", "Op", "display_name", "op", "stack_op", "unregister"]
