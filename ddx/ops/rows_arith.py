"""The op table's arithmetic rows beyond the operators: torch.add/sub with ``alpha``, rsub of
two tensors, fmod/remainder by a plain number, and gelu's tanh approximation."""

from __future__ import annotations

import numpy as np

from .kernels_act import gelu_tanh, gelu_tanh_vjp
from .kernels_rem import remainder as aten_remainder
from .table import op

op("add_scaled", "AddBackward0", lambda a, b, *, alpha: a + alpha * b,
   lambda g, o, a, b, *, alpha: g, lambda g, o, a, b, *, alpha: g * alpha, saves=False,
   reads="", shown="add", symbol="+", text="{0} + {alpha}*{1}", prec=1,
   emit={"torch": "torch.add({0}, {1}, alpha={alpha!r})", "jax": "({0} + {alpha!r} * {1})"},
   example=("add(x, y, alpha=2.5)", {}))
op("sub_scaled", "SubBackward0", lambda a, b, *, alpha: a - alpha * b,
   lambda g, o, a, b, *, alpha: g, lambda g, o, a, b, *, alpha: -g * alpha, saves=False,
   reads="", shown="sub", symbol="-", text="{0} - {alpha}*{1}", prec=1,
   emit={"torch": "torch.sub({0}, {1}, alpha={alpha!r})", "jax": "({0} - {alpha!r} * {1})"},
   example=("sub(x, y, alpha=2.5)", {}))
op("rsub_tensor", "RsubBackward0", lambda a, b, *, alpha=1.0: b - alpha * a,
   lambda g, o, a, b, *, alpha=1.0: -g * alpha, lambda g, o, a, b, *, alpha=1.0: g,
   saves=False, reads="", shown="rsub", symbol="-", text="{1} - {alpha}*{0}", prec=1,
   emit={"torch": "torch.rsub({0}, {1}, alpha={alpha!r})", "jax": "({1} - {alpha!r} * {0})"},
   example=("rsub(x, y)", {}))
op("fmod_scalar", "FmodBackward0", lambda a, *, other: np.fmod(a, other),
   lambda g, o, a, *, other: g, saves=False, reads="", shown="fmod", symbol="fmod",
   emit={"torch": "torch.fmod({0}, {other!r})", "jax": "jnp.fmod({0}, {other!r})"},
   kink=(lambda a, *, other: np.mod(a / other, 1) == 0,
         "fmod jumps where x/y is an integer: PyTorch takes the slope 1"),
   domain=(0.25, 1.75), example=("fmod(x, 2)", {}))
op("remainder_scalar", "RemainderBackward0", lambda a, *, other: aten_remainder(a, other),
   lambda g, o, a, *, other: g, saves=False, reads="", shown="remainder", symbol="%",
   emit={"torch": "torch.remainder({0}, {other!r})", "jax": "jnp.remainder({0}, {other!r})"},
   kink=(lambda a, *, other: np.mod(a / other, 1) == 0,
         "remainder jumps where x/y is an integer: PyTorch takes the slope 1"),
   domain=(0.25, 1.75), example=("remainder(x, 2)", {}))

op("gelu_tanh", "GeluBackward0", gelu_tanh, gelu_tanh_vjp, reads="i", shown="gelu",
   symbol="gelu",
   emit={"torch": "torch.nn.functional.gelu({0}, approximate='tanh')",
         "jax": "jax.nn.gelu({0}, approximate=True)"},
   example=("gelu(x, approximate='tanh')", {}))


