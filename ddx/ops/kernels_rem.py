"""torch.remainder's floats as ATen computes them: fmod, then + b where the signs differ. It
is numpy's remainder but for a zero result, which keeps fmod's sign (the sign of a:
remainder(-2., 2) is -0.0, remainder(3., -1.5) is 0.0) where numpy takes b's."""

from __future__ import annotations

import numpy as np


def remainder(a, b):
    out = np.remainder(a, b)
    if isinstance(out, (np.ndarray, np.floating)) and out.dtype.kind == "f":
        zero = out == 0
        if np.any(zero):
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.where(zero, np.fmod(a, b), out).astype(out.dtype, copy=False)
    return out


remainder.ufunc = np.remainder  # (its derivative rules are the remainder row's)
