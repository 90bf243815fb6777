"""The one-liner through Click's CliRunner and as a real installed process: output, JSON, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from rich.console import Console

import ddx
from ddx.out.render import grad_fn_tree, one_liner


def test_human_view_shows_values_tree_and_gradients(run):
    code, out, err = run("(w*x+b)^2", "w=3", "x=2", "b=1", "--no-color")
    assert code == 0 and err == ""
    assert "out = (w*x+b)^2" in out
    assert "PowBackward0" in out and "AddBackward0" in out and "MulBackward0" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.strip().startswith(("w ", "x ", "b ")) and "AccumulateGrad" not in line}
    assert rows["w"][-1] == "28" and rows["x"][-1] == "42" and rows["b"][-1] == "14"


def test_json_keys_and_values(run_json):
    code, doc, _ = run_json("L = (w*x+b)^2", "x=2", "w=3", "b=1")
    assert code == 0
    assert {"output", "value", "shape", "grad_fn", "gradients", "nodes"} <= set(doc)
    assert doc["output"] == "L" and doc["value"] == 49.0 and doc["shape"] == []
    assert doc["grad_fn"] == "PowBackward0"
    assert doc["gradients"] == {"x": 42.0, "w": 28.0, "b": 14.0}
    first = doc["nodes"][0]
    assert first == {"id": 0, "name": "x", "op": "leaf", "grad_fn": None, "inputs": [],
                     "value": 2.0, "shape": [], "requires_grad": True, "is_leaf": True,
                     "grad": 42.0}
    mul = next(n for n in doc["nodes"] if n["grad_fn"] == "MulBackward0")
    assert [doc["nodes"][i]["name"] for i in mul["inputs"]] == ["w", "x"]


def test_grad_output_ones_for_a_vector(run_json):
    code, doc, _ = run_json("w*x + b", "w=3", "x=[2,4]", "b=1", "--grad-output", "ones")
    assert code == 0
    assert doc["value"] == [7.0, 13.0] and doc["shape"] == [2]
    assert doc["gradients"] == {"w": 6.0, "x": [3.0, 3.0], "b": 2.0}


def test_grad_output_shape_mismatch_is_pytorch_text(run):
    code, _, err = run("w*x", "w=3", "x=[2,4]", "--grad-output", "[1,1,1]")
    assert code == 1
    assert ("error: Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and "
            "output[0] has a shape of torch.Size([2]).") in err


def test_non_scalar_output_is_an_error_with_exit_1(run):
    code, out, err = run("w*x", "w=3", "x=[2,4]")
    assert code == 1 and out == ""
    assert err.startswith("error: grad can be implicitly created only for scalar outputs\n")


def test_nan_and_inf_in_json_are_strings(run_json):
    code, doc, err = run_json("log(x) * 0", "x=0")
    assert code == 0
    assert doc["value"] == "nan" and doc["gradients"]["x"] == "nan"
    assert "warning:" in err and "LogBackward0" in err


def test_syntax_error_has_caret_and_exit_2(run):
    code, out, err = run("(w*x+b", "w=1", "x=1", "b=1")
    assert code == 2 and out == ""
    assert err == "error: missing ')'\n  (w*x+b\n        ^\nhint: every '(' needs a matching ')'\n"


def test_syntax_error_in_json(run):
    code, out, _ = run("w*", "w=1", "--json")
    assert code == 2
    assert json.loads(out) == {"error": {"type": "SyntaxError", "message":
                                         "missing operand after '*'", "line": 1, "column": 3}}


def test_unknown_function_suggests_and_exits_1(run):
    code, _, err = run("sine(x)", "x=1")
    assert code == 1
    assert err.splitlines()[0] == "error: unknown function 'sine'; did you mean 'sin'?"
    assert err.splitlines()[2] == "  ^^^^"


def test_usage_errors_exit_2(run):
    assert run("x", "x")[0] == 2  # binding without '='
    code, _, err = run("x*y", "x=1", "y=2", "--wrt", "z")
    assert code == 2 and "--wrt names 'z', which is not a variable" in err
    code, _, err = run("x", "x=[1,")
    assert code == 2 and "binding x=" in err
    assert run("x", "x=1", "--dtype", "int8")[0] == 2


def test_expression_starting_with_minus_is_not_an_option(run_json):
    code, doc, _ = run_json("-x^2", "x=3")
    assert code == 0 and doc["value"] == -9.0 and doc["gradients"] == {"x": -6.0}


def test_constants_only_prints_value_without_gradients(run_json):
    code, doc, _ = run_json("sin(pi/2)")
    assert code == 0 and doc["value"] == 1.0 and doc["gradients"] == {}


def test_help_shows_examples(run):
    code, out, _ = run("--help")
    assert code == 0 and 'ddx "(w*x+b)^2" w=3 x=2 b=1' in out


def test_grad_fn_tree_is_depth_capped_and_pure():
    g = ddx.trace("sin(" * 300 + "x" + ")" * 300, x=0.3)
    g.backward()
    console = Console(record=True, width=100, color_system=None, file=open(os.devnull, "w"))
    console.print(grad_fn_tree(g))
    text = console.export_text()
    assert "deeper nodes not shown" in text
    assert text.count("SinBackward0") == 13


def test_one_liner_view_fits_80_columns():
    g = ddx.trace("sum(W @ x + b)", W="[[1,2,3],[4,5,6]]", x="[1,0,-1]", b="[0.5,0.25]")
    g.backward()
    console = Console(record=True, width=80, color_system=None, file=open(os.devnull, "w"))
    console.print(one_liner(g))
    lines = console.export_text().splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert any("SumBackward0" in line for line in lines)


@pytest.mark.skipif(shutil.which("ddx") is None and not os.environ.get("DDX_REQUIRE_INSTALLED"),
                    reason="ddx is not installed as a command here")
def test_installed_command_runs_as_a_real_process():
    exe = shutil.which("ddx")
    assert exe is not None
    proc = subprocess.run([exe, "(w*x+b)^2", "w=3", "x=2", "b=1", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gradients"] == {"w": 28.0, "x": 42.0, "b": 14.0}
    proc = subprocess.run([exe, "(w*x"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: missing ')'")


def test_python_dash_m_works():
    proc = subprocess.run([sys.executable, "-m", "ddx", "x^2", "x=3", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gradients"] == {"x": 6.0}


def test_library_does_not_import_click():
    code = "import ddx, sys; g = ddx.trace('x*x', x=3); g.backward(); " \
           "print(float(g.grads['x']), 'click' in sys.modules, 'rich' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.split() == ["6.0", "False", "False"]


def test_empty_expression_and_constant_domain_warning(run):
    code, _, err = run("")
    assert code == 2 and err.startswith("error: empty expression")
    code, out, err = run("1/0", "--json")
    assert code == 0 and json.loads(out)["value"] == "inf"
    assert "warning: 1/0 gives inf" in err


def test_an_integer_too_large_for_a_float_is_a_syntax_error(run):
    big = "1" + "0" * 400
    code, out, err = run(f"x * {big}", "x=1")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == "error: integer too large for a float64 (at most about 1.8e308)"
    assert lines[2].index("^") == len("  x * ")  # the caret points at the literal
    code, out, _ = run("x * 1e400", "x=1", "--json")  # a float literal is inf, as in Python
    assert code == 0 and json.loads(out)["value"] == "inf"


def test_help_names_every_size_limit(run):
    from ddx.limits import LIMITS

    code, out, _ = run("--help")
    assert code == 0
    for name, (default, _, _) in LIMITS.items():
        assert f"{name}={default:,}" in out


def test_one_liners_and_batch_start_one_openblas_thread_unless_the_user_chose():
    from ddx.app.cli_base import one_blas_thread

    env: dict = {}
    assert one_blas_thread(env, {}) and env == {"OPENBLAS_NUM_THREADS": "1"}
    env = {"OPENBLAS_NUM_THREADS": "4"}
    assert not one_blas_thread(env, {}) and env == {"OPENBLAS_NUM_THREADS": "4"}
    env = {}
    assert not one_blas_thread(env, {"numpy": object()}) and env == {}  # too late to matter


def test_the_one_liner_process_runs_numpy_with_one_blas_thread(tmp_path):
    """The real process: numpy is imported with OPENBLAS_NUM_THREADS=1 set (which is what
    OpenBLAS reads when it starts), and a user's own value is kept."""
    probe = tmp_path / "sitecustomize.py"  # runs at start-up, before ddx: reports at exit
    probe.write_text("import atexit, os, sys\n"
                     "def _report():\n"
                     "    if 'numpy' in sys.modules:\n"
                     "        sys.stderr.write('BLAS=' + os.environ.get('OPENBLAS_NUM_THREADS', '-'))\n"
                     "atexit.register(_report)\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "ddx", "x*2", "x=1", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr.endswith("BLAS=1")
    env["OPENBLAS_NUM_THREADS"] = "2"
    done = subprocess.run([sys.executable, "-m", "ddx", "x*2", "x=1", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr.endswith("BLAS=2")
