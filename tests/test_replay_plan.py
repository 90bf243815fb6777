"""ddx/replay/plan.py: a template that comes back replays by precomputed steps; its numbers
must be the ordinary path's, bit for bit, and a floating-point event must still send the
call the ordinary way. ddx/replay/allocator.py: when glibc's thresholds are raised."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from exprgen import exprs, to_text
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ddx
from ddx.app.api import Trace
from ddx.graph import record
from ddx.replay import allocator, chain, plan
from ddx.replay.cache import TEMPLATES
from ddx.replay.plan import Plan

PROGRAMS = [
    ("(w*x+b)^2", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("sum((w*x+b)^2)", {"w": 3.0, "x": 2.0, "b": 1.0}),  # a sum of one number: itself
    ("sum((w*x+b)^2)", {"w": [3.0, -1.5], "x": [2.0, 0.25], "b": [1.0, 7.0]}),
    ("sum((w*x+b)^2)", {"w": 0.5, "x": [[2.0], [0.25]], "b": [1.0, 7.0, -3.0]}),  # broadcast
    ("2/x + x/2 - 3 - x + 2^x + x^2 + x^0.5 + x^y + (-x) * +y", {"x": 1.5, "y": 0.25}),
    ("y = w*x; z = y + 2/b; sin(z)*y - 3^x", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("y = x*x; z = y; q = z + y; unused = x + 1; q * 2*3", {"x": 0.5}),
    ("sum(x) + mean(x*y) + max(x) + min(y) + norm(x) + logsumexp(y)",
     {"x": [1.0, -2.0, 3.0], "y": [[0.5], [0.25]]}),
    ("sum(sqrt(w*w + 1) - tanh(x) + sigmoid(b) * relu(x - b)) + (x^3.5 + x^-1.5)[0]",
     {"w": [0.3, 2.0, 1.0], "x": [0.7, 1.1, 2.5], "b": [0.1, -0.2, 0.3]}),
    ("sum(maximum(A, x) * sum(A, dim=0)) + logsumexp(A @ x)",  # keywords, two-input rows
     {"A": [[0.3, 2.0], [1.0, -0.5]], "x": [0.7, 1.1]}),
    ("y = w*x; y = y + y; sum(y * y)", {"w": [1.0, 2.0], "x": 3.0}),  # a name used twice
]


def _replayed(text: str, bindings: dict) -> Trace:
    """The fourth trace of the same text and shapes: the kept template's second replay (a
    program recorded as a graph makes its template on the second trace), by its Plan."""
    TEMPLATES.clear()
    for _ in range(4):
        g = ddx.trace(text, bindings)
        g.backward(None if np.size(g.value) == 1 else "ones")
    return g


def _same(text: str, bindings: dict) -> None:
    g = _replayed(text, bindings)
    assert g._fast is not None and g._fast.template.plan.__class__ is Plan, text
    ordinary = Trace(text, bindings, lean=False)
    ordinary.backward(None if ordinary.output.value.size == 1 else "ones")
    assert g.value.tobytes() == ordinary.value.tobytes(), text
    assert g.value.dtype == ordinary.value.dtype and g.value.shape == ordinary.value.shape
    for name, grad in g.grads.items():
        want = ordinary.grads[name]
        assert grad.tobytes() == want.tobytes() and grad.shape == want.shape, (text, name)


@pytest.mark.parametrize("text, bindings", PROGRAMS)
def test_a_planned_replay_is_the_ordinary_path_bit_for_bit(text, bindings):
    _same(text, bindings)


@settings(max_examples=60, deadline=None)
@given(exprs, st.floats(-2, 2), st.floats(-2, 2), st.floats(-2, 2))
def test_random_programs_replay_by_plan_bit_for_bit(tree, a, b, c):
    text = to_text(tree, False) + " + a*b*c"
    bindings = {"a": a, "b": b, "c": c}
    assume(not Trace(text, bindings, lean=False).warnings)  # (those run the ordinary way)
    _same(text, bindings)


def test_a_planned_replay_gives_way_to_the_ordinary_path_on_a_domain_problem():
    g = _replayed("log(x) + x", {"x": 1.0})
    assert g._fast.template.plan.__class__ is Plan
    bad = ddx.trace("log(x) + x", x=0.0)  # the same template: an event in its forward
    bad.backward()
    assert bad.warnings and float(bad.value) == -np.inf and float(bad.grads["x"]) == np.inf
    ok = ddx.trace("sqrt(x) * 0 + x", x=1.0)
    ok.backward()
    for _ in range(2):  # the event only in the backward pass (1/(2*sqrt(0)) = inf, times 0)
        g = ddx.trace("sqrt(x) * 0 + x", x=0.0)
        g.backward()
        assert np.isnan(g.grads["x"]) and g.warnings


def test_a_one_off_template_makes_no_plan():
    from ddx.replay.lean import compile_source

    t = compile_source("w*x + 1", ["w", "x"], [(), ()], np.dtype(np.float64))
    values = t.forward([np.asarray(2.0), np.asarray(3.0)])
    t.backward(values, t.g0)
    assert t.plan == 1  # (made on a second run)
    values = t.forward([np.asarray(2.0), np.asarray(3.0)])
    assert t.plan.__class__ is Plan and float(values[t.output]) == 7.0


def test_large_arrays_take_the_buffer_reusing_path_not_a_plan(monkeypatch):
    monkeypatch.setattr(chain, "ENABLED", [False])  # (a sum chain.py's C loop would take)
    n = plan.SMALL + 1
    g = _replayed("sum((w*x+b)^2)", {k: np.full(n, 0.5) for k in "wxb"})
    assert g._fast.template.plan == 2  # template.LARGE
    assert float(g.value) == n * 0.5625 and g.grads["b"][0] == 1.5


def test_the_guard_sets_fp_guards_error_state_and_puts_back_the_callers():
    with record.fp_guard():
        want = (np.geterr(), np.geterrcall())
    before = (np.geterr(), np.geterrcall())
    with plan.guard():
        assert (np.geterr(), np.geterrcall()) == want
        record.FP_EVENTS.append("stale")
    assert (np.geterr(), np.geterrcall()) == before
    with plan.guard():
        assert record.FP_EVENTS == []  # events of earlier work are dropped, as fp_guard does
        np.log(np.zeros(1))
        assert record.FP_EVENTS == ["divide by zero"]
    record.FP_EVENTS.clear()


@pytest.mark.parametrize("env, wanted", [
    ({}, True),
    ({"DDX_MALLOC": "default"}, False),
    ({"DDX_MALLOC": " Default "}, False),
    ({"MALLOC_ARENA_MAX": "2"}, False),     # the user tunes glibc's allocator: left alone
    ({"MALLOC_MMAP_THRESHOLD_": "131072"}, False),
    ({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"}, False),
])
def test_the_allocator_is_tuned_only_where_the_user_did_not(env, wanted):
    assert allocator.wanted(env) is (wanted and sys.platform.startswith("linux"))


PROBE = """
import sys, numpy as np, ddx
from ddx.replay import allocator
g = ddx.trace("x*2 + 1", x=3.0); g.backward()
scalar = list(allocator._done)
for _ in range(2):
    g = ddx.trace("sum((w*x)^2)", w=np.full({n}, 0.5), x=np.full({n}, 2.0)); g.backward()
print(scalar, allocator._done, float(g.value), float(g.grads["w"][-1]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
@pytest.mark.parametrize("setting, tuned, n", [
    (None, "[True]", plan.SMALL * 2),  # arrays too large for a Plan
    (None, "[True]", 10_000),  # a Plan's arrays, together past glibc's trim threshold
    (None, "[False]", 1_000),
    ("default", "[False]", plan.SMALL * 2),
])
def test_large_replays_tune_the_allocator_once_and_scalars_never(setting, tuned, n):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MALLOC_") and k not in ("GLIBC_TUNABLES", "DDX_MALLOC")}
    if setting is not None:
        env["DDX_MALLOC"] = setting
    proc = subprocess.run([sys.executable, "-c", PROBE.format(n=n)], capture_output=True,
                          text=True, env=env, check=True)
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    expected = tuned if libc.startswith("glibc") else "[False]"
    if expected == "[False]" and setting is None:
        expected = "[]"  # (never asked)
    assert proc.stdout.split() == ["[]", expected, repr(float(n)), "4.0"]


@pytest.mark.parametrize("bindings", [
    {"w": 3, "x": 2.0, "b": np.float64(1.0)},                        # ints, floats, numpy scalars
    {"w": 0.5, "x": np.linspace(-1, 1, 4), "b": 2},                  # numbers beside an array
    {"w": np.arange(4.0).reshape(2, 2), "x": np.ones(2), "b": -1.5},
])
def test_plain_bindings_replay_as_the_ordinary_path(bindings):
    """ddx.trace's short road for plain numbers and float64 arrays (replay/cache.replay_plain)
    gives what the ordinary construction gives, values, gradients and JSON."""
    text = "sum((w*x+b)^2)"
    g = _replayed(text, bindings)
    assert g._fast is not None
    ordinary = Trace(text, bindings, lean=False)
    ordinary.backward()
    assert g.value.tobytes() == ordinary.value.tobytes()
    for name in bindings:
        assert g.grads[name].tobytes() == ordinary.grads[name].tobytes()
        assert g.grads[name].shape == np.shape(bindings[name])
    assert g.to_json() == ordinary.to_json()


def test_bindings_the_short_road_does_not_take_go_the_ordinary_way():
    _replayed("w*x", {"w": 2.0, "x": 3.0})
    big = ddx.trace("w*x", w=2.0, x=np.array([3.0], dtype=">f8").reshape(()))  # big-endian
    assert float(big.value) == 6.0
    def error(**options):
        try:
            Trace("w*x", {"w": 2.0, "x": 10 ** 400}, **options)  # too large for a float
        except Exception as exc:  # noqa: BLE001 - whatever the ordinary road raises
            return type(exc), str(exc)
    assert error() == error(lean=False) is not None
    text = ddx.trace("w*x", w="2", x="pi")  # constant expressions as text
    assert float(text.value) == 2 * np.pi
