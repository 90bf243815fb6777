"""Messages that help (issue 17): data errors in ddx's words with row and field, JSON Lines rows
numbered, hints and did-you-means, a warning for a name bound twice, help that lists what it
names, shell completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ddx.app.csvio import parse_json_rows


@pytest.mark.parametrize("line, message", [
    ('{"x": [1, 2]}', "field 'x' is a list, not a number"),
    ('{"x": {"a": 1}}', "field 'x' is an object, not a number"),
    ('{"x": null}', "field 'x' is null, not a number"),
    ('{"x": "abc"}', "field 'x' is not a number: 'abc'"),
    ('{"y": 1}', "no field 'x'"),
    ('{"X": 1}', "no field 'x'; did you mean 'X'?"),
    ("[1, 2]", "a JSON Lines row must be an object, not a list"),
    ("3", "a JSON Lines row must be an object, not a number"),
    ('{"x": 1', "not valid JSON at column 8: expecting ',' delimiter"),
    ("", "empty row"),
])
def test_a_bad_json_lines_row_is_worded_by_ddx(line, message):
    data, bad = parse_json_rows([line + "\n"], ["x"])
    assert bad == {0: message}
    assert "float()" not in message and "argument" not in message


def test_json_numbers_strings_and_booleans_are_read_as_float_reads_them():
    data, bad = parse_json_rows(['{"x": 2}', '{"x": "2.5"}', '{"x": true}', '{"x": -1e3}'], ["x"])
    assert bad == {} and data.ravel().tolist() == [2.0, 2.5, 1.0, -1000.0]


def test_data_errors_name_the_row_and_jsonl_results_carry_it(run):
    data = '{"x": 2, "y": 3}\n{"x": [1], "y": 1}\n{"x": 1, "y": 1}\n'
    code, out, err = run("batch", "--expr", "x*y", "--jsonl", "-", input=data)
    assert code == 1
    assert err.splitlines()[0] == "error: row 2: field 'x' is a list, not a number"
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["row"] for r in rows] == [1, 2, 3]
    assert rows[1] == {"row": 2, "error": "field 'x' is a list, not a number"}
    assert rows[2] == {"row": 3, "value": 1.0, "d_x": 1.0, "d_y": 1.0}


def test_a_csv_error_names_row_and_column(run):
    code, out, err = run("batch", "--expr", "x*y", "--csv", "-", input="x,y\n1,2\n3,oops\n")
    assert code == 1 and "error: row 2: field 'y' is not a number: 'oops'" in err


def test_a_vector_without_brackets_gets_a_hint(run):
    code, _, err = run("x", "x=1,2,3")
    assert code == 2
    assert err.splitlines()[-1] == "hint: a vector goes in brackets: x=[1,2,3]"
    code, _, err = run("w*x", "w=1", "x=[1,2]", "--grad-output", "1,1")
    assert err.splitlines()[-1] == "hint: a vector goes in brackets: --grad-output [1,1]"


def test_ddx_help_shows_help(run):
    code, out, _ = run("help")
    assert code == 0 and out == run("--help")[1] and "Commands:" in out
    code, out, _ = run("help", "batch")
    assert code == 0 and out.startswith("Usage: ddx batch")


def test_a_mistyped_option_gets_a_did_you_mean(run):
    code, _, err = run("--verison")
    assert code == 2 and err.splitlines()[0] == ("error: no such option: --verison; did you "
                                                 "mean --version?")
    code, _, err = run("x", "x=1", "--jsn")
    assert code == 2 and err.splitlines()[0] == "error: no such option: --jsn; did you mean --json?"
    code, _, err = run("x", "x=1", "--zzzzz")
    assert err.splitlines()[0] == "error: no such option: --zzzzz"


def test_a_name_without_a_value_next_to_an_unused_bound_name_is_a_warning(run):
    _, _, err = run("sin(X)", "x=1", "--json")
    assert "warning: 'X' has no value; did you mean 'x'? (x is bound but not used)" in err
    _, _, err = run("sin(x)", "x=1", "--json")
    assert "warning" not in err


def test_a_name_bound_twice_is_a_warning_and_the_last_value_is_used(run):
    code, out, err = run("x", "x=1", "x=2", "--json")
    assert code == 0 and json.loads(out)["value"] == 2.0
    assert err == "warning: x is bound twice (x=1, then x=2): x=2 is used\n"


def test_a_mistyped_repl_command_gets_a_did_you_mean():
    from ddx.app.repl import Repl

    said: list[str] = []
    repl = Repl(no_color=True)
    repl._err = said.append
    repl.command(":grpah x")
    repl.command(":qit")
    assert said == ["error: unknown command :grpah; did you mean :graph?; try :help",
                    "error: unknown command :qit; did you mean :quit?; try :help"]


def test_help_lists_every_command_it_names_and_its_example_matches_the_output(run):
    _, out, _ = run("--help")
    commands = out[out.index("Commands:"):out.index("Examples:")]
    for name in ("batch", "eval", "plot", "repl", "run"):
        assert f"  {name} " in commands
    assert "ddx eval --help" in out
    assert "out = 49; dout/dw = 28, dout/dx = 42, dout/db = 14" in out
    _, view, _ = run("(w*x+b)^2", "w=3", "x=2", "b=1")
    assert "dout/d(leaf)" in view and "dL/d" not in view


def test_shell_completion_as_the_help_says():
    env = {**os.environ, "_DDX_COMPLETE": "bash_source"}
    proc = subprocess.run([sys.executable, "-m", "ddx"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "_ddx_completion()" in proc.stdout
    env = {**os.environ, "_DDX_COMPLETE": "bash_complete", "COMP_WORDS": "ddx ba",
           "COMP_CWORD": "1"}
    proc = subprocess.run([sys.executable, "-m", "ddx"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.split() == ["plain,batch"]
