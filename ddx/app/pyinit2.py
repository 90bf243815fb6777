"""torch.nn.init's eye_, dirac_, orthogonal_, sparse_ and trunc_normal_, as torch/nn/init.py
makes them from the seeded generator: orthogonal_ draws normal_(0, 1) of (rows, numel/rows)
and takes the QR factorisation's Q with the signs of R's diagonal (numpy's LAPACK, not MKL's:
the last bits may differ), sparse_ draws normal_(0, std) then one randperm of the rows per
column, trunc_normal_ redraws the whole tensor's normal_ where a value falls outside [a, b]
(PyTorch's way when [a, b] holds more than 30% of the distribution)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError, DdxValueError
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR
from .pyinit import FUNCTIONS, native_init


def _ndim(t: Tensor, allowed: tuple) -> None:
    if t.value.ndim not in allowed:
        dims = " or ".join(str(n) for n in allowed)
        raise DdxValueError(f"Only tensors with {dims} dimensions are supported")


def _drawing(ev) -> None:
    ev.drew_random = True
    if ev.journal is not None:
        ev.journal.keep(GENERATOR, "state")


def eye_(ev, t: Tensor) -> Tensor:
    _ndim(t, (2,))
    t.value[...] = np.eye(*t.value.shape)
    return t


def dirac_(ev, t: Tensor, groups) -> Tensor:
    if t.value.ndim not in (3, 4, 5):
        raise DdxValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = t.value.shape
    groups = int(groups)
    if sizes[0] % groups != 0:
        raise DdxValueError("dim 0 must be divisible by groups")
    per = sizes[0] // groups
    t.value[...] = 0
    centre = tuple(n // 2 for n in sizes[2:])
    for g in range(groups):
        for d in range(min(per, sizes[1])):
            t.value[(g * per + d, d) + centre] = 1
    return t


def orthogonal_(ev, t: Tensor, gain) -> Tensor:
    if t.value.ndim < 2:
        raise DdxValueError("Only tensors with 2 or more dimensions are supported")
    if t.value.size == 0:
        return t
    _drawing(ev)
    dtype = t.value.dtype
    rows = t.value.shape[0]
    cols = t.value.size // rows
    flat = GENERATOR.normal(rows * cols, dtype).reshape(rows, cols)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = (q * np.sign(np.diag(r))).astype(dtype)
    if rows < cols:
        q = q.T
    t.value[...] = (q.reshape(t.value.shape) * dtype.type(gain)).astype(dtype)
    return t


def sparse_(ev, t: Tensor, sparsity, std) -> Tensor:
    _ndim(t, (2,))
    _drawing(ev)
    rows, cols = t.value.shape
    zeros = math.ceil(sparsity * rows)
    t.value[...] = GENERATOR.normal(rows * cols, t.value.dtype, 0.0, std).reshape(rows, cols)
    for col in range(cols):
        t.value[GENERATOR.permutation(rows)[:zeros], col] = 0
    return t


def _cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(ev, t: Tensor, mean, std, a, b) -> Tensor:
    if _cdf((b - mean) / std) - _cdf((a - mean) / std) <= 0.3:
        raise DdxRuntimeError("trunc_normal_ where [a, b] holds at most 30% of the normal "
                              "distribution (PyTorch's uniform-and-accept way) is not "
                              "supported by ddx")
    _drawing(ev)
    dtype, n = t.value.dtype, t.value.size
    lo, hi = dtype.type(a).item(), dtype.type(b).item()
    result = GENERATOR.normal(n, dtype, mean, std)
    while True:
        mask = (result < lo) | (result > hi)
        if not mask.any():
            break
        result = np.where(mask, GENERATOR.normal(n, dtype, mean, std), result)
    t.value[...] = result.reshape(t.value.shape)
    return t


FUNCTIONS.update({
    "eye_": native_init("eye_", (), (), eye_),
    "dirac_": native_init("dirac_", ("groups",), (1,), dirac_),
    "orthogonal_": native_init("orthogonal_", ("gain",), (1,), orthogonal_),
    "sparse_": native_init("sparse_", ("sparsity", "std"), (None, 0.01), sparse_),
    "trunc_normal_": native_init("trunc_normal_", ("mean", "std", "a", "b"),
                                  (0.0, 1.0, -2.0, 2.0), trunc_normal_),
})
