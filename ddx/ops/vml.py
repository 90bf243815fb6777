"""float32 elementwise functions as PyTorch's CPU build computes them: Intel MKL's VML.

PyTorch's x86 wheels link MKL, and ATen's vml.h sends sin, cos, tan, exp, log, log2, log10,
tanh, sqrt, asin, acos and atan of contiguous tensors to MKL's vector functions in high-
accuracy mode (VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE). Their results are not numpy's
in the last bit (float32 sin differs from numpy's for about one value in eight; MKL's sqrt is
not even correctly rounded), and those last bits are what a float32 training loop prints
after a few hundred steps. With the optional ``mkl`` extra (``pip install 'ddx[mkl]'``: the
same MKL release as torch 2.13's, 2024.2) these functions call it through ctypes, as torch
does; measured against torch 2.13: the same bits for every value tried, in both dtypes.

Only float32 arrays and scalars take this path (the REPL's default dtype, where a pasted
tutorial's prints depend on it). float64 stays on numpy, whose bits the one-liner and its
tests have always had. Without the extra, or with ``DDX_MKL=0``, everything is numpy's.
The library is looked for on the first float32 call: never for a one-liner."""

from __future__ import annotations

import ctypes
import glob
import os
import sys

import numpy as np

_F32 = np.dtype(np.float32)
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
    """``ufunc`` for one input, with MKL's vmsNAME for float32 when it is there."""
    fn = None

    def call(x, out=None):
        nonlocal fn
        kind = type(x)
        if (kind is np.ndarray and x.dtype is _F32 or kind is np.float32) and library():
            if fn is None:
                fn = getattr(library(), "vms" + name)
                fn.restype = None
                fn.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64)
            shape = np.shape(x)
            src = np.ascontiguousarray(x, _F32)  # (at least 1-d: numbers too)
            dst = out if out is not None and out.flags.c_contiguous and out.dtype is _F32 \
                else np.empty(shape, _F32)
            n, at = src.size, 0
            while at < n:
                m = min(_CHUNK, n - at)
                fn(m, src.ctypes.data + 4 * at, dst.ctypes.data + 4 * at, _MODE)
                at += m
            if out is not None and dst is not out:
                out[...] = dst
                return out
            return dst[()] if kind is np.float32 else dst
        return ufunc(x) if out is None else ufunc(x, out=out)

    call.__name__ = call.__qualname__ = ufunc.__name__
    call.ufunc = ufunc  # (the op table's rules find the row of np.sin by it: ddx/ops/table.py)
    call.__doc__ = f"np.{ufunc.__name__}; float32 by MKL's vms{name} (HA), as PyTorch's CPU build."
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
