"""ddx plot: samples against the engine, kinks/jumps/nan found, terminal text at several widths,
files through matplotlib, the CLI's errors, :plot in the REPL and ddx.plot."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import ddx
from ddx.app.plot import sample
from ddx.out.plot import render


def text_of(renderable, width: int = 80) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(renderable)
    return console.export_text()


def engine_at(expr: str, x: float, **bindings) -> tuple[float, float]:
    """f(x) and f'(x) by one ordinary trace at one point (no replay, no vector)."""
    t = ddx.Trace(expr, {"x": x, **bindings}, lean=False)
    t.backward()
    return float(t.value), float(t.grads["x"])


@pytest.mark.parametrize("expr", ["sin(x)*exp(-x^2)", "relu(x - 0.3) + abs(x)^1.5",
                                  "softplus(3*x) / (1 + x^2)", "sum([x, 2*x]^2) + w*x"])
def test_samples_match_the_engine_point_by_point(expr):
    data = sample(expr, {"x": "-2:2", "w": "0.5"}, points=41)
    f, d = data.series[0].ys, data.series[1].ys
    for i in range(0, 41, 5):
        want_f, want_d = engine_at(expr, float(data.xs[i]), w=0.5)
        assert f[i] == pytest.approx(want_f, rel=1e-12, abs=1e-12)
        assert d[i] == pytest.approx(want_d, rel=1e-12, abs=1e-12)


def test_vectorised_only_when_elementwise():
    assert sample("sin(x) + x^2", {"x": "-1:1"}, points=11).vectorised
    assert not sample("sum([x, 2*x]^2)", {"x": "-1:1"}, points=11).vectorised


def test_second_derivative_against_hand_derivation():
    data = sample("x^3 * sin(x)", {"x": "-2:2"}, order=2, points=21)
    x = data.xs
    want = 6 * x * np.sin(x) + 6 * x**2 * np.cos(x) - x**3 * np.sin(x)
    np.testing.assert_allclose(data.series[2].ys, want, rtol=1e-12, atol=1e-12)
    # and in the point-by-point road too
    slow = sample("sum([x^3 * sin(x)])", {"x": "-2:2"}, order=2, points=21)
    assert not slow.vectorised
    np.testing.assert_allclose(slow.series[2].ys, want, rtol=1e-12, atol=1e-12)


def test_kink_found_off_the_grid_and_named_from_the_op_row():
    # 0.3137 is no grid point of -2:2 with 801 points: bisection finds it
    data = sample("relu(x - 0.3137) + x", {"x": "-2:2"})
    assert len(data.kinks) == 1
    x, why = data.kinks[0]
    assert x == pytest.approx(0.3137, abs=1e-12)
    assert "relu(x - 0.3137): at 0 PyTorch takes the slope 0" in why
    assert "f′ jumps from 1 to 2" in why
    assert data.jumps == [] and data.nonfinite == []


def test_abs_and_maximum_kinks_and_a_jump_of_f():
    data = sample("abs(x + 1) + maximum(x, 0.5*x)", {"x": "-2:2"})
    assert [round(x, 9) for x, _ in data.kinks] == [-1.0, 0.0]
    assert "abs" in data.kinks[0][1] and "tie" in data.kinks[1][1]
    jumps = sample("floor(x) + x", {"x": "-0.5:1.5"}).jumps
    assert [round(x, 9) for x, _ in jumps] == [0.0, 1.0]
    assert "f jumps from" in jumps[0][1] and "floor jumps here" in jumps[0][1]


def test_where_f_itself_is_not_finite():
    data = sample("log(x)", {"x": "-1:1"}, points=201)
    assert data.undefined == [(-1.0, 0.0, "-inf/nan")]  # log(0) = -inf, log(x < 0) = nan
    assert data.nonfinite == [(0.0, 0.0, "inf")]  # PyTorch's 1/x is finite for x < 0
    assert "f is -inf/nan for x in [-1, 0]" in data.notes()


def test_nonfinite_runs_and_poles():
    data = sample("sqrt(x)", {"x": "-1:1"}, points=201)
    assert data.nonfinite[0][0] == -1.0 and data.nonfinite[0][1] == 0.0
    assert data.nonfinite[0][2] == "inf/nan"
    poles = sample("1/x", {"x": "-1:1"}, points=200).jumps
    assert len(poles) == 1 and abs(poles[0][0]) < 1e-9 and "pole" in poles[0][1]


def test_tangent_slope_is_the_derivative():
    data = sample("x^2 + 1", {"x": "-2:2"}, at=1.5)
    assert data.tangent == (1.5, 3.25, 3.0)
    assert "tangent at x = 1.5: f = 3.25, slope f′ = 3" in data.notes()[-1]


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_terminal_plot_fits_every_width(width):
    data = sample("relu(x - 1) + x^2", {"x": "-2:2"}, at=1.0)
    text = text_of(render(data, width=width, color=False), width)
    lines = text.splitlines()
    assert lines[0] == "f(x) = relu(x - 1) + x^2"
    assert all(len(line) <= width for line in lines)
    plot_rows = [ln for ln in lines if "│" in ln or "┤" in ln]
    assert len(plot_rows) == 16
    axis = next(ln for ln in lines if "└" in ln)
    assert len(axis) == width and "▲" in axis  # the kink at x = 1 marked on the axis
    assert "++ f′(x)" in text and "⣿⣿ f(x)" in text and "▲ kink" in text
    assert "kink at x = 1:" in text
    # the kink mark sits at x = 1, three quarters along the axis
    start = axis.index("└") + 2
    col = axis.index("▲") - start
    assert abs(col - 0.75 * (width - (start) - 1)) <= 1.5


def test_terminal_plot_draws_the_curve_where_it_is():
    data = sample("x", {"x": "0:1"}, points=11)
    lines = text_of(render(data, width=60, height=8, color=False), 60).splitlines()
    rows = [ln for ln in lines if "│" in ln or "┤" in ln]
    first = [ln.split("┤" if "┤" in ln else "│", 1)[1] for ln in rows]
    # f(x) = x rises from bottom-left to top-right; f'(x) = 1 is a row of '+'
    assert first[-1].strip()[0] != " " and first[0].rstrip()[-1] != " "
    top = next(i for i, ln in enumerate(first) if "+" in ln)
    assert first[top].count("+") > 40


def test_cli_plot_text_no_color_and_json(run):
    code, out, err = run("plot", "x^2", "x=-1:1", "--width", "50", "--at", "x=0.5")
    assert code == 0 and err == ""
    assert "\x1b[" not in out and out.splitlines()[0] == "f(x) = x^2"
    assert max(len(ln) for ln in out.splitlines()[:20]) <= 50
    code, out, _ = run("plot", "x^2", "x=-1:1", "--points", "5", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["samples"]["x"] == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert doc["samples"]["f"] == [1.0, 0.25, 0.0, 0.25, 1.0]
    assert doc["samples"]["df"] == [-2.0, -1.0, 0.0, 1.0, 2.0]
    assert doc["kinks"] == [] and doc["tangent"] is None and doc["vectorised"] is True
    code, out, _ = run("plot", "abs(x - 0.5)", "x=-1:1", "--points", "9", "--json", "--order", "2",
                       "--at", "x=0")
    doc = json.loads(out)
    assert doc["samples"]["d2f"] == [0.0] * 9
    assert doc["kinks"] == [{"x": 0.5, "note": "f′ jumps from -1 to 1, and is 0 at the point "
                                               "itself (abs(x - 0.5): at 0 PyTorch takes the "
                                               "slope 0 (sign(0) = 0))"}]
    assert doc["tangent"] == {"x": 0.0, "f": 0.5, "slope": -1.0}


@pytest.mark.parametrize("args, message", [
    (("x*y", "x=1", "y=2"), "error: plot needs exactly one variable with a range A:B"),
    (("x", "x=1:-1"), "error: x=1:-1: the range needs finite ends with A < B"),
    (("[x, x]", "x=0:1"), "error: plot needs a function with one value: [x, x] gives shape (2,)"),
    (("x", "x=0:1", "--at", "y=1"), "error: --at y=1: the plotted variable is 'x'"),
    (("x", "x=0:1", "-o", "f.jpg"), "error: -o f.jpg: unknown plot format '.jpg'"),
    (("x", "x=0:1", "--order", "3"), "error: invalid value for '--order'"),
    (("y^2", "x=0:1", "y=2"), "error: the expression does not use 'x'"),
])
def test_cli_plot_usage_errors(run, args, message):
    code, out, err = run("plot", *args)
    assert code == 2 and err.splitlines()[0].startswith(message)


def test_plot_file_needs_matplotlib_message(monkeypatch, tmp_path):
    import builtins

    real = builtins.__import__

    def no_mpl(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    data = sample("x", {"x": "0:1"}, points=5)
    with pytest.raises(ddx.DdxError) as info:
        data.save(str(tmp_path / "f.png"))
    assert info.value.message == "writing a plot file needs matplotlib, which is not installed"
    assert "pip install 'ddx[plot]'" in info.value.hint
    assert not (tmp_path / "f.png").exists()


def matplotlib_or_skip():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.environ.get("DDX_REQUIRE_PLOT"):
            raise
        pytest.skip("matplotlib not installed (CI installs the 'plot' extra)")


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_files(run, tmp_path, fmt, magic):
    matplotlib_or_skip()
    path = tmp_path / f"f.{fmt}"
    code, out, err = run("plot", "relu(x - 1) + x^2", "x=-2:2", "--at", "x=1", "--order", "2",
                         "-o", str(path))
    assert (code, out, err) == (0, f"wrote {path}\n", "")
    data = path.read_bytes()
    assert data.startswith(magic)
    if fmt == "svg":  # labelled axes, legend entries, the tangent's slope
        text = data.decode()
        for word in ("f(x)", "f′(x)", "f″(x)", "kink (f′ jumps)", "tangent at x = 1, slope 2"):
            assert word in text
    again = tmp_path / f"g.{fmt}"
    run("plot", "relu(x - 1) + x^2", "x=-2:2", "--at", "x=1", "--order", "2", "-o", str(again))
    assert again.read_bytes() == data  # reproducible files


def test_repl_plot_uses_session_tensors(capsys):
    from ddx.app.repl import Repl

    repl = Repl(no_color=True)
    repl.console.width = 70
    repl.handle("w = tensor(3.0)")
    repl.handle(':plot "w*relu(x)" x=-1:1 --at x=0.5')
    out = capsys.readouterr().out
    assert "f(x) = w*relu(x)" in out
    assert "tangent at x = 0.5: f = 1.5, slope f′ = 3" in out
    assert "kink at x = 0: f′ jumps from 0 to 3" in out
    repl.handle(':plot "w*x"')
    assert "error: plot needs exactly one variable with a range A:B" in capsys.readouterr().out


def test_plot_repr_and_notebook_bundle():
    p = ddx.plot("relu(x) + x", x="-1:1")
    assert repr(p) == "<ddx.Plot 'relu(x) + x': f(x), f′(x) for x in [-1, 1], 801 points, 1 kink>"
    bundle = p._repr_mimebundle_()
    assert bundle["text/plain"].splitlines()[0] == "f(x) = relu(x) + x"
    assert "kink at x = 0" in bundle["text/plain"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "image/svg+xml" not in bundle
    else:
        assert bundle["image/svg+xml"].lstrip().startswith("<?xml")


def test_library_plot():
    p = ddx.plot("x^3", x="-1:1", points=5)
    assert p.table() == {"x": [-1.0, -0.5, 0.0, 0.5, 1.0],
                         "f": [-1.0, -0.125, 0.0, 0.125, 1.0],
                         "f′": [3.0, 0.75, 0.0, 0.75, 3.0]}
    assert text_of(p, 60).splitlines()[0] == "f(x) = x^3"


@pytest.mark.parametrize("height", [6, 10, 16, 23])
def test_y_ticks_sit_on_their_rows(height):
    data = sample("x^3", {"x": "-1.3:1.1"}, points=101)
    lines = text_of(render(data, width=70, height=height, color=False), 70).splitlines()
    zero = next(ln for ln in lines if ln.strip().startswith("0 ┤"))
    assert "·" in zero  # the line y = 0 is drawn in the row labelled 0
    rows = [ln for ln in lines if "┤" in ln]
    assert len(rows) >= 2


@pytest.mark.parametrize("no_color", [True, False])
def test_terminal_colour_and_no_color_in_a_real_terminal(no_color):
    """On a terminal the derivatives are coloured braille; NO_COLOR gives plain glyphs."""
    import sys

    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm-256color", COLUMNS="80", LINES="40")
    if no_color:
        env["NO_COLOR"] = "1"
    out = pexpect.run(f"{sys.executable} -m ddx plot 'x^2' x=-1:1", env=env, encoding="utf-8",
                      timeout=60, dimensions=(40, 80))
    assert "f(x) = x^2" in out
    if no_color:
        assert "\x1b[" not in out and "++ f′(x)" in out
    else:
        assert "\x1b[31m⣿⣿\x1b[0m f′(x)" in out and "++" not in out  # red braille
    lines = [ln for ln in out.replace("\r", "").splitlines() if "┤" in ln or "│" in ln]
    assert len(lines) == 16


@settings(max_examples=15, deadline=None)
@given(st.floats(-1.7, 1.7), st.floats(0.25, 4.0), st.booleans())
def test_a_kink_anywhere_is_found_with_its_two_slopes(c, a, use_abs):
    expr = f"{a!r} * {'abs' if use_abs else 'relu'}(x - {c!r}) + x"
    data = sample(expr, {"x": "-2:2"})
    assert len(data.kinks) == 1
    x, why = data.kinks[0]
    assert x == pytest.approx(c, abs=1e-9)
    left, right = (1 - a, 1 + a) if use_abs else (1, 1 + a)
    assert f"f′ jumps from {left:.6g} to {right:.6g}" in why
