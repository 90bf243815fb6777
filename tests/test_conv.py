"""Convolution and pooling (issue 15: the CNN tutorials): F.conv1d/2d/3d and
F.conv_transpose1d/2d/3d, F.max_pool1d-3d, F.avg_pool1d-3d and their nn modules. The scripts
tests/pyscripts/doc8_*.py print what PyTorch prints (values, graphs, module reprs, parameters
drawn from the seeded generator, error messages: tests/test_python_subset.py runs them); the
kernels are checked against torch on random geometries: the pools' values and gradients bit
for bit in float32 and float64, the convolutions' to 1e-12 in float64 (their float32 sums are
BLAS's, not oneDNN's: within a few ulps); the Hessian of a small CNN against
torch.autograd.functional.hessian. (Every mode of the rows, the second derivatives and
forward-mode tangents included, is run by tests/test_table.py from the rows alone.)"""

from __future__ import annotations

import json

import numpy as np
from conftest import ddx_and_python, torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

import ddx
from ddx.ops import kernels_conv as K

SAME = "warning: Using padding='same' with even kernel lengths and odd dilation may require"
SAME_SCRIPT = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 2, 5, 4, dtype=torch.float64, requires_grad=True)
w = torch.randn(3, 2, 2, 3, dtype=torch.float64)
y = F.conv2d(x, w, padding='same')
print(y.shape, y.grad_fn.next_functions[0][0].name())
y.sum().backward()
print(x.grad)
"""


def test_same_padding_with_an_even_kernel_pads_first_and_warns_once(tmp_path):
    """(The scripts tests/pyscripts/doc8_*.py are run against PyTorch by
    tests/test_python_subset.py, which wants nothing on stderr: this case warns.)"""
    torch_or_skip()
    ours, theirs = ddx_and_python(SAME_SCRIPT, tmp_path, SAME)
    assert ours == theirs
    assert ours[0] == "torch.Size([1, 3, 5, 4]) ConstantPadNdBackward0"


@st.composite
def conv_case(draw):
    n = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(n))
    size = tuple(draw(st.integers(max(1, dilation[i] * (k[i] - 1) + 1 - 2 * padding[i]), 6))
                 for i in range(n))
    batch = draw(st.integers(1, 2))
    return dict(x=(batch, cg * groups, *size), w=(og * groups, cg, *k),
                kw=dict(stride=stride, padding=padding, dilation=dilation, groups=groups),
                seed=draw(st.integers(0, 2**16)))


@settings(max_examples=60, deadline=None)
@given(case=conv_case())
def test_convolution_and_its_gradients_are_torchs(case):
    torch = torch_or_skip()
    import torch.nn.functional as F

    rng = np.random.default_rng(case["seed"])
    x, w = rng.standard_normal(case["x"]), rng.standard_normal(case["w"])
    b = rng.standard_normal(case["w"][0])
    kw = case["kw"]
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    conv = (F.conv1d, F.conv2d, F.conv3d)[len(case["w"]) - 3]
    y = conv(tx, tw, tb, **kw)
    g = rng.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(g))
    ours = K.convolve(x, w, b, **kw)
    assert ours.shape == tuple(y.shape)
    np.testing.assert_allclose(ours, y.detach().numpy(), rtol=1e-12, atol=1e-12)
    for rule, t in ((K.conv_vjp_input, tx), (K.conv_vjp_weight, tw), (K.conv_vjp_bias, tb)):
        np.testing.assert_allclose(rule(g, ours, x, w, b, **kw), t.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(case=conv_case(), extra=st.integers(0, 2))
def test_transposed_convolution_and_its_gradients_are_torchs(case, extra):
    torch = torch_or_skip()
    import torch.nn.functional as F

    rng = np.random.default_rng(case["seed"])
    kw = dict(case["kw"])
    # (the weight (C_in, C_out / groups, *k); an output_padding below stride or dilation)
    w_shape = (case["x"][1], case["w"][0] // kw["groups"], *case["w"][2:])
    kw["output_padding"] = tuple(min(extra, max(s, d) - 1) for s, d in
                                 zip(kw["stride"], kw["dilation"]))
    x, w = rng.standard_normal(case["x"]), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * kw["groups"])
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[len(w_shape) - 3]
    try:
        y = conv(tx, tw, tb, **kw)
    except RuntimeError:  # (an output of size < 1: the caller's error, tested through scripts)
        return
    g = rng.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(g))
    ours = K.convolve_transposed(x, w, b, **kw)
    np.testing.assert_allclose(ours, y.detach().numpy(), rtol=1e-12, atol=1e-12)
    for rule, t in ((K.transposed_vjp_input, tx), (K.transposed_vjp_weight, tw),
                    (K.conv_vjp_bias, tb)):
        np.testing.assert_allclose(rule(g, ours, x, w, b, **kw), t.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)


def test_float32_convolution_is_within_a_few_ulps_of_torchs():
    torch = torch_or_skip()
    import torch.nn.functional as F

    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8, 12, 12)).astype(np.float32)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    ours = K.convolve(x, w, None, stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1)
    theirs = F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=8 * np.finfo(np.float32).eps *
                               np.abs(theirs).max())


@st.composite
def pool_case(draw):
    n = draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    padding = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    size = tuple(draw(st.integers(dilation[i] * (k[i] - 1) + 1, 7)) for i in range(n))
    return dict(shape=(2, 3, *size), k=k, stride=stride, padding=padding, dilation=dilation,
                ceil=draw(st.booleans()), include=draw(st.booleans()),
                dtype=draw(st.sampled_from(["float32", "float64"])),
                seed=draw(st.integers(0, 2**16)))


def _bits_equal(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)


@settings(max_examples=80, deadline=None)
@given(case=pool_case())
def test_pools_and_their_gradients_are_torchs_bit_for_bit(case):
    torch = torch_or_skip()
    import torch.nn.functional as F

    n = len(case["k"])
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal(case["shape"]).astype(case["dtype"])
    kw = dict(kernel_size=case["k"], stride=case["stride"], padding=case["padding"],
              dilation=case["dilation"], ceil_mode=case["ceil"])
    t = torch.tensor(x, requires_grad=True)
    maxpool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
    values, index = maxpool(t, case["k"], case["stride"], case["padding"], case["dilation"],
                            case["ceil"], return_indices=True)
    g = rng.standard_normal(tuple(values.shape)).astype(case["dtype"])
    values.backward(torch.tensor(g))
    ours, ours_index = K.max_pool_indices(x, n, **kw)
    _bits_equal(ours, values.detach().numpy())
    _bits_equal(ours_index, index.numpy())
    _bits_equal(K.max_pool_vjp(g, ours, x, **kw), t.grad.numpy())
    if n == 1 or any(d != 1 for d in case["dilation"]):
        return  # (avg_pool1d is the 2-d one unsqueezed, checked through the scripts)
    del kw["dilation"]
    kw["count_include_pad"] = case["include"]
    t.grad = None
    avgpool = (None, F.avg_pool2d, F.avg_pool3d)[n - 1]
    a = avgpool(t, case["k"], case["stride"], case["padding"], case["ceil"], case["include"])
    ga = rng.standard_normal(tuple(a.shape)).astype(case["dtype"])
    a.backward(torch.tensor(ga))
    ours = K.avg_pool(x, **kw)
    _bits_equal(ours, a.detach().numpy())
    _bits_equal(K.avg_pool_vjp(ga, ours, x, **kw), t.grad.numpy())


def test_a_small_cnns_hessian_is_torchs():
    """conv2d, tanh, avg_pool2d, max_pool2d, summed: ddx's forward-over-reverse Hessian of
    the kernel and the input together against torch.autograd.functional.hessian."""
    torch = torch_or_skip()
    import torch.nn.functional as F

    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 2, 2))
    text = "sum(max_pool2d(avg_pool2d(tanh(conv2d(x, w, None, 1, 1)), 2, 1), 2))"
    g = ddx.trace(text, x=x, w=w).backward()
    ours = g.hessian()["hessian"]

    def f(a, b):
        return F.max_pool2d(F.avg_pool2d(torch.tanh(F.conv2d(a, b, None, 1, 1)), 2, 1), 2).sum()

    theirs = torch.autograd.functional.hessian(f, (torch.tensor(x), torch.tensor(w)))
    for i, a in enumerate("xw"):
        for j, b in enumerate("xw"):
            np.testing.assert_allclose(ours[a][b], theirs[i][j].numpy(), rtol=1e-9, atol=1e-12)


def test_the_one_liner_convolves_and_reports_pytorchs_errors(run):
    x = "[[[[1,2,3],[4,5,6],[7,8,9]]]]"
    w = "[[[[1,0],[0,-1]]]]"
    code, out, err = run("sum(conv2d(x, w))", f"x={x}", f"w={w}", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["value"] == -16.0
    # d/dw: each weight's sum of the inputs it meets; d/dx: the weights each input meets
    assert result["gradients"]["w"] == [[[[12.0, 16.0], [24.0, 28.0]]]]
    assert result["gradients"]["x"] == [[[[1.0, 1.0, 0.0], [1.0, 0.0, -1.0], [0.0, -1.0, -1.0]]]]
    code, out, err = run("conv2d(x, w)", "x=[[1,2],[3,4]]", f"w={w}")
    assert code == 1
    assert err.splitlines()[0] == "error: Expected 3D (unbatched) or 4D (batched) input to " \
        "conv2d, but got input of size: [2, 2]"
    assert "Traceback" not in err
