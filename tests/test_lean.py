"""ddx/replay/lean.py: programs compiled straight to a replay template must record exactly what the
ordinary path records (ops, inputs, names, labels, backward order), so results are identical."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
from exprgen import exprs, to_text
from hypothesis import given, settings
from hypothesis import strategies as st

import ddx
from ddx.app.api import Trace
from ddx.errors import DdxError
from ddx.lang import syntax
from ddx.lang.syntax import parse
from ddx.ops.kernels_sum import torch_sum
from ddx.replay import parallel
from ddx.replay import reuse as reuse_module
from ddx.replay.cache import TEMPLATES
from ddx.replay.lean import compile_source
from ddx.replay.template import Template


def _ordinary_template(text: str, bindings: dict) -> Template | None:
    trace = Trace(text, bindings, lean=False)
    trace.backward(None if trace.output.value.size == 1 else "ones")
    return Template.from_trace(trace, list(bindings))


def _lean_template(text: str, bindings: dict, *, tree: bool = False) -> Template | None:
    """compile_source while parsing the text, or (``tree``) from its cached syntax tree."""
    if tree:
        parse(text)  # (cached by text)
    else:
        syntax.CACHE.pop(text, None)
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in bindings.items()}
    return compile_source(text, list(arrays), [a.shape for a in arrays.values()],
                          np.dtype(np.float64))


def _fields(t: Template) -> dict:
    return {
        "n": t.n, "slots": t.slots, "scalar": t.scalar, "output": t.output,
        "values0": [None if v is None else float(v) for v in t.values0],
        # the op table's own functions, kw, inputs, and which inputs get gradients
        "columns": [list(c) for c in (t.op, t.fn, t.vjp, t.kw, t.a, t.b, t.grad_slots)],
        "many": t.many,
        "forward_order": list(t.forward_order), "backward_order": t.backward_order,
        "shapes": [(shape, str(dtype)) for shape, dtype in t.shapes],
        "g0": t.g0.tolist(), "one": None if t.one is None else t.one.tolist(),
        "grads_at": t.grads_at, "head": t.head, "statics": t.static_rows(),
        "json_format": t.json_format(),
    }


def assert_same_template(text: str, bindings: dict) -> None:
    lean = _lean_template(text, bindings)
    ordinary = _ordinary_template(text, bindings)
    if ordinary is None:  # a domain warning (exp(exp(3^2)) is inf): no recorded template;
        assert Trace(text, bindings, lean=False).warnings, text
        if lean is not None:  # a compiled one must give way to the ordinary path
            values = lean.forward([np.asarray(v, dtype=np.float64) for v in bindings.values()])
            assert values is None or lean.backward(values, lean.g0) is None, text
        return
    assert lean is not None, text
    assert _fields(lean) == _fields(ordinary), text
    from_tree = _lean_template(text, bindings, tree=True)
    assert from_tree is not None and _fields(from_tree) == _fields(ordinary), text


PROGRAMS = [
    ("(w*x+b)^2", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("exp(exp(3^2)) * c + log(c)", {"c": 0.5}),  # a number folds to inf: no template
    ("sigmoid(exp(3^2)) * c", {"c": 0.5}),  # exp(-8103.1) underflows inside: no event
    ("2/x + x/2 - 3 - x + 2^x + x^2 + x^0.5 + x^y + (-x) * +y", {"x": 1.5, "y": 0.25}),
    ("y = w*x; z = y + 2/b; sin(z)*y - 3^x", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("w = w*2; w + x", {"w": 3.0, "x": 2.0, "b": 1.0}),          # a binding reassigned
    ("y = x*x; z = y; q = z + y; unused = x + 1; q * 2*3", {"x": 0.5}),  # aliases, dead code
    ("-(-x)^2 + pi*e - (2 + 3) * x / (4 - 1)", {"x": 0.7, "e": 2.0}),  # e bound: not Euler's
    ("sum(x) + mean(x*y) + max(x) + min(y) + norm(x) + logsumexp(y)",
     {"x": [1.0, -2.0, 3.0], "y": [[0.5], [0.25]]}),             # broadcasting and reductions
    ("sigmoid(a) + relu(a) + softplus(a) + abs(a) + sqrt(a) + log(a) + log2(a) + log10(a) + "
     "tan(a) + asin(a/2) + acos(a/2) + atan(a) + sinh(a) + cosh(a) + reciprocal(a)",
     {"a": 0.5}),
    ("x + x + x * x", {"x": [1.0, 2.0]}),
    ("c = a * b\nd = c + a\nd * c  # comments and lines", {"a": 2.0, "b": 3.0}),
    ("(" * 60 + "x" + " * 1.5 + 1)" * 60, {"x": 0.5}),
    ("this_is_a_rather_long_variable_name * another_long_variable_name_here + 1",
     {"this_is_a_rather_long_variable_name": 1.0, "another_long_variable_name_here": 2.0}),
]


@pytest.mark.parametrize("text, bindings", PROGRAMS)
def test_lean_template_equals_the_recorded_one(text, bindings):
    assert_same_template(text, bindings)


@settings(max_examples=150, deadline=None)
@given(exprs, st.booleans(), st.sampled_from([(), (3,), (2, 1)]))
def test_lean_template_equals_the_recorded_one_for_random_programs(tree, parens, shape):
    text = f"({to_text(tree, parens)}) * c"
    bindings = {"a": np.full(shape, 0.3), "b": np.full((3,) if shape == (2, 1) else (), 0.7),
                "c": -0.2}
    assert_same_template(text, bindings)


@settings(max_examples=100, deadline=None)
@given(exprs, st.floats(-2, 2), st.floats(-2, 2), st.floats(-2, 2))
def test_lean_results_are_bit_identical_to_the_ordinary_path(tree, a, b, c):
    text = to_text(tree, False) + " + a*b*c"
    TEMPLATES.clear()
    lean = ddx.trace(text, a=a, b=b, c=c)  # replays a compiled template unless a
    ordinary = Trace(text, {"a": a, "b": b, "c": c}, lean=False)  # floating-point event
    lean.backward()
    ordinary.backward()
    assert lean.value.tobytes() == ordinary.value.tobytes()
    for name, g in ordinary.grads.items():
        assert np.asarray(lean.grads[name]).tobytes() == np.asarray(g).tobytes()
    assert lean.to_json() == ordinary.to_json()  # materialises the same graph


DECLINED = [
    ("x = 2; x * y", "a constant assignment makes a leaf"),
    ("x", "a leaf output"),
    ("2 + 3", "a number output"),
    ("sum(x, dim=0)", "keyword arguments"),
    ("maximum(x, y)", "two-argument functions"),
    ("[x, y]", "vectors"),
    ("x @ y", "matmul"),
    ("1/0 + x", "a folded inf"),
    ("with no_grad: x * 2", "blocks"),
    ("foo(x)", "an unknown function"),
    ("x * q", "an unknown name"),
    ("x[0] * y", "indexing"),
    ("x[0:1] * y", "slices"),
    ("x.grad", "attributes"),
    ("x.sum() * y", "methods"),
    ("x + 1 = y; y", "a target that is not a name"),
    ("y = x * 2\nwith no_grad:\n    z = y * 3\ny", "a block after compiled statements"),
]


@pytest.mark.parametrize("text, why", DECLINED)
def test_lean_declines_what_it_does_not_model(text, why):
    assert _lean_template(text, {"x": 2.0, "y": 3.0}) is None, why
    assert _lean_template(text, {"x": 2.0, "y": 3.0}, tree=True) is None, why


@pytest.mark.parametrize("text, bindings", [
    ("foo(x)", {"x": 1.0}),
    ("x * q", {"x": 1.0}),
    ("x + y", {"x": [1.0, 2.0], "y": [1.0, 2.0, 3.0]}),
    ("(x +", {"x": 1.0}),
    ("max(x)", {"x": np.zeros(0)}),
])
def test_errors_are_the_ordinary_paths_errors(text, bindings):
    TEMPLATES.clear()
    with pytest.raises(DdxError) as lean:
        ddx.trace(text, bindings).backward()
    with pytest.raises(DdxError) as ordinary:
        Trace(text, bindings, lean=False).backward()
    assert lean.value.message == ordinary.value.message
    assert type(lean.value) is type(ordinary.value)


@pytest.mark.parametrize("parsed", [False, True])
def test_the_collector_is_off_until_the_builders_rows_are_gone(parsed, monkeypatch):
    """A long program's rows (a tuple per op) must not meet the cyclic collector: its passes
    over 10^5 of them cost more than the compile (the deep chain ran 2x slower)."""
    import gc

    from ddx.replay import lean

    text = "(" * 500 + "x" + "".join(f" * 2 + {i})" for i in range(500))
    if parsed:
        parse(text)
    compile_source("x", ["x"], [()], np.dtype(np.float64))  # (the per-thread builder)
    builder = lean._LOCAL.found[0]
    rows_when_enabled = []
    enable = gc.enable
    monkeypatch.setattr(gc, "enable", lambda: (rows_when_enabled.append(len(builder.rows)),
                                               enable()))
    was = gc.isenabled()
    gc.enable()
    rows_when_enabled.clear()
    try:
        template = compile_source(text, ["x"], [()], np.dtype(np.float64))
    finally:
        if not was:
            gc.disable()
    assert template is not None and template.n == 1001
    assert rows_when_enabled == [0]


def test_a_lean_trace_builds_the_graph_only_when_asked():
    TEMPLATES.clear()
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1)
    assert g._fast is not None  # compiled from the AST, no Tensor made yet
    g.backward()
    assert (g.value, g.grads["w"], g.grads["x"], g.grads["b"]) == (49, 28, 42, 14)
    assert g._fast is not None
    assert g.output.grad_fn.name == "PowBackward0"  # asking for the graph builds it
    assert g._fast is None and g.grads["x"] == 42


def test_a_second_backward_accumulates_as_on_the_real_graph():
    TEMPLATES.clear()
    g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1)
    g.backward()
    g.backward()
    assert (g.grads["w"], g.grads["x"], g.grads["b"]) == (56, 84, 28)


VECTOR_PROGRAMS = [
    "sum((w*x+b)^2)",
    "sum(w^2) + sum((x - b)^2) * 2 + sum(sin(x)^2 * b)",
    "y = w*x + b; z = exp(y) * 2 - y / 3; mean(z^2) + sum(sin(y) * y)",
    "sum(sqrt(w*w + 1) - tanh(x) + sigmoid(b) * relu(x - b))",
    "sum((w - x) * (w + x) / (b*b + 1)) + sum(-w)",
]


@pytest.mark.parametrize("text", VECTOR_PROGRAMS)
def test_reusing_dead_arrays_changes_no_bit(text):
    """The library replays large arrays writing into buffers nothing reads any more; values
    and gradients must equal a replay that keeps every array, and the ordinary path."""
    rng = np.random.default_rng(3)
    arrays = {k: rng.standard_normal(150_001) for k in ("w", "x", "b")}
    copies = {k: v.copy() for k, v in arrays.items()}
    template = _lean_template(text, arrays)
    forward, fused, backward = template.reuse_plan()
    if text == "sum((w*x+b)^2)":  # nodes: w x b, 3 = w*x, 4 = 3+b, 5 = 4^2, 6 = sum(5)
        # w*x+b in place; the squares summed without an array; 2*(w*x+b)*g into its array;
        # w*x's gradients into w*x's own array (given up already: a new array)
        assert (forward, fused, backward) == ({4: 3}, {6: 5}, {5: 4, 3: 3})
    kept = template.forward(list(arrays.values()))
    reused = template.forward(list(arrays.values()), reuse=True)
    out = template.output
    assert reused[out].tobytes() == kept[out].tobytes()
    adj_kept = template.backward(kept, template.g0)
    adj_reused = template.backward(reused, template.g0, reuse=True)
    ordinary = Trace(text, arrays, lean=False)
    ordinary.backward()
    for name, j in template.grads_at:
        assert adj_reused[j].tobytes() == adj_kept[j].tobytes() == ordinary.grads[name].tobytes()
    for name, v in arrays.items():  # bindings are never written to
        assert v.tobytes() == copies[name].tobytes()
    again = {k: rng.standard_normal(150_001) for k in arrays}
    copies = {k: v.copy() for k, v in again.items()}
    TEMPLATES.clear()
    for _ in range(3):  # the third trace replays a kept template with reuse
        g = ddx.trace(text, again)
        g.backward()
    ordinary = Trace(text, again, lean=False)
    ordinary.backward()
    assert g.value.tobytes() == ordinary.value.tobytes()
    for name in again:
        assert g.grads[name].tobytes() == ordinary.grads[name].tobytes()
        assert again[name].tobytes() == copies[name].tobytes()  # inputs untouched


@pytest.mark.parametrize("text, bindings", [
    ("(w*x+b)^2", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("y = (w # a 100% comment, with \"quotes\", a backslash \\\\ and é\n * x); y + b",
     {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("another_name = w * x\nanother_name / b", {"w": 3.0, "x": 2.0, "b": 1.0}),
    ("w * 2 + x", {"w": float("inf"), "x": 1.0}),     # inf values and a gradient: strings
    ("y = w * x; z = x + 1; y", {"w": 1e308, "x": 0.1}),  # z unused: its grad is null
])
def test_a_compiled_templates_json_is_what_json_dumps_writes(text, bindings):
    template = _lean_template(text, bindings)
    body = template.run([np.asarray(v) for v in bindings.values()])
    trace = Trace(text, bindings, lean=False)
    trace.backward()
    assert "{" + body == trace.to_json()


@pytest.mark.parametrize("n", [1, 7, 8, 9, 127, 129, 8193, 65536, 65537, 131073, 999_999,
                               2_000_003])
def test_sum_of_squares_is_ddxs_sum_of_the_squares_bit_for_bit(n):
    """The fused sum of squares is ddx's own sum of the squares (PyTorch's order of
    additions, ops/kernels_sum.py), bit for bit, and so is a replay's."""
    from ddx.replay.reuse import _sum_of_squares, sums_as_numpy

    x = np.random.default_rng(n).standard_normal(n) * 10.0 ** np.random.default_rng(n).uniform(-3, 3)
    expected = np.asarray(torch_sum(np.square(x)))
    assert sums_as_numpy()
    assert _sum_of_squares(x).tobytes() == expected.tobytes()
    m = x[: n - n % 3].reshape(-1, 3) if n >= 3 else x  # a 2-D contiguous array sums flat
    assert _sum_of_squares(m).tobytes() == np.asarray(torch_sum(np.square(m))).tobytes()
    TEMPLATES.clear()
    g = ddx.trace("sum(x^2)", x=x)
    g.backward()
    assert g.value.tobytes() == expected.tobytes()
    assert g.grads["x"].tobytes() == (2 * x).tobytes()


def test_a_numpy_that_sums_in_another_order_gets_its_own_bits(monkeypatch):
    """Where numpy sums large arrays in another order than the fused sum's, the replay
    makes the squares and lets numpy sum them. Simulated: a fused sum that is off (by more
    than another order could make it: numpy 2.2's own order is one ulp from the fused one)."""
    from ddx.replay.reuse import SQUARES_CHUNK

    real = reuse_module._sum_of_squares
    monkeypatch.setattr(reuse_module, "_sum_of_squares", lambda x: real(x) * (1 + 1e-9)
                        if x.size > SQUARES_CHUNK else real(x))
    monkeypatch.setattr(reuse_module, "_SUMS_AS_NUMPY", [])
    assert not reuse_module.sums_as_numpy()
    x = np.random.default_rng(7).standard_normal(SQUARES_CHUNK * 2 + 3)
    TEMPLATES.clear()
    g = ddx.trace("sum(x^2)", x=x)
    g.backward()
    assert g._fast is not None  # (the replay, not the graph)
    assert g.value.tobytes() == np.asarray(torch_sum(np.square(x))).tobytes()
    assert g.grads["x"].tobytes() == (2 * x).tobytes()


def test_a_strided_binding_is_squared_and_summed_the_ordinary_way():
    base = np.random.default_rng(4).standard_normal(300_002)
    w = base[::2]  # not contiguous: no pairwise blocks, the squares are made
    TEMPLATES.clear()
    g = ddx.trace("sum(w^2)", w=w)
    g.backward()
    assert g._fast is not None
    assert g.value.tobytes() == np.asarray(torch_sum(np.square(w))).tobytes()
    assert g.grads["w"].tobytes() == (2 * w).tobytes()
    assert base.tobytes() == np.random.default_rng(4).standard_normal(300_002).tobytes()


@pytest.fixture
def threads():
    """Sets ddx's thread count for one test, then puts back what it was."""
    before = parallel.threads()
    yield parallel.set_threads
    parallel.set_threads(before)


SPLIT_SHAPES = {  # 1-D; 2-D, whose blocks are runs of rows, with a broadcast x (never split)
    "1-D": {"w": (20_011,), "x": (20_011,), "b": (20_011,)},
    "2-D": {"w": (200, 101), "x": (101,), "b": (200, 101)},
}


@pytest.mark.parametrize("text", VECTOR_PROGRAMS)
@pytest.mark.parametrize("n_threads, layout", [(2, "1-D"), (3, "1-D"), (2, "2-D")])
def test_splitting_between_threads_changes_no_bit(text, n_threads, layout, monkeypatch,
                                                  threads):
    """Large arrays are computed in blocks on threads (ddx/parallel.py): the same bits as the
    ordinary path, which never splits."""
    monkeypatch.setattr(parallel, "MIN_SIZE", 1000)  # small arrays exercise the same code
    monkeypatch.setattr(reuse_module, "SQUARES_CHUNK", 256)
    rng = np.random.default_rng(4)
    arrays = {k: rng.standard_normal(shape) for k, shape in SPLIT_SHAPES[layout].items()}
    ordinary = Trace(text, arrays, lean=False)
    ordinary.backward()
    threads(n_threads)
    template = _lean_template(text, arrays)
    values = template.forward(list(arrays.values()), reuse=True)
    adj = template.backward(values, template.g0, reuse=True)
    assert values[template.output].tobytes() == ordinary.value.tobytes()
    for name, j in template.grads_at:
        assert adj[j].tobytes() == ordinary.grads[name].tobytes()


def test_one_ddx_thread_runs_the_sums_threads_in_order(monkeypatch, threads):
    """DDX_NUM_THREADS=1 with a sum torch splits between its threads (above GRAIN_SIZE):
    the ranges run one after another on this thread (it made a pool of 0 workers and crashed)."""
    monkeypatch.setattr(reuse_module, "SQUARES_CHUNK", 256)
    rng = np.random.default_rng(5)
    w = rng.standard_normal(200_000)
    threads(1)
    ordinary = Trace("sum(w^2)", {"w": w}, lean=False)
    ordinary.backward()
    template = _lean_template("sum(w^2)", {"w": w})
    values = template.forward([w], reuse=True)
    adj = template.backward(values, template.g0, reuse=True)
    assert values[template.output].tobytes() == np.asarray(torch_sum(np.square(w))).tobytes()
    assert values[template.output].tobytes() == ordinary.value.tobytes()
    assert adj[template.grads_at[0][1]].tobytes() == (2 * w).tobytes()


def test_a_floating_point_event_on_a_worker_thread_is_seen(monkeypatch, threads):
    monkeypatch.setattr(parallel, "MIN_SIZE", 1000)
    x = np.linspace(1.0, 2.0, 20_000)
    x[-1] = -1.0  # log(-1) is nan: in the last block, which a worker thread computes
    threads(2)
    template = _lean_template("sum(log(x) * 2)", {"x": x})
    assert template.forward([x], reuse=True) is None  # the replay gives way
    trace = ddx.trace("sum(log(x) * 2)", x=x)
    trace.backward()
    assert any("log" in w and "nan" in w for w in trace.warnings), trace.warnings


def test_a_forked_child_splits_between_threads_of_its_own(monkeypatch, threads):
    """The pool's threads do not survive fork(): a child that used the parent's pool would
    wait for them forever."""
    monkeypatch.setattr(parallel, "MIN_SIZE", 1000)
    threads(2)
    x = np.linspace(0.0, 1.0, 50_000)
    want = float(np.sum(np.square(x * 3.0 + 1.0)))
    assert float(ddx.trace("sum((x*3 + 1)^2)", x=x).value) == want  # the parent's pool
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the same sum, with the threads it must start itself
        try:
            TEMPLATES.clear()
            got = float(ddx.trace("sum((x*3 + 1)^2)", x=x).value)
            os.write(write, repr(got).encode())
        finally:
            os._exit(0)
    os.close(write)
    for _ in range(600):  # (a child stuck on the parent's pool would never finish)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung on its parent's thread pool")
    assert status == 0 and float(os.read(read, 100)) == want
