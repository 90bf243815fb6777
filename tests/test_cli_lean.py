"""The lean entry point (ddx/app/cli_lean.py): a plain data job starts without Click, reads its
arguments as Click reads them, and behaves as the Click command does; anything else is Click's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ddx.app.cli import main as click_main
from ddx.app.cli_lean import lean_batch


def click_params(args: list[str]) -> dict:
    """What Click hands the batch command for these words."""
    command = click_main.commands["batch"]
    ctx = command.make_context("batch", list(args))
    return ctx.params


LEAN_WORDS = [
    ["--expr", "(w*x+b)^2", "--data", "d.csv"],
    ["--expr", "w*x", "--data", "d.parquet", "-o", "out.parquet"],
    ["--expr=w*x + k", "--csv", "d.csv", "k=2", "--output", "o.csv"],
    ["k=2", "--expr", "w*x + k", "--jsonl", "-", "j=3", "--format", "jsonl,csv"],
    ["--expr", "x", "--data", "-", "--format", "csv", "--map", "x=a", "--map", "y=b,z=c",
     "--keep"],
    ["--expr", "", "--data", "d.csv"],
    ["--expr", "x", "--data=", "-o", "-"],
    ["--data", "d.csv"],
    ["--expr", "x"],
]


@pytest.mark.parametrize("words", LEAN_WORDS)
def test_the_lean_reading_gives_what_click_gives(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (no file of these names exists here)
    lean = lean_batch(["batch", *words])
    assert lean is not None
    params = click_params(words)
    for name in ("human", "no_color", "debug"):
        assert params.pop(name) is False  # (the lean path never has them: Click's own)
    assert params.pop("dask") is None
    absent = dict.fromkeys(("expr", "csv_file", "jsonl_file", "data_file", "fmt", "output"))
    assert {**absent, **lean} == params  # (data_command's defaults for what is not given)


@pytest.mark.parametrize("words", [
    ["--expr", "x", "--data", "d.csv", "--help"],  # help
    ["--expr", "x", "--data", "d.csv", "-h"],
    ["--expr", "-x^2", "--data", "d.csv"],  # a value that starts with "-"
    ["--expr", "x", "--expr", "y", "--data", "d.csv"],  # an option twice
    ["--expr", "x", "--data", "d.csv", "--keep", "--keep"],
    ["--expr", "x", "--data", "d.csv", "--dask"],  # options the lean path does not take
    ["--expr", "x", "--data", "d.csv", "--human"],
    ["--expr", "x", "--data", "d.csv", "--debug"],
    ["--expr", "x", "--data", "d.csv", "--nope"],
    ["--expr", "x", "--data", "d.csv", "-oout.csv"],
    ["--expr", "x", "--data", "d.csv", "--", "k=1"],
    ["--expr", "x", "--data", "d.csv", "-"],
    ["--expr", "x", "--data"],  # a value missing
    ["jobs.txt"],  # a job file: not data mode
    [],
])
def test_anything_else_is_left_to_click(words):
    assert lean_batch(["batch", *words]) is None


def test_other_commands_and_completion_are_left_to_click(monkeypatch):
    assert lean_batch(["x^2", "x=3"]) is None
    assert lean_batch(["eval", "--expr", "x", "--data", "d.csv"]) is None
    monkeypatch.setenv("_DDX_COMPLETE", "bash_complete")
    assert lean_batch(["batch", "--expr", "x", "--data", "d.csv"]) is None


def test_a_word_naming_an_existing_path_is_left_to_click(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k=2").mkdir()  # Click refuses a folder as the FILE argument
    assert lean_batch(["batch", "--expr", "x", "--data", "d.csv", "k=2"]) is None


PROBE = ("import atexit, gc, sys\n"
         "def _report():\n"
         "    sys.stderr.write('PROBE %s %s %s' % ('click' in sys.modules, gc.isenabled(),\n"
         "                     gc.get_freeze_count() > 0))\n"
         "atexit.register(_report)\n")


def ddx(args: list[str], cwd, *, probe=None, click=False):
    """``python -m ddx ARGS`` (or Click's command directly), with a start-up probe."""
    env = dict(os.environ)
    if probe is not None:
        (probe / "sitecustomize.py").write_text(PROBE)
        env["PYTHONPATH"] = str(probe) + os.pathsep + env.get("PYTHONPATH", "")
    head = ["-c", "from ddx.app.cli import main; main(prog_name='ddx')"] if click else ["-m", "ddx"]
    return subprocess.run([sys.executable, *head, *args], cwd=cwd, env=env, capture_output=True,
                          timeout=120)


def test_a_data_job_runs_without_click_and_collects_again_after_its_start(tmp_path):
    (tmp_path / "d.csv").write_text("w,x\n1,2\n3,4\n")
    probe = tmp_path / "probe"
    probe.mkdir()
    proc = ddx(["batch", "--expr", "w*x", "--data", "d.csv"], tmp_path, probe=probe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"value,d_w,d_x\n2.0,2.0,1.0\n12.0,4.0,3.0\n"
    assert proc.stderr.decode().endswith("PROBE False True True")
    proc = ddx(["batch", "--expr", "w*x", "--data", "d.csv", "--human"], tmp_path, probe=probe)
    assert proc.stderr.decode().endswith("PROBE True True False")  # (Click's command)


def without_timing(err: bytes) -> list[str]:
    return [line if not line.startswith("batch: ") else line.split(",")[:2]
            for line in err.decode().splitlines()]


@pytest.mark.parametrize("words", [
    ["--expr", "w*x + k", "--data", "d.csv", "k=2"],
    ["--expr", "w*x", "--data", "bad.csv", "--format", "csv,jsonl"],  # bad rows: exit 1
    ["--expr", "w*x", "--data", "nope.csv"],  # a missing file
    ["--expr", "w*y", "--data", "d.csv"],  # no such column
    ["--expr", "w*x", "--data", "d.csv", "k"],  # not a binding
    ["--expr", "w*x", "--data", "d.csv", "--csv", "d.csv"],  # two inputs
    ["--expr", "(w", "--data", "d.csv"],  # a syntax error
    ["--data", "d.csv"],  # no expression
    ["--expr", "w*x", "--data", "d.csv", "-o", "d.csv"],  # over its own input
    ["--expr", "w*x", "--data", "d.txt"],  # an unknown format
    ["--expr", "w*x", "--data", "d.csv", "--format", "tsv"],
])
def test_the_lean_path_answers_as_the_click_command_does(words, tmp_path):
    (tmp_path / "d.csv").write_text("w,x\n1,2\n3,4\n")
    (tmp_path / "bad.csv").write_text("w,x\n1,2\n3,\n5,6\n")
    (tmp_path / "d.txt").write_text("w,x\n1,2\n")
    lean = ddx(["batch", *words], tmp_path)
    ours = ddx(["batch", *words], tmp_path, click=True)
    assert lean.returncode == ours.returncode
    assert lean.stdout == ours.stdout
    assert without_timing(lean.stderr) == without_timing(ours.stderr)
    assert b"Traceback" not in lean.stderr
