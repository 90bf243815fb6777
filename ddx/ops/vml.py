"""float32 elementwise functions as PyTorch's CPU build computes them: Intel MKL's VML.

PyTorch's x86 wheels link MKL, and ATen's vml.h sends sin, cos, tan, exp, log, log2, log10,
tanh, sqrt, asin, acos and atan of contiguous tensors to MKL's vector functions in high-
accuracy mode (VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE). Their results are not numpy's
in the last bit (float32 sin differs from numpy's for about one value in eight; MKL's sqrt is
not even correctly rounded), and those last bits are what a float32 training loop prints
after a few hundred steps. With the optional ``mkl`` extra (``pip install 'ddx[mkl]'``: the
same MKL release as torch 2.13's, 2024.2) these functions call it through ctypes, as torch
does; measured against torch 2.13: the same bits for every value tried, in both dtypes.

float32 arrays and scalars take this path everywhere (the REPL's default dtype, where a
pasted tutorial's prints depend on it). float64 takes it only where PyTorch is being spoken:
in the REPL and ``ddx run`` (``torch_float64()``, a context of its own for each session's
statements), where torch's float64 functions are MKL's vmd* ones too; the one-liner, the
library and data jobs keep numpy's float64 bits, which their tests have always had (and
never load MKL for them). Without the extra, or with ``DDX_MKL=0``, everything is numpy's.
The library is looked for on the first call that would use it."""

from __future__ import annotations

import contextvars
import ctypes
import glob
import os
import sys

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_TORCH64 = contextvars.ContextVar("ddx_vml_float64", default=False)
torch64 = _TORCH64.get  # whether float64 goes to MKL in this context


def torch_float64(on: bool = True) -> contextvars.Token:
    """From now on in this context, float64 by MKL's vmd* functions too, as PyTorch's CPU build
    computes them (the REPL and ``ddx run``); a token for ``_TORCH64.reset``."""
    return _TORCH64.set(on)


def reset_float64(token: contextvars.Token) -> None:
    _TORCH64.reset(token)


_SCALARS = {np.float32: _F32, np.float64: _F64}


def mkl_dtype(x):
    """The dtype MKL computes ``x`` in here (float32, or float64 where torch64()), else None."""
    kind = type(x)
    dt = x.dtype if kind is np.ndarray else _SCALARS.get(kind)
    if (dt is _F32 or dt is _F64 and _TORCH64.get()) and library():
        return dt
    return None


def caller(name: str):
    """MKL's vm{s,d}NAME as ``fn(dtype)(n, src, dst, mode)``, each looked up once."""
    found: dict = {}

    def get(dtype):
        fn = found.get(dtype)
        if fn is None:
            fn = getattr(library(), ("vms" if dtype is _F32 else "vmd") + name)
            fn.restype = None
            fn.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64)
            found[dtype] = fn
        return fn
    return get


def apply(fn, src: np.ndarray, dst: np.ndarray) -> None:
    """fn(n, src, dst, mode) over C-contiguous arrays of one dtype, in pieces MKL_INT can count."""
    n, size, at = src.size, src.itemsize, 0
    while at < n:
        m = min(_CHUNK, n - at)
        fn(m, src.ctypes.data + size * at, dst.ctypes.data + size * at, _MODE)
        at += m
_MODE = 0x2 | 0x140000 | 0x100  # VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE (mkl_vml_defines.h)
_CHUNK = (1 << 31) - 1  # MKL_INT is 32 bits (LP64), as torch assumes
_LIB: list = []  # [the loaded library, or None when there is none]


def library():
    """MKL's runtime library (libmkl_rt), loaded once; None without the extra or DDX_MKL=0."""
    if not _LIB:
        lib = None
        if os.environ.get("DDX_MKL", "").strip() not in ("0", "off", "no"):
            found = [p for d in dict.fromkeys((sys.prefix, sys.base_prefix))
                     for p in sorted(glob.glob(os.path.join(d, "lib", "libmkl_rt.so*")))]
            for path in found:
                try:
                    lib = ctypes.CDLL(path)
                    break
                except OSError:
                    continue
        _LIB.append(lib)
    return _LIB[0]


def _vector(name: str, ufunc: np.ufunc):
    """``ufunc`` for one input, with MKL's vmsNAME for float32 (and vmdNAME for float64 where
    torch64()) when it is there."""
    mkl = caller(name)

    def call(x, out=None):
        kind = type(x)  # (mkl_dtype, written out: this is every unary op's call)
        dt = x.dtype if kind is np.ndarray else _SCALARS.get(kind)
        if (dt is _F32 or dt is _F64 and _TORCH64.get()) and library():
            src = np.ascontiguousarray(x, dt)  # (at least 1-d: numbers too)
            dst = out if out is not None and out.flags.c_contiguous and out.dtype is dt \
                else np.empty(np.shape(x), dt)
            apply(mkl(dt), src, dst)
            if out is not None and dst is not out:
                out[...] = dst
                return out
            return dst if kind is np.ndarray else dst[()]
        return ufunc(x) if out is None else ufunc(x, out=out)

    call.__name__ = call.__qualname__ = ufunc.__name__
    call.ufunc = ufunc  # (the op table's rules find the row of np.sin by it: ddx/ops/table.py)
    call.__doc__ = (f"np.{ufunc.__name__}; float32 (and float64 where torch64()) by MKL's "
                    f"vm{{s,d}}{name} (HA), as PyTorch's CPU build.")
    return call


sin = _vector("Sin", np.sin)
cos = _vector("Cos", np.cos)
tan = _vector("Tan", np.tan)
exp = _vector("Exp", np.exp)
log = _vector("Ln", np.log)
log2 = _vector("Log2", np.log2)
log10 = _vector("Log10", np.log10)
tanh = _vector("Tanh", np.tanh)
sqrt = _vector("Sqrt", np.sqrt)
arcsin = _vector("Asin", np.arcsin)
arccos = _vector("Acos", np.arccos)
arctan = _vector("Atan", np.arctan)
