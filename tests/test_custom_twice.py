"""Second derivatives through custom autograd.Functions (app/pycustom_twice.py): a Function
wrapping an op with a hand-written backward must have the Hessian of the op itself, whatever
it is composed with; and with respect to a non-leaf. (The tutorial and the scripts in
tests/pyscripts compare with PyTorch; here the engine is checked against ddx's own op
table, which tests/test_table.py checks against PyTorch and differences.)"""

from __future__ import annotations

import ast

import numpy as np
from conftest import session_run
from hypothesis import given, settings
from hypothesis import strategies as st

# (forward, backward's derivative of the op at x): the backward is written with ops
FUNCTIONS = {
    "sin": ("torch.sin({v})", "torch.cos({v})"),
    "exp": ("torch.exp({v})", "torch.exp({v})"),
    "tanh": ("torch.tanh({v})", "1 - torch.tanh({v}) ** 2"),
    "cube": ("{v} ** 3", "3 * {v} ** 2"),
}
OUTER = ["{0} * {0}", "torch.sin({0}) * t", "{0}.sum() * t", "torch.exp({0} * t)"]


def _script(name: str, outer: str, custom: bool, values: list) -> str:
    fwd, deriv = FUNCTIONS[name]
    inner = "F.apply(t)" if custom else "(" + fwd.format(v="t") + ")"
    return (
        "import torch\n"
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        f"        return {fwd.format(v='x')}\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
        f"        return g * ({deriv.format(v='x')})\n"
        "def f(t):\n"
        f"    return ({outer.format(inner)}).sum()\n"
        f"z = torch.tensor({values}, dtype=torch.float64)\n"
        "print(torch.autograd.functional.hessian(f, z).tolist())\n")


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), outer=st.sampled_from(OUTER),
       values=st.lists(st.floats(-1.5, 1.5), min_size=1, max_size=3))
def test_a_custom_functions_hessian_is_its_ops(name, outer, values):
    ours = session_run(_script(name, outer, True, values))
    plain = session_run(_script(name, outer, False, values))
    assert len(ours) == 1 and len(plain) == 1 and ours[0].startswith("["), (ours, plain)
    np.testing.assert_allclose(ast.literal_eval(ours[0]), ast.literal_eval(plain[0]), rtol=1e-10,
                               atol=1e-12)


def test_a_second_derivative_with_respect_to_a_non_leaf_by_hand():
    """x = 3w, y = sum(x^2 w): dy/dx = 2xw = 6w^2, whose gradient in w is 12w (1, 2: 12, 24),
    through a custom square as well."""
    got = session_run(
        "import torch\n"
        "class Sq(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        "        return x * x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
        "        return 2 * g * x\n"
        "for sq in (lambda v: v ** 2, Sq.apply):\n"
        "    w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "    x = w * 3\n"
        "    g, = torch.autograd.grad((sq(x) * w).sum(), x, create_graph=True)\n"
        "    g.sum().backward()\n"
        "    print(g.tolist(), w.grad.tolist())\n")
    assert got == ["[6.0, 24.0] [12.0, 24.0]"] * 2
