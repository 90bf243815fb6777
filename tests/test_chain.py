"""ddx/replay/chain.py and its C loop (ddx/replay/chainloop.c): a small whole sum of an
elementwise chain, forward and backward in one call, must give the ordinary road's bits
(value, every gradient, the warnings), each row's chain formulas must be its numpy
functions' bits (specials and subnormals included, floating-point events alike), and the
loop must stand aside, or refuse a malformed program, where it should."""

from __future__ import annotations

import ast
import os
from array import array

import numpy as np
import pytest
from conftest import ordinary, replayed, torch_or_skip, wxb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ddx
from ddx.ops import OPS
from ddx.replay import blocked, chain
from ddx.replay.cache import TEMPLATES

# keyword arguments each row with formulas is checked at (a row missing here fails the test)
KWS = {"pow_scalar": [{"exponent": 2}, {"exponent": 3}, {"exponent": 2.0}],
       "rsub": [{"other": 2.0}, {"other": -0.5}, {"other": 0.0}]}
CHAINED = sorted(name for name, row in OPS.items() if row.chain is not None)


@pytest.fixture(autouse=True)
def built():
    """The compiled loop; CI builds it (DDX_REQUIRE_CHAIN=1), elsewhere a missing compiler
    only costs speed."""
    if chain.chainloop is None:
        if os.environ.get("DDX_REQUIRE_CHAIN"):
            raise AssertionError("ddx/replay/chainloop.c was not compiled by the install")
        pytest.skip("the C loop is not built (no compiler at install)")
    TEMPLATES.clear()
    chain.ENABLED[0] = True
    yield
    chain.ENABLED[0] = True
    TEMPLATES.clear()


def _same(a, b) -> bool:
    """The same bits, NaNs aside: a NaN is a NaN (which operand's NaN an x86 instruction
    passes on depends on the order the compiler gives a commutative operation's operands,
    in numpy's loops as in this one, so its sign and payload are not compared)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = np.isnan(a), np.isnan(b)
    return bool((na == nb).all()) and a[~na].tobytes() == b[~nb].tobytes()


def _numpy(fn):
    """fn() under numpy's raising error state: (its value, or None on a floating-point event
    that ddx's guard would report)."""
    with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
        try:
            return np.asarray(fn())
        except FloatingPointError:
            return None


specials = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -2.2250738585072014e-308,
                            1.7976931348623157e308, 1e-160, 3.0, -1.5])
values = st.one_of(specials, st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                   st.floats(-4, 4))


@pytest.mark.parametrize("name", CHAINED)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_each_rows_formulas_are_its_functions_bits(name, data):
    row = OPS[name]
    n = data.draw(st.integers(1, 70))
    arity = len(row.vjp)
    a, b, g = (data.draw(hnp.arrays(np.float64, n, elements=values)) for _ in range(3))
    g0 = data.draw(values)
    for kw in KWS.get(name, [{}]):
        ins = (a, b)[:arity]
        for spread in (False, True):
            found = chain.formulas(row, kw, spread)
            assert found is not None and len(found) == 1 + arity
            names = {"a": a, "b": b, **{k: float(v) for k, v in kw.items()}}
            want = _numpy(lambda: row.fn(*ins, **kw))
            got = chain.run_formula(found[0], dict(names), n)
            assert (got is None) == (want is None), (name, kw, "forward")
            if want is None:
                continue
            o = want
            gg = np.broadcast_to(np.float64(g0), (n,)) if spread else g
            for slot in range(arity):
                want_g = _numpy(lambda: row.vjp[slot](gg, o, *ins, **kw))
                got_g = chain.run_formula(found[1 + slot], {**names, "o": o,
                                                            "g": g0 if spread else g}, n)
                assert (got_g is None) == (want_g is None), (name, kw, slot, spread)
                if want_g is not None:
                    assert _same(got_g, np.broadcast_to(want_g, (n,))), (name, kw, slot, spread)


def test_every_row_with_formulas_is_checked():
    # rows whose formulas read keyword arguments, or depend on them, must list them in KWS
    assert {"add", "sub", "mul", "div", "neg", "pow_scalar"} <= set(CHAINED)
    for name in CHAINED:
        row = OPS[name]
        if callable(row.chain):
            assert name in KWS, name
            continue
        read = {n.id for text in row.chain for n in ast.walk(ast.parse(text)) if
                isinstance(n, ast.Name)}
        assert read <= {"a", "b", "g", "o"} or name in KWS, name


def _agree(got, want) -> None:
    assert _same(got.value, want.value)
    assert got.grads.keys() == want.grads.keys()
    for k, v in want.grads.items():
        assert (got.grads[k] is None) == (v is None), k
        if v is not None:
            assert _same(got.grads[k], v), k
    assert got.warnings == want.warnings


TEXTS = ["sum((w*x+b)^2)", "mean((w*x - b)^3)", "sum(w/x - 2*b + -w)", "sum(3 - w*x*w)",
         "sum(x^2 + x^2*w)", "mean(-(w - x)^2 * 0.5)", "sum(w*w*w/(1 + x*x))", "sum(w + x)"]


@pytest.mark.parametrize("n", [32, 33, 100, 511, 512, 513, 1000, 4095, 4096, 4111, 10_000,
                               32_767])
@pytest.mark.parametrize("text", TEXTS)
def test_bits_are_the_ordinary_roads(text, n):
    bindings = wxb(n)
    got, template = replayed(text, bindings)
    assert template.chain  # (a template it takes) and the replay that made ``got`` took it
    assert type(got._fast.values) is blocked.Speculated
    _agree(got, ordinary(text, bindings))


@pytest.mark.parametrize("n", [32, 1000, 4111, 10_000, 32_767])
def test_pytorchs_bits(n):
    torch = torch_or_skip()
    bindings = wxb(n, seed=n)
    text = "sum((w*x+b)^2)"
    got, template = replayed(text, bindings)
    assert template.chain and type(got._fast.values) is blocked.Speculated
    w, x, b = (torch.tensor(bindings[k], dtype=torch.float64, requires_grad=True) for k in "wxb")
    loss = ((w * x + b) ** 2).sum()
    loss.backward()
    assert _same(got.value, loss.detach().numpy())
    for k, t in zip("wxb", (w, x, b)):
        assert _same(got.grads[k], t.grad.numpy()), k


def test_sum_by_hand():
    # sum((w*x+b)^2) at w=1..40, x=1, b=0: the sum of the squares, 22140, and grads 2*t*x,
    # 2*t*w, 2*t (exact in any order: every partial sum is an integer)
    w = np.arange(1.0, 41.0)
    got, template = replayed("sum((w*x+b)^2)", {"w": w, "x": np.ones(40), "b": np.zeros(40)})
    assert template.chain and float(got.value) == 22140.0
    assert np.array_equal(got.grads["w"], 2 * w) and np.array_equal(got.grads["x"], 2 * w * w)
    assert np.array_equal(got.grads["b"], 2 * w)


HITS: list[bool] = []
leaves = st.sampled_from(["w", "x", "b", "2", "0.5", "3"])


def _grow(children):
    return st.one_of(st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children),
                     st.tuples(st.sampled_from(["neg", "^2", "^3", "2-"]), children))


def _text(node) -> str:
    if isinstance(node, str):
        return node
    if len(node) == 3:
        return f"({_text(node[1])} {node[0]} {_text(node[2])})"
    inner = _text(node[1])
    return {"neg": f"(-{inner})", "^2": f"({inner})^2", "^3": f"({inner})^3",
            "2-": f"(2 - {inner})"}[node[0]]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=st.recursive(leaves, _grow, max_leaves=8), n=st.integers(32, 2100),
       reduce=st.sampled_from(["sum", "mean"]), scale=st.sampled_from([1.0, 1e-160, 1e150]))
def test_random_chains_agree_with_the_ordinary_road(tree, n, reduce, scale):
    text = f"{reduce}({_text(tree)} * w)"  # (w: every chain reads a binding of the shape)
    bindings = {k: v * scale for k, v in wxb(n).items()}
    TEMPLATES.clear()
    got, template = replayed(text, bindings)
    HITS.append(bool(template is not None and template.chain))
    _agree(got, ordinary(text, bindings))


def test_random_chains_mostly_take_the_loop():
    # (the property above is about the loop: most of its chains must have been run by it)
    if len(HITS) >= 50:
        assert sum(HITS) > 0.6 * len(HITS), (sum(HITS), len(HITS))


def test_a_floating_point_event_takes_the_ordinary_road_and_warns():
    bindings = wxb(64)
    bindings["x"][5] = 0.0  # w/x: a division by zero
    got, template = replayed("sum(w/x + b)", bindings)
    assert template.chain  # (tried, and its event sent the replay the ordinary way)
    want = ordinary("sum(w/x + b)", bindings)
    _agree(got, want)
    assert want.warnings


def test_another_seed_and_a_second_backward():
    bindings = wxb(100)
    got, template = replayed("sum((w*x+b)^2)", bindings, gradient=np.float64(2.5))
    assert template.chain
    _agree(got, ordinary("sum((w*x+b)^2)", bindings, gradient=np.float64(2.5)))
    g = ddx.trace("sum((w*x+b)^2)", bindings)
    g.backward()
    g.backward()  # (accumulates: the real graph)
    want = ordinary("sum((w*x+b)^2)", bindings)
    want.backward()
    _agree(g, want)


def test_where_it_stands_aside():
    b = wxb(64)
    cases = [("sum((w*x+b)^2)", {k: v[:31] for k, v in b.items()}),  # below the small sum
             ("sum((w*x+b)^2)", {k: np.resize(v, 32_768) for k, v in b.items()}),  # a range
             ("sum(exp(w)*x)", b),  # a row without formulas
             ("sum(w*x) * 2", b),  # not a whole sum at the end
             ("sum(w*x + b[0])", b)]  # an op of another shape
    for text, bindings in cases:
        TEMPLATES.clear()
        got, template = replayed(text, bindings)
        assert not template.chain, text
        _agree(got, ordinary(text, bindings))
    # a binding that is not contiguous: the same template, the ordinary replay
    TEMPLATES.clear()
    wide = {k: np.repeat(v, 2)[::2] for k, v in b.items()}
    got, template = replayed("sum((w*x+b)^2)", wide)
    assert template.chain and type(got._fast.values) is not blocked.Speculated
    _agree(got, ordinary("sum((w*x+b)^2)", wide))


def test_disabled_is_the_same():
    bindings = wxb(700)
    on, _ = replayed("sum(w*x - b/2)", bindings)
    TEMPLATES.clear()
    chain.ENABLED[0] = False
    off, template = replayed("sum(w*x - b/2)", bindings)
    assert template.chain is None
    _agree(on, off)


def _code(regs, instrs) -> bytes:
    return array("i", [len(regs), len(instrs), *[v for r in regs for v in r],
                       *[v for i in instrs for v in i]]).tobytes()


def test_a_malformed_program_is_refused_not_run():
    x = np.ones(64)
    out = np.empty(64)
    nums = array("d", [2.0]).tobytes()
    good = _code([(0, 0), (1, 0), (2, 0)], [(2, 2, 0, 1), (6, 0, 2, 0)])
    assert chain.chainloop.run(good, 64, (x,), nums, (out,)) == 0.0 and (out == 2.0).all()
    bad = [_code([(0, 5)], [(5, 0, 0, 0)]),  # an input that is not there
           _code([(0, 0), (1, 3)], [(5, 0, 0, 0)]),  # a number that is not there
           _code([(0, 0), (2, 0)], [(2, 0, 1, 1)]),  # writing into an input
           _code([(0, 0), (3, 0)], [(2, 1, 0, 0)]),  # an array into a one-value buffer
           _code([(0, 0), (2, 0)], [(9, 1, 0, 0)]),  # no such instruction
           _code([(0, 0), (2, 0)], [(6, 3, 0, 0)]),  # no such output
           _code([(7, 0)], [(5, 0, 0, 0)]),  # no such register kind
           b"\x01\x00"]
    for code in bad:
        with pytest.raises(ValueError):
            chain.chainloop.run(code, 64, (x,), nums, (out,))
    with pytest.raises(ValueError):  # another dtype, another size
        chain.chainloop.run(good, 64, (x.astype(np.float32),), nums, (out,))
    with pytest.raises(ValueError):
        chain.chainloop.run(good, 63, (x,), nums, (out,))
