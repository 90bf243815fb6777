"""ddx/replay/blocked.py: a whole sum of an elementwise chain replayed block by block, forward
and backward in one pass, must give the ordinary road's bits (value, every gradient, the
warnings), and must stand aside where its conditions do not hold."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ordinary, replayed, torch_or_skip, wxb

import ddx
from ddx.replay import blocked, parallel
from ddx.replay.cache import TEMPLATES

N = 70_016  # (a multiple of 64 over two of PyTorch's grain sizes: two thread ranges)
TEXTS = ["sum((w*x+b)^2)", "sum(tanh(w*x) + exp(-b*b)/2)", "sum(w*w*x - b/x + sqrt(abs(x)))",
         "sum(sin(w)*cos(x)*b + w)", "sum(-(w - x)^3 * 0.5)", "mean((w*x - b)^2)"]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks at test sizes: many ranges per thread, as 10^7 elements have at CHUNK."""
    monkeypatch.setattr(blocked, "MIN_ELEMENTS", 1 << 15)
    monkeypatch.setattr(blocked, "CHUNK", 4096)
    TEMPLATES.clear()
    yield
    TEMPLATES.clear()


def _same(a, b) -> bool:
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


@pytest.mark.parametrize("text", TEXTS)
def test_bits_are_the_ordinary_roads(text):
    bindings = wxb(N)
    got, template = replayed(text, bindings)
    want = ordinary(text, bindings)
    assert template.blocked  # (the template is one it takes)
    assert type(template.forward(list(bindings.values()), reuse=True)) is blocked.Speculated
    assert _same(got.value, want.value)
    for name in "wxb":
        assert _same(got.grads[name], want.grads[name]), name


def test_against_torch():
    torch = torch_or_skip()
    bindings = wxb(N, seed=11)
    got, _ = replayed("sum((w*x+b)^2)", bindings)
    t = {k: torch.tensor(v, requires_grad=True) for k, v in bindings.items()}
    loss = ((t["w"] * t["x"] + t["b"]) ** 2).sum()
    loss.backward()
    assert _same(got.value, loss.detach().numpy())
    for name in "wxb":
        assert _same(got.grads[name], t[name].grad.numpy()), name


def test_one_thread_and_two_agree():
    bindings = wxb(N, seed=5)
    parallel.set_threads(1)
    try:
        one, _ = replayed(TEXTS[1], bindings)
        one = (one.value, dict(one.grads))
    finally:
        parallel.set_threads(2)
    TEMPLATES.clear()
    two, _ = replayed(TEXTS[1], bindings)
    assert _same(one[0], two.value)
    assert all(_same(one[1][k], two.grads[k]) for k in "wxb")


def test_another_seed_runs_the_values_again():
    bindings = wxb(N, seed=7)
    got, template = replayed("sum(w*x*b)", bindings, gradient=2.5)
    want = ordinary("sum(w*x*b)", bindings, gradient=2.5)
    assert template.blocked
    for name in "wxb":
        assert _same(got.grads[name], want.grads[name]), name
    assert _same(got.grads["w"], (2.5 * bindings["b"]) * bindings["x"])  # (g*b, then *x)


def test_a_floating_point_event_takes_the_ordinary_road():
    text = "sum(sqrt(abs(x)) * w)"
    _, template = replayed(text, wxb(N, seed=9))
    assert template.blocked
    bindings = wxb(N, seed=9)
    bindings["x"][1000] = 0.0  # d sqrt(|x|)/dx divides by zero there; the value is fine
    assert type(template.forward(list(bindings.values()), reuse=True)) is not blocked.Speculated
    got = ddx.trace(text, bindings)
    got.backward()
    want = ordinary(text, bindings)
    assert got.warnings == want.warnings and want.warnings
    assert _same(got.value, want.value)
    assert _same(got.grads["x"], want.grads["x"]) and np.isnan(got.grads["x"][1000])


@pytest.mark.parametrize("text, bindings", [
    ("sum(x * mean(w))", {"w": np.linspace(0, 1, N), "x": np.linspace(1, 2, N)}),  # a reduction
    ("sum(w * x)", {"w": 3.0, "x": np.linspace(1, 2, N)}),  # a number among the arrays
    ("sum(w * x)", {"w": np.ones((2, N // 2)), "x": np.ones(N // 2)}),  # broadcast
    ("amax(w * x)", {"w": np.ones(N), "x": np.zeros(N)}),  # (not made from the sum)
    ("sum(w * x)", {"w": np.ones(N // 4), "x": np.ones(N // 4)}),  # small: in cache anyway
])
def test_it_stands_aside(text, bindings):
    got, template = replayed(text, bindings)
    want = ordinary(text, bindings)
    assert not template.blocked
    assert _same(got.value, want.value)
    for name in bindings:
        assert _same(got.grads[name], want.grads[name]), name


def test_unaligned_thread_ranges_and_untuned_malloc_stand_aside(monkeypatch):
    bindings = wxb(N + 1)  # PyTorch's two ranges: the second starts at 35,009
    got, template = replayed("sum((w*x+b)^2)", bindings)
    assert template.blocked
    assert type(template.forward(list(bindings.values()), reuse=True)) is not blocked.Speculated
    assert _same(got.grads["w"], ordinary("sum((w*x+b)^2)", bindings).grads["w"])
    even = wxb(N)
    _, template = replayed("sum((w*x+b)^2)", even)
    monkeypatch.setattr(blocked.allocator, "tune", lambda: False)  # DDX_MALLOC=default
    assert type(template.forward(list(even.values()), reuse=True)) is not blocked.Speculated


def test_a_matrix_is_taken_as_its_rows():
    rng = np.random.default_rng(13)
    bindings = {"w": rng.standard_normal((256, 274)), "x": rng.standard_normal((256, 274))}
    got, template = replayed("mean(w*x - tanh(x))", bindings)
    want = ordinary("mean(w*x - tanh(x))", bindings)
    assert template.blocked
    assert type(template.forward(list(bindings.values()), reuse=True)) is blocked.Speculated
    assert _same(got.value, want.value)
    assert got.grads["w"].shape == (256, 274)
    assert _same(got.grads["w"], want.grads["w"]) and _same(got.grads["x"], want.grads["x"])
    bindings["x"] = np.asfortranarray(bindings["x"])  # (not rows in memory: the other road)
    assert type(template.forward(list(bindings.values()), reuse=True)) is not blocked.Speculated
