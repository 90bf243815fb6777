"""Shared test helpers: the CLI runner, and PyTorch as an oracle where it is installed."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from ddx.app.cli import main


@pytest.fixture(autouse=True)
def _own_template_cache(request, monkeypatch, tmp_path_factory):
    """Each test its own template disk cache (ddx/replay/diskcache.py), never the user's."""
    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("DDX_TEMPLATE_CACHE", str(tmp_path_factory.getbasetemp() / "ddxt" / name))


@pytest.fixture
def run():
    """Invoke the ddx CLI in-process; returns (exit_code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args, input=None):
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def run_json(run):
    def invoke(*args):
        code, out, err = run(*args, "--json")
        return code, json.loads(out), err

    return invoke


def torch_or_skip():
    """PyTorch for oracle tests. CI sets DDX_REQUIRE_TORCH=1, so there a missing torch fails."""
    try:
        import torch
    except ImportError:
        if os.environ.get("DDX_REQUIRE_TORCH"):
            raise
        pytest.skip("PyTorch not installed (CI installs it)")
    torch.set_default_dtype(torch.float64)
    return torch


def central_difference(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d f(x) / dx for scalar-valued f, by central differences, one coordinate at a time."""
    x = np.array(x, order="C")  # (x.reshape(-1) of a transposed array is a copy)
    grad = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        up = f(x)
        flat[i] = old - h
        down = f(x)
        flat[i] = old
        grad.reshape(-1)[i] = (up - down) / (2 * h)
    return grad


def session_run(text: str) -> list[str]:
    """Run a script; stdout lines, and each error's first line in its place."""
    from ddx.app.session import Session

    lines: list[str] = []
    session = Session(lines.append, lambda t: lines.append(t.splitlines()[0])
                      if t.startswith("error") else None)
    session.run_script(text)
    return lines


def ddx_and_python(script_text: str, folder, warning: str | None = None
                   ) -> tuple[list[str], list[str]]:
    """The lines a script prints through `ddx run` and through Python (with PyTorch where it
    imports it), each in its own process; both must run without an error on stderr (ddx with
    just the one line ``warning`` there, when one is given)."""
    import subprocess
    import sys

    script = folder / "script.py"
    script.write_text(script_text)
    ours = subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    if warning is None:
        assert ours.stderr == "", ours.stderr
    else:
        assert ours.stderr.startswith(warning) and ours.stderr.count("\n") == 1, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    return ours.stdout.splitlines(), theirs.stdout.splitlines()


def wxb(n: int, seed: int = 3) -> dict:
    """Bindings w, x, b of n normal values (scales 1, 2 and 0.5)."""
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(n) * s for k, s in (("w", 1.0), ("x", 2.0), ("b", 0.5))}


def replayed(text: str, bindings: dict, gradient=None):
    """The third trace of a text (a kept template, replayed) and its template (None when
    none was kept: a trace with a warning keeps none)."""
    import ddx
    from ddx.replay.cache import TEMPLATES

    for _ in range(3):
        g = ddx.trace(text, bindings)
        g.backward(gradient)
    key = next((k for k in TEMPLATES if k[0] == text), None)
    return g, TEMPLATES.get(key)


def ordinary(text: str, bindings: dict, gradient=None):
    """The trace the ordinary way (retain_grad: no template, the Tensor graph)."""
    import ddx

    g = ddx.trace(text, bindings, retain_grad=True)
    g.backward(gradient)
    return g


def ddx_run(tmp_path, text: str):
    """`ddx run` of ``text`` written to a script in tmp_path (its CompletedProcess)."""
    import subprocess
    import sys

    script = tmp_path / "s.py"
    script.write_text(text)
    return subprocess.run([sys.executable, "-m", "ddx", "run", str(script)], capture_output=True,
                          text=True, timeout=120)
