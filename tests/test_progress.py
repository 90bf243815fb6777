"""Progress for long batch runs (issue 17): on a terminal's stderr only, with the count, percentage
and ETA when the size is known and the rate when it is not; never in a pipe or in CI."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from ddx.app import progress

pexpect = pytest.importorskip("pexpect")
DDX = [sys.executable, "-m", "ddx"]


def child_env(**more) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "DDX_NO_PROGRESS")}
    env.update(TERM="xterm", DDX_PROGRESS_DELAY="0", **more)
    return env


def in_a_terminal(command: str, env: dict, cwd) -> str:
    """Everything a terminal shows while ``command`` runs (stdout and stderr)."""
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, cwd=str(cwd), encoding="utf-8",
                          timeout=120, dimensions=(24, 120))
    text = child.read()
    child.close()
    assert child.exitstatus == 0, text
    return text


def command(*args: str) -> str:
    return " ".join(f"'{a}'" for a in DDX + list(args))


@pytest.fixture
def jobs(tmp_path):
    path = tmp_path / "jobs.txt"
    path.write_text("".join(f'"(w*x+b)^2" w={i % 7} x={i % 5} b=1\n' for i in range(1500)))
    return path


def test_a_job_file_shows_lines_percentage_and_eta_on_a_terminal(tmp_path, jobs):
    shown = in_a_terminal(command("batch", str(jobs), "-o", "out.jsonl"), child_env(), tmp_path)
    assert " lines" in shown and "%" in shown and "ETA" in shown
    assert "batch: 1500 jobs, 0 failed" in shown
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 1500


def test_no_progress_in_a_pipe_or_in_ci(tmp_path, jobs):
    proc = subprocess.run(DDX + ["batch", str(jobs)], capture_output=True, text=True,
                          env=child_env(), timeout=120)
    assert proc.returncode == 0
    assert proc.stderr.startswith("batch: 1500 jobs, 0 failed") and proc.stderr.count("\n") == 1
    assert len(proc.stdout.splitlines()) == 1500
    shown = in_a_terminal(command("batch", str(jobs), "-o", "out.jsonl"), child_env(CI="true"),
                          tmp_path)
    assert "ETA" not in shown and "%" not in shown


def test_a_csv_file_shows_rows_and_percentage_and_stdin_the_rate(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("w,x,b\n" + "".join(f"{i % 7},{i % 5}.5,1\n" for i in range(70000)))
    env = child_env(DDX_DATA_ENGINE="plain")
    shown = in_a_terminal(command("batch", "--expr", "(w*x+b)^2", "--csv", str(data), "-o",
                                  "out.csv"), env, tmp_path)
    assert " rows" in shown and "%" in shown and "ETA" in shown
    shown = in_a_terminal(f"cat '{data}' | " + command("batch", "--expr", "(w*x+b)^2", "--csv",
                                                       "-", "-o", "out2.csv"), env, tmp_path)
    assert " rows/s" in shown and "ETA" not in shown
    assert (tmp_path / "out.csv").read_text() == (tmp_path / "out2.csv").read_text()


def test_when_progress_may_show():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert progress.wanted(Tty(), {}) is True
    assert progress.wanted(Tty(), {"CI": "true"}) is False
    assert progress.wanted(Tty(), {"TERM": "dumb"}) is False
    assert progress.wanted(io.StringIO(), {}) is False


def test_totals(tmp_path):
    (tmp_path / "a").write_bytes(b"1\n2\n3\n")
    (tmp_path / "b").write_bytes(b"1\n2\n3")
    assert progress.line_total(str(tmp_path / "a")) == 3
    assert progress.line_total(str(tmp_path / "b")) == 3
    assert progress.file_total(str(tmp_path / "b")) == 5
    assert progress.file_total("-") is None and progress.line_total(None) is None


def test_off_costs_nothing_and_changes_nothing():
    bar = progress.Progress("rows", total=10, enabled=False)
    bar.advance(5)
    assert bar.count == 0 and bar._bar is None

    def emit(line, result, error):
        return None

    assert progress.counted(emit, bar) is emit  # not even a wrapper when off


def test_a_shown_bar_counts_what_it_was_told(monkeypatch):
    monkeypatch.setattr(progress, "REFRESH", 0)  # every advance updates the bar
    out = io.StringIO()
    bar = progress.Progress("jobs", total=4, stream=out, enabled=True, delay=0)
    for _ in range(4):
        bar.advance()
    assert bar.count == 4 and bar._bar is not None
    task = bar._bar.tasks[0]
    assert (task.completed, task.total, task.fields["count"]) == (4, 4, 4)
    bar.close()
    assert bar._bar is None


def test_a_data_files_rows_are_estimated_from_its_size_and_first_lines(tmp_path, monkeypatch):
    small = tmp_path / "small.csv"
    small.write_text("x\n" + "".join(f"{i}\n" for i in range(100)))
    assert progress.row_estimate(str(small)) == 101  # read whole: exact
    big = tmp_path / "big.csv"
    big.write_text("x\n" + "".join(f"{i % 10}.5\n" for i in range(20000)))  # 4 bytes a row
    monkeypatch.setattr(progress, "SAMPLE", 4000)
    assert abs(progress.row_estimate(str(big)) - 20001) <= 20
    assert progress.row_estimate("-") is None
