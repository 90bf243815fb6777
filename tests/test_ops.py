"""Every row of the op table: its VJP against central differences at random points."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from conftest import central_difference

from ddx.autograd import unbroadcast
from ddx.ops import OPS, stack_op

stack_op(3)

# Inputs inside each op's domain and away from kinks and ties, so differences are smooth.
POSITIVE = {"sqrt", "log", "log2", "log10", "pow", "reciprocal"}
UNIT = {"asin", "acos"}


def sample(name: str, rng: np.random.Generator):
    """(positional inputs, keyword arguments) for one random evaluation of op ``name``."""
    vec = lambda n=4: rng.uniform(-2, 2, n)  # noqa: E731
    if name in POSITIVE:
        return [rng.uniform(0.5, 2, 4) for _ in range(OPS[name].arity)], {}
    if name in UNIT:
        return [rng.uniform(-0.9, 0.9, 4)], {}
    if name in ("abs", "relu"):
        v = vec()
        return [np.where(np.abs(v) < 0.2, 0.5, v)], {}
    if name == "tan":
        return [rng.uniform(-1.2, 1.2, 4)], {}
    if name == "pow_scalar":
        return [rng.uniform(0.5, 2, 4)], {"exponent": 2.5}
    if name == "rpow_scalar":
        return [vec()], {"base": 1.7}
    if name == "div":  # a divisor near 0 makes the quotient too steep for differences
        return [vec(), rng.choice([-1, 1], 4) * rng.uniform(0.5, 2, 4)], {}
    if name == "rsub":
        return [vec()], {"other": 2.0}
    if name in ("maximum", "minimum"):
        a = vec()
        return [a, a + rng.choice([-1, 1], 4) * rng.uniform(0.3, 1, 4)], {}
    if name in ("sum", "mean", "norm", "logsumexp", "max", "min"):
        return [rng.permutation(np.linspace(-2, 2, 12)).reshape(3, 4)], {"dim": 1}
    if name == "dot":
        return [vec(), vec()], {}
    if name == "mv":
        return [rng.uniform(-2, 2, (3, 4)), vec()], {}
    if name == "vm":
        return [vec(3), rng.uniform(-2, 2, (3, 4))], {}
    if name == "mm":
        return [rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4, 2))], {}
    if name == "transpose":
        return [rng.uniform(-2, 2, (3, 4))], {}
    if name in ("select", "slice"):
        key = (slice(None), 1) if name == "select" else (slice(1, 3),)
        return [rng.uniform(-2, 2, (3, 4))], {"key": key}
    if name == "stack3":
        return [vec(), vec(), vec()], {}
    return [vec() for _ in range(OPS[name].arity)], {}


@pytest.mark.parametrize("name", sorted(OPS))
def test_vjp_matches_central_differences(name):
    op = OPS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # (hash() differs per process)
    for trial in range(3):
        inputs, kw = sample(name, rng)
        out = np.asarray(op.fn(*inputs, **kw))
        g = rng.uniform(-1, 1, out.shape)
        for i, x in enumerate(inputs):
            def scalar(xi, i=i):
                args = list(inputs)
                args[i] = xi
                return float(np.sum(g * op.fn(*args, **kw)))

            numeric = central_difference(scalar, np.array(x, dtype=np.float64))
            analytic = unbroadcast(np.asarray(op.vjp[i](g, out, *inputs, **kw)), np.shape(x))
            np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7,
                                       err_msg=f"{name} input {i}, trial {trial}")


def test_every_op_has_a_torch_style_name():
    for op in OPS.values():
        assert op.grad_fn.endswith(("Backward0", "Backward1", "Backward2", "Backward4")), op


def test_kinks_follow_pytorch():
    # relu'(0) = 0 and abs'(0) = 0, as PyTorch defines them
    zero = np.zeros(1)
    assert OPS["relu"].vjp[0](np.ones(1), OPS["relu"].fn(zero), zero)[0] == 0
    assert OPS["abs"].vjp[0](np.ones(1), OPS["abs"].fn(zero), zero)[0] == 0
    # maximum/minimum at a tie split the gradient in half, as PyTorch does
    a = np.array([1.0])
    assert OPS["maximum"].vjp[0](np.ones(1), a, a, a)[0] == 0.5
    assert OPS["minimum"].vjp[1](np.ones(1), a, a, a)[0] == 0.5
    # max over ties shares the gradient evenly (PyTorch's evenly_distribute_backward)
    v = np.array([3.0, 1.0, 3.0])
    np.testing.assert_array_equal(OPS["max"].vjp[0](np.float64(1), np.float64(3), v),
                                  [0.5, 0, 0.5])


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].reads != "io"))
def test_declared_reads_are_all_a_vjp_reads(name):
    """Op.reads says which values backward needs; replays overwrite the others. A VJP given
    garbage in place of what it claims not to read must give the same result."""
    op = OPS[name]
    rng = np.random.default_rng(5)
    inputs, kw = sample(name, rng)
    out = op.fn(*inputs, **kw)
    g = rng.standard_normal(np.shape(out))
    junk_in = [np.full_like(x, np.nan) for x in inputs]
    junk_out = np.full_like(out, np.nan)
    for k, vjp in enumerate(op.vjp):
        want = vjp(g, out, *inputs, **kw)
        got = vjp(g, out if "o" in op.reads else junk_out,
                  *(inputs if "i" in op.reads else junk_in), **kw)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} input {k}")


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].into is not None))
def test_writing_into_a_buffer_gives_the_same_bits(name):
    op = OPS[name]
    rng = np.random.default_rng(6)
    inputs, kw = sample(name, rng)
    for exponent in ((2, 2.5) if name == "pow_scalar" else (None,)):
        if exponent is not None:
            kw = {"exponent": exponent}
        want = op.fn(*inputs, **kw)
        buffer = np.empty_like(want)
        assert op.into(*inputs, **kw, out=buffer) is buffer
        assert buffer.tobytes() == np.asarray(want).tobytes()


def test_square_vjp_into_a_buffer_after_a_whole_sum():
    op = OPS["pow_scalar"]
    a = np.random.default_rng(7).standard_normal(8)
    g = np.broadcast_to(np.float64(1.5), a.shape)  # what sum's VJP hands on
    want = op.vjp[0](g, a * a, a, exponent=2)
    buffer = np.empty_like(a)
    assert op.vjp_into[0](g, a * a, a, exponent=2, buffer=buffer) is buffer
    assert buffer.tobytes() == want.tobytes()
    other = op.vjp_into[0](np.ones(8), a * a, a, exponent=2, buffer=buffer)  # not one number
    assert other is not buffer and np.array_equal(other, op.vjp[0](np.ones(8), a * a, a,
                                                                   exponent=2))
