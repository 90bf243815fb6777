"""ddx batch: job files (order, completeness, every error kind) and data files (CSV, JSON Lines)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.app import csvio

JOBS = b"""# a comment, then a blank line

"(w*x+b)^2" w=3 x=2 b=1
"(w*x" w=1
{"expr": "sin(x)", "bindings": {"x": 0}, "wrt": ["x"]}
"w*x" w=3 x=[2,4]
"q + 1"
\xff\xfe not utf-8
"a + b" a=[1,2] b=[1,2,3]
'x^2' x=3 --wrt x
"x" --nonsense
"w*x" w=3 x=[2,4] --grad-output ones
"""


def run_batch(*args, input: bytes):
    proc = subprocess.run([sys.executable, "-m", "ddx", "batch", *args], input=input,
                          capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_jobs_in_order_with_every_error_kind():
    code, out, err = run_batch("-", input=JOBS + b"X" * (1 << 20) + b"\n" + b'"1+1"\n')
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [d["line"] for d in docs] == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    ok = {d["line"]: d for d in docs if "error" not in d}
    bad = {d["line"]: d["error"] for d in docs if "error" in d}
    assert ok[3]["gradients"] == {"w": 28.0, "x": 42.0, "b": 14.0} and ok[3]["value"] == 49.0
    assert ok[5]["gradients"] == {"x": 1.0}
    assert ok[10]["gradients"] == {"x": 6.0}
    assert ok[12]["gradients"] == {"w": 6.0, "x": [3.0, 3.0]}
    assert ok[14]["value"] == 2.0
    assert bad[4] == {"type": "SyntaxError", "message": "missing ')'", "line": 1, "column": 5,
                      "hint": "every '(' needs a matching ')'"}
    assert bad[6]["message"] == "grad can be implicitly created only for scalar outputs"
    assert bad[7]["type"] == "NameError" and bad[7]["column"] == 1
    assert bad[8]["message"] == "invalid UTF-8 at byte 0"
    assert bad[9]["type"] == "ShapeError"
    assert bad[11]["message"] == "no such option: --nonsense"
    assert bad[13]["message"].startswith("line too long")
    assert "batch: 12 jobs, 7 failed" in err and "Traceback" not in err


def test_all_good_jobs_exit_0_and_human_view():
    code, out, err = run_batch("-", input=b'"x^2" x=3\n"sin(x)" x=0\n')
    assert code == 0 and "batch: 2 jobs, 0 failed" in err
    code, out, _ = run_batch("--human", "--no-color", "-", input=b'"x^2" x=3\n"x^" x=1\n')
    assert "PowBackward0" in out and "error: missing operand after '^'" in out and code == 1


def test_job_file_argument_and_missing_file(tmp_path):
    path = tmp_path / "jobs.txt"
    path.write_text('"x*y" x=2 y=5\n')
    code, out, _ = run_batch(str(path), input=b"")
    assert code == 0 and json.loads(out)["gradients"] == {"x": 5.0, "y": 2.0}
    code, _, err = run_batch(str(tmp_path / "missing.txt"), input=b"")
    assert code == 2 and "cannot read" in err


def make_csv(path, rows: np.ndarray, header="w,x,b") -> None:
    path.write_text(header + "\n" + "\n".join(",".join(map(repr, r)) for r in rows.tolist()) + "\n")


def closed_form(rows: np.ndarray) -> np.ndarray:
    w, x, b = rows.T
    y = w * x + b
    return np.stack([y * y, 2 * y * x, 2 * y * w, 2 * y], axis=1)


def read_results(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def test_csv_results_match_closed_form_across_chunk_boundaries(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    rows = rng.uniform(-2, 2, (1000, 3))
    make_csv(tmp_path / "d.csv", rows)
    code, out, err = run_batch("--expr", "(w*x+b)^2", "--csv", str(tmp_path / "d.csv"),
                               input=b"")
    assert code == 0, err
    header, body = read_results(out)
    assert header == ["value", "d_w", "d_x", "d_b"] and len(body) == 1000
    got = np.array(body, dtype=float)
    np.testing.assert_allclose(got, closed_form(rows), rtol=1e-15)
    # the same through small chunks, in-process: 1000 rows is not a multiple of 64
    import io

    from ddx.app.data import DataRun
    monkeypatch.setattr(csvio, "CHUNK_ROWS", 64)
    text = (tmp_path / "d.csv").read_text()
    out2 = io.StringIO()
    run = DataRun("(w*x+b)^2", {})
    chunks = csvio.read_csv(io.StringIO(text.split("\n", 1)[1]), ["w", "x", "b"],
                            ["w", "x", "b"], chunk_rows=64)
    assert sum(c.n for c in chunks) == 1000
    run.run(io.StringIO(text), out2, lambda m: None)
    assert out2.getvalue() == out


def test_bad_rows_on_a_chunk_boundary_are_reported_and_kept_empty(tmp_path):
    rng = np.random.default_rng(3)
    rows = rng.uniform(-2, 2, (130, 3))
    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in rows.tolist()]
    lines[64] = "1.0,oops,2.0"   # data row 64: the last row of the first 64-row chunk
    lines[65] = "1.0,2.0"        # data row 65: the first row of the second
    lines[100] = ""              # an empty row
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    import io

    from ddx.app.data import DataRun
    reports: list[str] = []
    out = io.StringIO()
    chunks_before = csvio.CHUNK_ROWS
    csvio.CHUNK_ROWS = 64
    try:
        run = DataRun("(w*x+b)^2", {})
        source = open(tmp_path / "d.csv", newline="")
        header = csvio.csv_header(source)
        run.variables(header)
        out.write("value,d_w,d_x,d_b\n")
        for chunk in csvio.read_csv(source, header, ["w", "x", "b"], chunk_rows=64):
            value, grads = run.compute(chunk)
            for i, why in sorted(chunk.bad.items()):
                reports.append(f"row {chunk.first + i}: {why}")
            csvio.write_csv(out, [value, grads["w"], grads["x"], grads["b"]], chunk.bad)
    finally:
        csvio.CHUNK_ROWS = chunks_before
    assert reports == ["row 64: field 'x' is not a number: 'oops'",
                       "row 65: expected 3 fields, got 2", "row 100: empty row"]
    body = out.getvalue().splitlines()[1:]
    assert len(body) == 130
    assert body[63] == ",,," and body[64] == ",,," and body[99] == ",,,"
    good = [i for i in range(130) if i not in (63, 64, 99)]
    got = np.array([body[i].split(",") for i in good], dtype=float)
    np.testing.assert_allclose(got, closed_form(rows[good]), rtol=1e-15)


def test_csv_through_pipes_and_exit_code_for_bad_rows():
    data = b"x,y\n1,2\n3,bad\n0.5,4\n"
    code, out, err = run_batch("--expr", "x*y + sin(x)", "--csv", "-", input=data)
    header, body = read_results(out)
    assert header == ["value", "d_x", "d_y"]
    assert body[1] == ["", "", ""]
    assert float(body[0][1]) == pytest.approx(2 + np.cos(1), rel=1e-15)
    assert code == 1 and "error: row 2: field 'y' is not a number: 'bad'" in err


def test_csv_missing_column_is_a_usage_error():
    code, _, err = run_batch("--expr", "w*z", "--csv", "-", input=b"w,x\n1,2\n")
    assert code == 2 and "the expression uses 'z', which is neither a column nor bound" in err


def test_csv_with_extra_bindings_and_reductions_fall_back_per_row():
    code, out, _ = run_batch("--expr", "max([x, y]) * k", "--csv", "-", "k=2",
                             input=b"x,y\n1,3\n5,2\n")
    assert code == 0
    header, body = read_results(out)
    assert header == ["value", "d_x", "d_y"]
    assert [list(map(float, r)) for r in body] == [[6.0, 0.0, 2.0], [10.0, 2.0, 0.0]]


def test_a_dtype_a_trace_refuses_is_an_error_on_every_path():
    """A job with --dtype float16 was computed in float64 once a template could replay it
    (the replay took any unknown dtype for float64); the ordinary path refuses it."""
    jobs = b'"x*2" x=3 --dtype float16\n"x*2" x=3 --dtype float16\n"x*2" x=3 --dtype float32\n'
    code, out, err = run_batch("-", input=jobs)
    docs = [json.loads(line) for line in out.splitlines()]
    message = "--dtype must be float64 or float32, not 'float16'"
    assert [d.get("error", {}).get("message") for d in docs] == [message, message, None]
    assert docs[2]["dtype"] == "float32" and docs[2]["value"] == 6.0
    assert code == 1 and "2 failed" in err


def test_jsonl_round_trip():
    data = b'{"x": 2, "y": 3}\n{"x": 1}\n{"x": 0.5, "y": -1}\n'
    code, out, err = run_batch("--expr", "x^2 * y", "--jsonl", "-", input=data)
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0] == {"row": 1, "value": 12.0, "d_x": 12.0, "d_y": 4.0}
    assert rows[1] == {"row": 2, "error": "no field 'y'"}
    assert rows[2] == {"row": 3, "value": -0.25, "d_x": -1.0, "d_y": 0.25}
    assert list(rows[0]) == ["row", "value", "d_x", "d_y"]  # the row first, as "line" in jobs
    assert code == 1 and "row 2" in err


@pytest.mark.parametrize("line", ['"(w*x+b)^2" w=3 x=2 b=1', "'x^2' x=3 --wrt x", 'a"b c"d e',
                                  'x="[1, 2]" "y"', "  a   b  ", 'say "it\'s"', "a\\ b c"])
def test_job_word_splitting_matches_shlex(line):
    import shlex

    from ddx.app.jobs import _split

    assert _split(line) == shlex.split(line)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=' \t"\'\\=.-+*()^ab1', max_size=8), max_size=5))
def test_the_usual_job_line_splits_as_any_other_line(words):
    """_split's one-match case gives what the general splitter gives, on lines that are
    and lines that almost are a quoted expression and plain words."""
    from ddx.app.jobs import _split, _split_words
    from ddx.errors import DdxUsageError

    for line in (" ".join(words), '"' + " ".join(words) + '"', '"' + "".join(words) + '" w=1'):
        try:
            expected = _split_words(line)
        except DdxUsageError:
            with pytest.raises(DdxUsageError):
                _split(line)
            continue
        assert _split(line) == expected, line


def test_unbalanced_quote_is_reported():
    from ddx.app.jobs import _split
    from ddx.errors import DdxUsageError

    with pytest.raises(DdxUsageError, match="bad quoting"):
        _split('"unbalanced')


def test_replayed_jobs_are_identical_to_fresh_runs():
    """Jobs sharing an expression replay the first one's graph; the JSON must not change."""
    import io

    from ddx.app.batch import run_jobs

    rng = np.random.default_rng(11)
    templates = [  # (job, how many numbers it takes, compiled straight from the AST?)
        ('"(w*x+b)^2" w={a} x={b} b={c}', 3, True),
        ('"y = w*x + b; L = mean(y^2) + norm(w) + sum(max(x, dim=0)[0])" w=[{a},{b}] '
         'x=[[1,2],[3,{c}]] b=[0.1] --no-grad x', 3, False),
        ('"sigmoid(z) * tanh(z) + relu(z - 0.5) + softplus(-z) + maximum(z, 0.3)" '
         'z=[{a},{b},{c}] --grad-output ones', 3, False),
        ('"2 - x ^ 3 + 2 ^ x + sqrt(x) * log(x) / exp(x) + x/y - 1/y" x={pa} y={pb}', 2, True),
        ('"a = 2; b = a*w + w; c = b*b + b; c / w" w={pa}', 1, False),
        ('"sum(sin(A @ v)) + dot(v, v) + A[0, 1:][0]" A=[[{a},2],[3,{b}]] v=[{c},1.5]', 3, False),
        ('"x^2 + y" x={a} y={b} --wrt x', 2, False),
        ('"(x^3.5 + x^-1.5) * y + sum(v^2.5) * x" x={pa} y={b} v=[{pb},{pa}]', 3, True),
    ]
    lines = []
    for _ in range(12):
        for text, _n, _lean in templates:
            a, b, c = (float(v) for v in rng.uniform(-2, 2, 3))
            pa, pb = (float(v) for v in rng.uniform(0.1, 3, 2))
            lines.append(text.format(a=repr(a), b=repr(b), c=repr(c), pa=repr(pa), pb=repr(pb)))
    lines.append('"log(x) + x" x=0')   # a domain problem in a replayable shape ...
    lines.append('"log(x) + x" x=1')
    lines.append('"log(x) + x" x=0')   # ... after the template exists: run the ordinary way
    data = ("\n".join(lines) + "\n").encode()

    kinds: list[str] = []

    def collect(replay: bool) -> list[str]:
        docs: list[str] = []
        kinds.clear()

        def emit(line, result, error):
            kinds.append(type(result).__name__)
            if isinstance(result, str):  # replayed: already written out
                docs.append(f'{{"line": {line}, {result}')
                return
            if error is not None:
                docs.append(json.dumps({"line": line, "error": error.to_json()}))
            else:
                docs.append(f'{{"line": {line}, {result.to_json()[1:]}')
        run_jobs(io.BytesIO(data), emit, replay=replay)
        return docs

    fresh, replayed = collect(False), collect(True)
    assert len(fresh) == len(lines)
    # replayed: every job of an expression compiled from its AST, all but the first two of the
    # others (the second makes the template); of the log(x) lines, only the one without a
    # domain problem (x=0 gives a warning, which only the ordinary path reports)
    assert kinds.count("str") == sum(12 if lean else 10 for *_, lean in templates) + 1
    assert replayed == fresh
    assert json.loads(replayed[-1])["warnings"] and json.loads(replayed[-1])["value"] == "-inf"


def test_a_huge_line_is_never_held_whole():
    """job_lines reads at most MAX_LINE + 1 bytes of a line at a time (issue 18: a 2 GiB line
    reached 4 GiB before the length check); the next line still runs."""
    from ddx.app.jobs import MAX_LINE, job_lines

    class Stream(io.BytesIO):
        asked: list = []

        def readline(self, size=-1):
            assert 0 < size <= MAX_LINE + 1 or size == 1 << 20, size
            got = super().readline(size)
            self.asked.append(len(got))
            return got

    huge = b"1+" * (2 * MAX_LINE) + b"1\n"
    stream = Stream(b'"x" x=1\n' + huge + b'"2*x" x=3\n')
    lines = list(job_lines(stream))
    assert [n for n, _ in lines] == [1, 2, 3]
    assert str(lines[1][1]) == f"line too long ({len(huge)} bytes; the limit is {MAX_LINE})"
    assert lines[2][1] == '"2*x" x=3\n'
    assert max(stream.asked) <= MAX_LINE + 1
