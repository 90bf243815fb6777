"""Every row of the op table: its VJP against central differences at random points."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from conftest import central_difference

from ddx.engine.reverse import unbroadcast
from ddx.ops import OPS, stack_op

stack_op(3)


def bindings(name: str, rng: np.random.Generator, *, vector: bool = True) -> dict:
    """Random values for the variables of row ``name``'s example, inside its domain (an
    elementwise row's scalars become vectors of 4: the kernels see arrays)."""
    row = OPS[name]
    source, shapes = row.example
    lo, hi = row.domain
    out = {}
    for var in ("x", "y"):
        if var not in source.replace("exp", "").replace("max", ""):
            continue
        shape = shapes.get(var, (4,) if vector and row.elementwise else ())
        out[var] = rng.uniform(lo, hi, shape)
    return out


def node_of(name: str, trace):
    """The node of op ``name`` in a trace of its example."""
    return next(t for t in trace.nodes if t.op == name)


def sample(name: str, rng: np.random.Generator):
    """(positional inputs, keyword arguments) for one random evaluation of op ``name``: its
    row's example, traced, and the inputs its node got."""
    import ddx

    source = OPS[name].example[0]
    if OPS[name].call == "reduction" and rng.random() < 0.5:  # and the variant with dim
        source = source.replace("(x)", "(x, dim=1)")
        if name in ("max", "min"):  # (with a dim, PyTorch's (values, indices))
            source += "[0]"
        b = {"x": rng.permutation(np.linspace(-2, 2, 12)).reshape(3, 4)}
    else:
        b = bindings(name, rng)
    t = node_of(name, ddx.trace(source, **b))
    return [s.value.item() if s.weak else s.value for s in t.inputs], dict(t.kw)


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
        if not op.differentiable:  # (gt, argmax: their results never have a grad_fn)
            assert op.grad_fn == "", op
            continue
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


def test_relu_and_clamps_with_number_bounds_give_the_input_at_a_bound_as_pytorch():
    """-0.0 against the bound 0 is a tie: ATen's relu, clamp, clamp_min/max, relu6 and
    hardtanh with number bounds return the input there, so relu(-0.0) is -0. (it prints)."""
    from conftest import session_run, torch_or_skip

    torch = torch_or_skip()
    import torch.nn.functional as F

    torch.set_default_dtype(torch.float32)  # (PyTorch's own default, as the script has it)
    try:
        x = torch.tensor([-0.0, 0.0, -1.0, 7.0])
        want = [str(v) for v in (torch.relu(x), F.relu6(x), F.hardtanh(x, 0.0, 1.0),
                                 x.clamp(min=0), x.clamp(0, 6), torch.clamp_min(x, 0.0),
                                 torch.clamp_max(-x, 0.0), torch.nn.ReLU()(x))]
    finally:
        torch.set_default_dtype(torch.float64)
    assert want[0] == "tensor([-0., 0., 0., 7.])"
    got = session_run(
        "import torch\nimport torch.nn.functional as F\n"
        "x = torch.tensor([-0.0, 0.0, -1.0, 7.0])\n"
        "print(torch.relu(x))\nprint(F.relu6(x))\nprint(F.hardtanh(x, 0.0, 1.0))\n"
        "print(x.clamp(min=0))\nprint(x.clamp(0, 6))\nprint(torch.clamp_min(x, 0.0))\n"
        "print(torch.clamp_max(-x, 0.0))\nprint(torch.nn.ReLU()(x))\n")
    assert got == want
