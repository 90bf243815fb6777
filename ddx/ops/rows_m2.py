"""Round 7's picking rows (issue 15): cummax and cummin (CummaxBackward0, CumminBackward0) and
kthvalue (KthvalueBackward0), each with a row for its indices (no gradient), as median(dim)'s
and mode's rows are. Kernels in cumulative_m.py; callers in ddx/graph/calls_m4.py."""

from __future__ import annotations

from .cumulative_m import (
    cumulative,
    cumulative_index,
    cumulative_jvp,
    cumulative_vjp,
    kth,
    kth_index,
    kth_jvp,
    kth_vjp,
)
from .kernels_more import no_tangent
from .kernels_reduce import no_gradient
from .table import op

_MATRIX = {"x": (2, 3)}
_VALUE = dict(saves=False, elementwise=False, reads="", differentiable=False, jvp=no_tangent,
              spaces=())

for _name, _largest in (("cummax", True), ("cummin", False)):
    op(_name, f"Cum{_name[3:]}Backward0",
       lambda a, *, dim, largest=_largest: cumulative(a, dim=dim, largest=largest),
       lambda g, o, a, *, dim, largest=_largest: cumulative_vjp(g, o, a, dim=dim,
                                                                 largest=largest),
       jvp=lambda ts, o, a, *, dim, largest=_largest: cumulative_jvp(ts, o, a, dim=dim,
                                                                     largest=largest),
       elementwise=False, reads="i", spaces=(),
       emit={"torch": f"torch.{_name}({{0}}, {{dim}}).values",
             "jax": f"jax.lax.{_name}({{0}}, axis={{dim}})"},
       example=(f"{_name}(x, 1)[0]", _MATRIX))
op("cumulative_index", "", cumulative_index, no_gradient, **_VALUE, dtype="int64",
   shown="indices",
   emit={"torch": lambda args, t, lib: (f"torch.{'cummax' if t.kw.get('largest', True) else 'cummin'}"
                                        f"({args[0]}, {t.kw['dim']}).indices")},
   example=("cummax(x, 1)[1]", _MATRIX))


def _emit_kth(args, t, lib):
    kw = t.kw
    if lib == "torch":
        return (f"torch.kthvalue({args[0]}, {kw['k']}, {kw['dim']}"
                f"{', keepdim=True' if kw.get('keepdim') else ''}).values")
    pick = f"jnp.take(jnp.sort({args[0]}, axis={kw['dim']}), {kw['k'] - 1}, axis={kw['dim']})"
    return f"jnp.expand_dims({pick}, {kw['dim']})" if kw.get("keepdim") else pick


op("kthvalue", "KthvalueBackward0", kth, kth_vjp, jvp=kth_jvp, elementwise=False, reads="i",
   spaces=(), emit={"torch": _emit_kth, "jax": _emit_kth},
   example=("kthvalue(x, 2, 1)[0]", _MATRIX))
op("kthvalue_index", "", kth_index, no_gradient, **_VALUE, dtype="int64", shown="indices",
   emit={"torch": lambda args, t, lib: (f"torch.kthvalue({args[0]}, {t.kw['k']}, {t.kw['dim']}"
                                        f"{', keepdim=True' if t.kw.get('keepdim') else ''})"
                                        ".indices")},
   example=("kthvalue(x, 2, 1)[1]", _MATRIX))
