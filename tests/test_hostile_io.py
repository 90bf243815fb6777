"""Hostile input at the edges: outputs never lost or half written, the terminal never fed raw
control characters or Rich markup, and every usage error worded with exit code 2."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from rich.console import Console

from ddx.errors import DdxSyntaxError, format_error
from ddx.out.render import explain_view
from ddx.textsafe import safe_text

JOBS = '"x*y" x=1 y=2\n"x^2" x=3\n'
OSC = "(x # \x1b[31mRED\x1b]0;pwned\x07\n + 1)*2"
NO_TMP = "no temporary file is left behind"


def ddx(*args, stdin=None, stdout=subprocess.PIPE, cwd=None):
    """ddx as a real process (file descriptors, /dev/full, signals)."""
    return subprocess.run([sys.executable, "-m", "ddx", *args], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, cwd=cwd, timeout=120)


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".ddx-tmp"))


# --- 1. nothing lost ----------------------------------------------------------------------

@pytest.mark.parametrize("how", ["same", "dot-slash", "symlink-out", "symlink-in", "hardlink"])
def test_batch_refuses_to_write_over_its_job_file(run, tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs.txt").write_text(JOBS)
    inp, out = {"same": ("jobs.txt", "jobs.txt"), "dot-slash": ("jobs.txt", "./jobs.txt"),
                "symlink-out": ("jobs.txt", "link.txt"), "symlink-in": ("link.txt", "jobs.txt"),
                "hardlink": ("hard.txt", "jobs.txt")}[how]
    if how.startswith("symlink"):
        os.symlink("jobs.txt", "link.txt")
    if how == "hardlink":
        os.link("jobs.txt", "hard.txt")
    code, stdout, err = run("batch", inp, "-o", out)
    assert (code, stdout) == (2, "")
    assert err == (f"error: -o {out} is the same file as the input {inp}\n"
                   "hint: write the results to another file\n")
    assert (tmp_path / "jobs.txt").read_text() == JOBS
    assert leftovers(tmp_path) == []


def test_data_mode_refuses_to_write_over_its_csv(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("x,y\n1,2\n3,4\n")
    code, _, err = run("batch", "--expr", "x*y", "--csv", "d.csv", "-o", "d.csv")
    assert code == 2
    assert err == ("error: -o d.csv is the same file as the input d.csv\n"
                   "hint: write the results to another file\n")
    assert (tmp_path / "d.csv").read_text() == "x,y\n1,2\n3,4\n"


@pytest.mark.parametrize("args", [("batch", "-", "-o", "jobs.txt"), ("batch", "-o", "jobs.txt")])
def test_batch_refuses_to_write_over_the_file_on_its_stdin(tmp_path, args):
    (tmp_path / "jobs.txt").write_text(JOBS)
    with open(tmp_path / "jobs.txt", "rb") as fh:
        proc = ddx(*args, stdin=fh, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (b"error: -o jobs.txt is the same file as standard input\n"
                           b"hint: write the results to another file\n")
    assert (tmp_path / "jobs.txt").read_text() == JOBS


def test_a_failed_run_leaves_the_old_output_as_it_was(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("x,y\n1,2\n")
    (tmp_path / "out.csv").write_text("precious\n")
    # the header is read (inside the output's block) before the unknown name is found
    code, _, err = run("batch", "--expr", "x*z", "--csv", "d.csv", "-o", "out.csv")
    assert code == 2
    assert err.startswith("error: the expression uses 'z', which is neither a column nor bound\n")
    assert (tmp_path / "out.csv").read_text() == "precious\n"
    assert leftovers(tmp_path) == [], NO_TMP


def test_output_is_replaced_whole_keeping_its_mode_and_links(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("x,y\n1,2\n3,4\n")
    (tmp_path / "real.csv").write_text("old\n")
    os.chmod(tmp_path / "real.csv", 0o640)
    os.symlink("real.csv", "out.csv")
    code, out, _ = run("batch", "--expr", "x*y", "--csv", "d.csv", "-o", "out.csv")
    assert (code, out) == (0, "")
    assert os.path.islink(tmp_path / "out.csv")
    assert (tmp_path / "real.csv").read_text() == "value,d_x,d_y\n2.0,2.0,1.0\n12.0,4.0,3.0\n"
    assert stat.S_IMODE(os.stat(tmp_path / "real.csv").st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_a_new_output_file_gets_the_usual_mode(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs.txt").write_text(JOBS)
    old = os.umask(0o022)
    try:
        code, _, _ = run("batch", "jobs.txt", "-o", "res.jsonl")
    finally:
        os.umask(old)
    assert code == 0
    assert stat.S_IMODE(os.stat(tmp_path / "res.jsonl").st_mode) == 0o644  # not mkstemp's 0600
    lines = [json.loads(line) for line in (tmp_path / "res.jsonl").read_text().splitlines()]
    assert [(d["line"], d["value"]) for d in lines] == [(1, 2.0), (2, 9.0)]


def test_batch_human_view_goes_to_the_output_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs.txt").write_text('"x^2" x=3\n')
    code, out, _ = run("batch", "jobs.txt", "--human", "-o", "h.txt")
    assert (code, out) == (0, "")
    text = (tmp_path / "h.txt").read_text()
    assert "line 1" in text and "PowBackward0" in text and "\x1b" not in text


@pytest.mark.parametrize("target, code, message", [
    ("", 2, "-o needs a file name, got ''"),
    ("DIR", 1, "cannot write DIR: it is a directory"),
    ("DIR/nope/out.jsonl", 1, "cannot write DIR/nope/out.jsonl: the folder DIR/nope does not "
                              "exist"),
    ("DIR/jobs.txt/out", 1, "cannot write DIR/jobs.txt/out: DIR/jobs.txt is not a folder"),
])
def test_bad_output_paths_are_worded(run, tmp_path, target, code, message):
    (tmp_path / "jobs.txt").write_text(JOBS)
    target = target.replace("DIR", str(tmp_path))
    got, out, err = run("batch", str(tmp_path / "jobs.txt"), "-o", target)
    assert (got, out) == (code, "")
    assert err == f"error: {message.replace('DIR', str(tmp_path))}\n"


def test_an_unwritable_folder_is_worded(run, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    (tmp_path / "jobs.txt").write_text(JOBS)
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        code, _, err = run("batch", str(tmp_path / "jobs.txt"), "-o", str(locked / "o"))
    finally:
        os.chmod(locked, 0o700)
    assert code == 1
    assert err == f"error: cannot write {locked / 'o'}: permission denied\n"


needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


@needs_dev_full
@pytest.mark.parametrize("args", [("batch", "jobs.txt", "-o", "/dev/full"),
                                  ("x", "x=1", "--graph", "/dev/full")])
def test_a_full_device_as_output_file_is_one_error_line(tmp_path, args):
    (tmp_path / "jobs.txt").write_text(JOBS)
    proc = ddx(*args, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == b"error: cannot write /dev/full: no space left on device\n"


@needs_dev_full
@pytest.mark.parametrize("args", [
    ("x", "x=1", "--json"), ("x", "x=1"), ("x", "x=1", "--emit", "torch"),
    ("batch", "jobs.txt"), ("batch", "--expr", "x*y", "--csv", "d.csv"), ("run", "s.ddx"),
    ("--help",), ("--version",),
])
def test_a_full_standard_output_is_one_error_line_and_exit_1(tmp_path, args):
    (tmp_path / "jobs.txt").write_text(JOBS)
    (tmp_path / "d.csv").write_text("x,y\n1,2\n")
    (tmp_path / "s.ddx").write_text("x = 2.0\nx * 3\n")
    with open("/dev/full", "wb") as full:
        proc = ddx(*args, stdout=full, cwd=tmp_path)
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "error: cannot write to standard output: no space left on device" in err.splitlines()
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_closed_pipe_is_no_error(tmp_path):
    (tmp_path / "jobs.txt").write_text('"x*y" x=1 y=2\n' * 3000)
    proc = subprocess.Popen([sys.executable, "-m", "ddx", "batch", "jobs.txt"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(10) == b'{"line": 1'
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert b"Traceback" not in err and b"Exception ignored" not in err


def test_an_interrupted_batch_leaves_the_old_output_and_no_temporary_file(tmp_path):
    (tmp_path / "res.jsonl").write_text("precious\n")
    proc = subprocess.Popen([sys.executable, "-m", "ddx", "batch", "-", "-o", "res.jsonl"],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdin.write(b'"x*y" x=1 y=2\n')
    proc.stdin.flush()
    deadline = time.monotonic() + 60  # (waiting for the run to start, not timing it)
    while not leftovers(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert len(leftovers(tmp_path)) == 1  # the results so far go to a temporary file
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    assert (tmp_path / "res.jsonl").read_text() == "precious\n"
    assert leftovers(tmp_path) == [], NO_TMP


@pytest.mark.parametrize("target, code, message", [
    ("", 2, "--graph needs a file name, got ''"),
    ("DIR", 1, "cannot write DIR: it is a directory"),
    ("DIR/nope/g.dot", 1, "cannot write DIR/nope/g.dot: the folder DIR/nope does not exist"),
    ("DIR/g", 2, "--graph DIR/g: no ending to say the picture format\n"
                 "hint: end the file name in .dot, .gv, .mmd, .html, .svg or .png"),
    ("DIR/g.jpg", 2, "--graph DIR/g.jpg: unknown picture format '.jpg'\n"
                     "hint: end the file name in .dot, .gv, .mmd, .html, .svg or .png"),
])
def test_bad_graph_paths_are_worded(run, tmp_path, target, code, message):
    target = target.replace("DIR", str(tmp_path))
    message = message.replace("DIR", str(tmp_path))
    got, out, err = run("x", "x=1", "--graph", target, "--json")
    assert got == code
    assert json.loads(out)["error"]["message"] == message.split("\n")[0]
    assert err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_graph_to_a_device_without_an_ending_is_dot():
    proc = ddx("x*2", "x=1", "--graph", "/dev/stdout", "--json")
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"digraph ddx {\n")


def _fake_dot(tmp_path, monkeypatch, script: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dot = bin_dir / "dot"
    dot.write_text("#!/bin/sh\n" + script)
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_graphviz_writing_nothing_is_an_error_not_an_empty_picture(run, tmp_path, monkeypatch):
    _fake_dot(tmp_path, monkeypatch, "cat > /dev/null\nexit 0\n")
    (tmp_path / "g.svg").write_text("<svg>old</svg>")
    code, _, err = run("x*2", "x=1", "--graph", str(tmp_path / "g.svg"))
    assert code == 1
    assert err == f"error: Graphviz failed to render {tmp_path / 'g.svg'}: exit code 0\n"
    assert (tmp_path / "g.svg").read_text() == "<svg>old</svg>"


def test_graphviz_failing_is_an_error_and_keeps_the_old_file(run, tmp_path, monkeypatch):
    _fake_dot(tmp_path, monkeypatch, "cat > /dev/null\necho 'Error: syntax' >&2\nexit 1\n")
    (tmp_path / "g.png").write_bytes(b"old")
    code, _, err = run("x*2", "x=1", "--graph", str(tmp_path / "g.png"))
    assert code == 1
    assert err == f"error: Graphviz failed to render {tmp_path / 'g.png'}: Error: syntax\n"
    assert (tmp_path / "g.png").read_bytes() == b"old"


def test_graphviz_output_is_written_by_ddx_from_escaped_dot(run, tmp_path, monkeypatch):
    _fake_dot(tmp_path, monkeypatch, 'echo "$1"\ncat\n')  # echoes its format and its input
    code, _, err = run("(x # \x1b[2J\n)*2", "x=1", "--graph", str(tmp_path / "g.svg"))
    assert (code, err) == (0, "")
    picture = (tmp_path / "g.svg").read_text()
    assert picture.startswith("-Tsvg\ndigraph ddx {\n")
    assert "\x1b" not in picture and "\\x1b[2J" in picture


# --- 5. the terminal is protected -------------------------------------------------------------

def test_safe_text_escapes_controls_escapes_and_bidi():
    assert safe_text("plain (w*x+b)^2 é 你好\tx\n") == "plain (w*x+b)^2 é 你好\tx\n"
    assert safe_text("\x1b[31m\x07\x9b\r") == "\\x1b[31m\\x07\\x9b\\x0d"
    assert safe_text("a\u202eb\u2066c\u200fd\ufeff") == "a\\u202eb\\u2066c\\u200fd\\ufeff"
    assert safe_text("\udcff\U000e0041") == "\\udcff\\U000e0041"
    assert safe_text("a\nb", newlines=False) == "a\\x0ab"


def test_the_osc_example_writes_no_escape_or_bell_anywhere(run):
    code, out, err = run(OSC, "x=1")
    assert code == 0 and err == ""
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mRED\\x1b]0;pwned\\x07" in out
    assert "MulBackward0" in out and "AddBackward0" in out


@pytest.mark.parametrize("args", [
    ("x * \u202e2", "x=1"), ("x \x1b[31m+", "x=1"), ("x", "x=1", "--wrt", "\x1b]0;t\x07"),
    ("x", "\x1b=1"), ("x", "x=1", "--frob\x1b"),
])
def test_errors_escape_what_the_user_typed(run, args):
    code, out, err = run(*args)
    assert code == 2
    assert not any(c in err for c in "\x1b\x07\u202e")
    assert err.startswith("error: ")


def test_the_caret_stays_under_the_offending_column_after_escaping(run):
    code, _, err = run("\u202ex +* 1", "x=1")
    assert code == 2
    assert err == ("error: unexpected character '\\u202e'\n"
                   "  \\u202ex +* 1\n"
                   "  ^^^^^^\n")
    exc = DdxSyntaxError("missing operand", start=6, end=7, source="\x1bab + *")
    assert format_error(exc) == "error: missing operand\n  \\x1bab + *\n" + " " * 11 + "^"


def test_a_long_source_line_is_shown_around_the_caret():
    source = "x + " * 1000 + "*"
    exc = DdxSyntaxError("missing operand", start=len(source) - 1, end=len(source),
                         source=source)
    lines = format_error(exc).splitlines()
    assert lines[1] == "  ..." + source[-101:]
    assert lines[2] == " " * 105 + "^"


def test_file_names_and_csv_fields_are_escaped_on_stderr(run, tmp_path):
    code, _, err = run("run", str(tmp_path / "no\x1bfile"))
    assert code == 2
    assert err == f"error: cannot read {tmp_path}/no\\x1bfile: No such file or directory\n"
    data = tmp_path / "d.csv"
    data.write_text("a\u202eb,x\n1,\x1b[2J\n")
    code, _, err = run("batch", "--expr", "x*y", "--csv", str(data))
    assert code == 2
    assert err == ("error: the expression uses 'y', which is neither a column nor bound\n"
                   "hint: columns: a\\u202eb, x\n")
    code, out, err = run("batch", "--expr", "x*2", "--csv", str(data))
    assert code == 1 and out == "value,d_x\n,\n"
    assert err.splitlines()[0] == "error: row 1: field 'x' is not a number: '\\x1b[2J'"


def test_batch_human_view_escapes_job_lines(run):
    jobs = ('{"expr": "(x # \\u001b]0;pwned\\u0007\\n)*2", "bindings": {"x": 1}}\n'
            '"x +\u202e 1" x=1\n')
    code, out, err = run("batch", "-", "--human", input=jobs)
    assert code == 1
    assert not any(c in out + err for c in "\x1b\x07\u202e")
    assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out


def test_scripts_escape_their_output_and_errors(run):
    code, out, err = run("run", "-", input="x = 2.0\nx * 3\n\x1b]0;t\x07 + x\n")
    assert code == 1
    assert out == "tensor(6., grad_fn=<MulBackward0>)\n"
    assert err == "error: unexpected character '\\x1b'\n  3 | \\x1b]0;t\\x07 + x\n      ^^^^\n"


def test_json_keeps_the_real_characters_escaped_as_json(run):
    code, out, _ = run("x +\u202e\x1b", "x=1", "--json")
    assert code == 2
    assert out.isascii() and "\x1b" not in out
    assert json.loads(out)["error"]["message"] == "unexpected character '\\u202e'"
    jobs = '{"expr": "x*\\u001b", "bindings": {"x": 1}}\n' + '"x * y" x=1 y=2\n' * 2
    code, out, _ = run("batch", "-", input=jobs)
    assert code == 1
    assert out.isascii() and "\x1b" not in out
    docs = [json.loads(line) for line in out.splitlines()]
    assert docs[0]["error"]["message"] == "unexpected character '\\x1b'"
    assert docs[1]["value"] == docs[2]["value"] == 2.0  # (the second one replayed)


def test_markup_in_user_text_is_shown_as_written(run):
    code, out, _ = run("sum([b]*x)", "b=1", "x=[1,2]", "--explain", "--no-color")
    assert code == 0
    row = next(line for line in out.splitlines() if line.strip().startswith("MulBackward0 [b]*x"))
    assert row.split()[:4] == ["MulBackward0", "[b]*x", "[b]", "x"]


def test_ddx_own_bracketed_texts_survive_any_console():
    """explain's texts such as '[x > 0]' reach the screen even through a console that reads
    markup (a notebook's, a test's)."""
    result = {"leaves": {"x": {"mode": "nodes", "gradient": 1.0, "path_count": 1}},
              "steps": [{"node": "ReluBackward0", "at": "relu(x)", "input": "x",
                         "local": "[x > 0]", "upstream": 1.0, "gets": 1.0, "summed_axes": [0]},
                        {"node": "MaxBackward1", "at": "max(v)", "input": "v",
                         "local": "[is the max]", "upstream": 1.0, "gets": 1.0,
                         "summed_axes": []}],
              "nonfinite": None}

    class View:
        output_name = "out"

    console = Console(record=True, width=120, color_system=None)
    console.print(explain_view(View(), result))
    text = console.export_text()
    assert "[x > 0]" in text and "[is the max]" in text


# --- 6. exit codes and formats ---------------------------------------------------------------

@pytest.mark.parametrize("args, value", [
    (("-tanh(x)", "x=1"), -0.7615941559557649), (("-theta", "theta=1"), -1.0),
    (("-h*x", "h=1", "x=2"), -2.0), (("--json", "--", "--x", "x=3"), 3.0),
    (("-x", "--json", "x=4"), -4.0), (("x", "x=-5"), -5.0),
])
def test_an_expression_starting_with_a_dash_is_evaluated(run, args, value):
    code, out, err = run(*args, *(() if "--json" in args else ("--json",)))
    assert (code, err) == (0, "")
    assert json.loads(out)["value"] == value


@pytest.mark.parametrize("args, message, hint", [
    (("x", "--dtype", "int64"), "invalid value for '--dtype': 'int64' is not one of "
                                "'float64', 'float32'", "see ddx --help"),
    (("x", "x=1", "--frob"), "no such option: --frob",
     "see ddx --help; an expression that starts with '--' goes after a '--': ddx -- --x x=1"),
    (("x", "x=1", "--wrt"), "option --wrt needs a value", None),
    (("x", "x=1", "--emit", "rust"), "invalid value for '--emit': 'rust' is not one of "
                                     "'torch', 'jax'", "see ddx --help"),
])
def test_usage_errors_are_ddx_errors_with_a_json_object(run, args, message, hint):
    for as_json in (False, True):
        code, out, err = run(*(("--json",) if as_json else ()), *args)
        assert code == 2
        assert err == f"error: {message}\n" + (f"hint: {hint}\n" if hint else "")
        if as_json:
            want = {"type": "UsageError", "message": message, "line": None, "column": None}
            assert json.loads(out) == {"error": {**want, **({"hint": hint} if hint else {})}}
        else:
            assert out == ""


def test_command_usage_errors_have_the_ddx_format(run, tmp_path):
    code, out, err = run("run", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (f"error: invalid value for 'FILE': File '{tmp_path}' is a directory\n"
                   "hint: see ddx run --help\n")
    code, _, err = run("batch", "--bogus")
    assert code == 2 and err == "error: no such option '--bogus'\nhint: see ddx batch --help\n"


def test_no_arguments_without_a_terminal_is_a_usage_error():
    proc = ddx(stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr == (b"error: missing command or expression\n"
                           b'hint: try: ddx "(w*x+b)^2" w=3 x=2 b=1, or ddx --help\n')


def test_help_still_works_everywhere(run):
    for args in (("--help",), ("-h",), ("x", "-h"), ("batch", "--help")):
        code, out, err = run(*args)
        assert code == 0 and err == "" and out.startswith("Usage: ddx")


def test_batch_errors_carry_the_one_liners_fields(run):
    one = json.loads(run("x^2", "x=[1,2]", "--hessian", "--json")[1])["error"]
    assert one["hint"] == "reduce it first, e.g. sum(...), or use --jacobian"
    code, out, _ = run("batch", "-", input='"x^2" x=[1,2] --hessian\n"x" x=1 --frob\n'
                                           '"x" x\n"-x" -- x=1\n"x" -- --x\n')
    assert code == 1
    docs = [json.loads(line) for line in out.splitlines()]
    assert docs[0]["error"] == one
    assert docs[1]["error"] == json.loads(run("x", "x=1", "--frob", "--json")[1])["error"]
    assert docs[2]["error"] == json.loads(run("x", "x", "--json")[1])["error"]
    assert docs[3]["value"] == -1.0
    assert docs[4]["error"]["message"] == "expected NAME=VALUE, got '--x'"
