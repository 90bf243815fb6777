"""A trace's other views of the same derivatives: forward mode, check, Jacobian, Hessian, explain."""

from __future__ import annotations

import numpy as np

from ..engine import reverse


def _matrix_limit(option: str, entries: int) -> None:
    """Refuse a --jacobian / --hessian result over DDX_MAX_MATRIX entries before computing it
    (the work and the memory grow with the entries, and so does the output)."""
    from ..limits import limit, over

    if entries > limit("DDX_MAX_MATRIX"):
        raise over("DDX_MAX_MATRIX", entries, option)


class TraceModes:
    """The mode methods of a Trace (issue: forward, check, explain); each result is kept in
    ``extras`` for the JSON document."""

    def _seed(self) -> np.ndarray:
        if self.grad_output is not None:
            return self.grad_output
        return reverse.initial_grad(self.output, None)

    def forward_mode(self) -> dict:
        from ..engine.forward import compare, forward_gradients, op_count

        grads, cost = forward_gradients(self.output, self.leaves, self._seed())
        n = op_count(self.output)
        result = {"gradients": grads, "difference": compare(self.grads, grads),
                  "cost": {"reverse": {"passes": 2, "forward_ops": n, "vjps": self.vjp_count},
                           "forward": cost}}
        self.extras["forward"] = result
        return result

    def check(self) -> dict:
        from ..engine.forward import compare, finite_differences

        grads, step = finite_differences(self.output, self.leaves, self._seed())
        max_abs, max_rel = compare(self.grads, grads)
        f32 = self.dtype == np.float32
        rtol, atol = (2e-2, 1e-3) if f32 else (1e-5, 1e-7)
        ok = all(np.allclose(np.zeros_like(fd) if self.grads[n] is None else self.grads[n], fd,
                             rtol=rtol, atol=atol, equal_nan=True) for n, fd in grads.items())
        result = {"method": "central differences", "step": step,
                  "step_rule": f"h = {step:g} * max(1, |x|)", "gradients": grads,
                  "max_abs_error": max_abs, "max_rel_error": max_rel, "rtol": rtol,
                  "atol": atol, "ok": ok}
        if f32:
            result["warning"] = ("float32: finite differences are unreliable (about 3 digits); "
                                 f"used step {step:g}; run with --dtype float64 for a sharp check")
        self.extras["check"] = result
        return result

    def jacobian(self) -> dict:
        from ..engine.forward import jacobians

        n_in = sum(t.value.size for t in self.leaves.values())
        _matrix_limit("--jacobian", self.output.value.size * n_in)
        result = jacobians(self.output, self.leaves)
        self.extras["jacobian"] = result
        return result

    def hessian(self) -> dict:
        from ..engine.hessian import hessian

        if self.output.value.size == 1:  # (a vector output is hessian()'s own error)
            n_in = sum(t.value.size for t in self.leaves.values())
            _matrix_limit("--hessian", n_in * n_in)
        result = hessian(self)
        self.extras["hessian"] = result
        return result

    def explain(self) -> dict:
        from ..engine.explain import explain

        result = explain(self)
        self.extras["explain"] = result
        return result
