"""Everyday PyTorch pasted into `ddx run` (issue 15, round 6): the examples of PyTorch's own
documentation for torch.nn's modules and losses, torch.nn.functional, the optimizers and the
lr schedulers, with torch.manual_seed(0) and the results printed. Each script in
tests/pyscripts/doc6_*.py runs through ddx and through Python with PyTorch; the outputs must
be equal line for line."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ddx_and_python, ddx_run, torch_or_skip

SCRIPTS = sorted((Path(__file__).parent / "pyscripts").glob("doc6_*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_doc6_example_prints_as_pytorch(path, tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(path.read_text(), tmp_path)
    assert ours == theirs


def test_second_derivative_through_a_kernel_node_is_one_clear_line(tmp_path):
    """GluBackward0 (and a custom Function's node) hold a first derivative only: create_graph
    through them, hessian and jvp say so in one line, where they were internal errors."""
    got = ddx_run(tmp_path, "import torch\nimport torch.nn.functional as F\n"
                             "x = torch.tensor([0.5, -1.0, 2.0, 0.3], requires_grad=True)\n"
                             "g, = torch.autograd.grad(F.glu(x).sum(), x, create_graph=True)\n"
                             "h, = torch.autograd.grad(g.sum(), x)\n"
                             "from torch.autograd.functional import hessian, jvp\n"
                             "hessian(lambda t: F.glu(t).sum(), x)\n"
                             "jvp(lambda t: F.glu(t), x, torch.ones(4))\n")
    errors = [line for line in got.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: ddx computes the first derivative of GluBackward0 only: a second derivative "
        "through it is not supported"] * 2 + [
        "error: ddx computes the first derivative of GluBackward0 only: forward mode (jvp) "
        "through it is not supported"]
    assert "Traceback" not in got.stderr and "internal error" not in got.stderr


def test_layer_norm_values_are_atens_to_the_bit(tmp_path):
    """F.layer_norm's values are its CPU kernel's (RowwiseMoments on 8 float lanes, with
    fmas), for widths that take the vector body, the cascade and the scalar tail."""
    torch = torch_or_skip()
    import numpy as np

    from ddx.app.pymoments import rowwise_moments

    torch.manual_seed(3)
    for n in (1, 5, 8, 9, 17, 128, 129, 1000, 4097):
        x = torch.randn(40, n, dtype=torch.float32) * 3 - 1
        _, mean, rstd = torch.native_layer_norm(x, (n,), None, None, 1e-5)
        m, var = rowwise_moments(x.numpy())
        ours = (np.float32(1) / np.sqrt((var + np.float32(1e-5)).astype(np.float32)))
        assert m.tobytes() == mean.numpy().reshape(-1).tobytes(), n
        assert ours.astype(np.float32).tobytes() == rstd.numpy().reshape(-1).tobytes(), n
        xd = x.double()
        _, mean, rstd = torch.native_layer_norm(xd, (n,), None, None, 1e-5)
        m, var = rowwise_moments(xd.numpy())
        assert m.tobytes() == mean.numpy().reshape(-1).tobytes(), n
        assert (1 / np.sqrt(var + 1e-5)).tobytes() == rstd.numpy().reshape(-1).tobytes(), n


def test_feature_dropout_as_functional_py_runs_it(tmp_path):
    """dropout1d/3d unsqueeze an unbatched input (SqueezeBackward1 on the result); dropout2d
    takes a 3-d input as (N, C, L), with PyTorch's warning; the draws are the generator's."""
    torch_or_skip()
    text = (Path(__file__).parent / "pyscripts" / "warned" / "feature_dropout6.py").read_text()
    ours, theirs = ddx_and_python(text, tmp_path, warning="warning: dropout2d: Received a 3D "
                                  "input to dropout2d and assuming that channel-wise 1D dropout")
    assert ours == theirs


def test_hook_based_weight_norm_and_spectral_norm(tmp_path):
    """nn.utils.weight_norm (with PyTorch's FutureWarning) and spectral_norm: parameters,
    buffers drawn from the generator, the weight recomputed before each forward."""
    torch_or_skip()
    text = (Path(__file__).parent / "pyscripts" / "warned" / "weight_spectral_norm6.py").read_text()
    ours, theirs = ddx_and_python(text, tmp_path, warning="warning: `torch.nn.utils.weight_norm` "
                                  "is deprecated in favor of")
    assert ours == theirs
