"""Data mode through Polars and PyArrow (the data extra): the same bytes, row numbers and messages as
the plain reader and writer, Parquet in and out, --map, --keep, and nothing imported by a
one-liner."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import polars as pl  # (the data extra: CI installs it)
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.app import columnar, csvio, overlap
from ddx.app.datajob import DataJob


def run_job(path, expr: str, *, plain: bool, bindings=None, **kw):
    """(output bytes, error reports, rows, bad rows) of one data job, in-process."""
    job = DataJob(expr, dict(bindings or {}), str(path), kw.pop("output", None), plain=plain,
                  **kw)
    reports: list[str] = []
    out = io.StringIO() if plain else io.BytesIO()
    run = job.execute(out, reports.append)
    data = out.getvalue()
    if plain:
        data = data.encode("utf-8", "surrogateescape")
    return data, reports, run.rows, run.bad_rows


def both(path, expr: str, **kw):
    plain = run_job(path, expr, plain=True, **kw)
    fast = run_job(path, expr, plain=False, **kw)
    return plain, fast


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few hundred bytes, pieces of three rows, and runs of about twenty rows written
    at a time: every boundary is exercised."""
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 300)
    monkeypatch.setattr(columnar, "PIECE_ROWS", 3)
    monkeypatch.setattr(csvio, "CHUNK_ROWS", 7)
    monkeypatch.setattr(overlap, "GATHER_ROWS", 20)


def closed_form(rows: np.ndarray) -> np.ndarray:
    w, x, b = rows.T
    y = w * x + b
    return np.stack([y * y, 2 * y * x, 2 * y * w, 2 * y], axis=1)


SPECIAL = [0.0, -0.0, 1.0, 1e-5, -3.2e-7, 1e-9, 9.99e-5, 1e-4, 1e16, 1.5e17, 1e22, 5e-324, 123.0,
           1e300]


def test_csv_bytes_rows_and_messages_match_the_plain_path(tmp_path, small_blocks):
    rng = np.random.default_rng(20)
    rows = np.concatenate([rng.standard_normal((300, 3)),
                           np.array(SPECIAL * 3).reshape(-1, 3)[:14]])
    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in rows.tolist()]
    lines[5] = "1.0,oops,2.0"          # not a number
    lines[17] = "1.0,2.0"              # a short row
    lines[30] = "1.0,2.0,3.0,4.0"      # a long row
    lines[41] = ""                     # an empty row
    lines[42] = "   "                  # blank
    lines[60] = ' 1.5,"2.5", 3 '       # spaces and quotes: the plain reader takes them
    lines[77] = "nan,inf,-inf"         # numbers float() takes
    lines[90] = "1_0,2,3"              # so is this one (Polars does not take it)
    lines[100] = "1,2,"                # an empty last field
    lines[120] = '"1.5'                # a line break in quotes: two bad rows for the plain
    lines[121] = '2.5",3,4'            # reader, one row for Polars
    text = ("\n".join(lines) + "\n").encode()
    text = text.replace(b"1.0,oops", b"\xff\xfe,oops")  # bytes that are not UTF-8 too
    (tmp_path / "d.csv").write_bytes(text)
    plain, fast = both(tmp_path / "d.csv", "(w*x+b)^2")
    assert fast == plain
    data, reports, nrows, bad = fast
    assert nrows == len(lines) - 1 and bad == 8
    assert [r.split(":")[0] for r in reports] == \
        ["row 5", "row 17", "row 30", "row 41", "row 42", "row 100", "row 120", "row 121"]
    assert reports[1] == "row 17: expected 3 fields, got 2"
    out = data.decode().splitlines()
    assert out[0] == "value,d_w,d_x,d_b" and out[5] == ",,," and out[17] == ",,,"
    assert out[60] == ",".join(map(repr, closed_form(np.array([[1.5, 2.5, 3.0]]))[0].tolist()))
    assert out[90].split(",")[0] == repr((10.0 * 2 + 3) ** 2)


def test_a_bad_row_is_read_again_alone_not_its_whole_block(tmp_path, monkeypatch):
    """Fields Polars does not read as numbers, empty fields, short and empty rows: only those
    rows go through the plain reader's code again (a long row still sends its piece there)."""
    read_again: list[str] = []
    slowly = csvio.parse_rows_slowly

    def counting(lines, *args):
        read_again.extend(lines)
        return slowly(lines, *args)

    rng = np.random.default_rng(8)
    rows = rng.standard_normal((3000, 3))
    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in rows.tolist()]
    lines[10] = "1.0,,2.0"
    lines[500] = "1.0,abc,2.0"
    lines[1500] = "1.0,2.0"
    lines[2000] = ""
    lines[2500] = "1_0,2,3"  # (Python's float reads it, Polars does not: a good row)
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    plain = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=True)
    monkeypatch.setattr(csvio, "parse_rows_slowly", counting)
    fast = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=False)
    assert fast == plain and fast[3] == 4
    assert read_again == [lines[i] + "\n" for i in (10, 500, 1500, 2000, 2500)]
    assert fast[0].decode().splitlines()[2500] == ",".join(
        map(repr, closed_form(np.array([[10.0, 2.0, 3.0]]))[0].tolist()))


def test_a_bad_json_lines_row_is_read_again_alone_not_its_whole_block(tmp_path, monkeypatch):
    """A JSON Lines row Polars reads with a null (a missing field, a null): only those rows go
    through the plain reader's code again (text such as "2.5", which Polars refuses, still sends
    its piece there)."""
    read_again: list[str] = []
    slowly = csvio.parse_json_rows

    def counting(lines, names):
        read_again.extend(lines)
        return slowly(lines, names)

    rng = np.random.default_rng(9)
    lines = [json.dumps({"x": x, "y": y}) for x, y in rng.standard_normal((3000, 2)).tolist()]
    lines[10] = '{"x": 1.5}'
    lines[700] = '{"x": null, "y": 2}'
    lines[1800] = '{"y": 4, "z": "x"}'
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    plain = run_job(tmp_path / "d.jsonl", "x^2 * y", plain=True)
    monkeypatch.setattr(csvio, "parse_json_rows", counting)
    fast = run_job(tmp_path / "d.jsonl", "x^2 * y", plain=False)
    assert fast == plain and fast[3] == 3
    assert read_again == [lines[i] + "\n" for i in (10, 700, 1800)]
    out = [json.loads(line) for line in fast[0].decode().splitlines()]
    assert out[10]["error"] == "no field 'y'" and out[1800]["error"] == "no field 'x'"
    assert "error" in out[700] and "error" not in out[701]
    x, y = json.loads(lines[701]).values()
    assert (out[701]["value"], out[701]["d_x"], out[701]["d_y"]) == (x * x * y, 2 * x * y, x * x)


def test_lone_carriage_returns_and_crlf_count_rows_as_the_plain_reader(tmp_path, small_blocks):
    text = b"w,x,b\r\n1,2,3\r\n4,5,6\r7,8,9\n" + b"".join(
        b"%d,1,2\r\n" % i for i in range(40))
    (tmp_path / "d.csv").write_bytes(text)
    plain, fast = both(tmp_path / "d.csv", "w*x+b")
    assert fast == plain and fast[2] == 43 and fast[3] == 0
    assert fast[0].splitlines()[3] == b"65.0,8.0,7.0,1.0"  # the row after the lone \r


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.floats(min_value=-1e6, max_value=1e6),
                          st.sampled_from([0.0, 1.0, -2.5, 1e-7, 3e-5, 1e17])),
                min_size=1, max_size=60),
       st.sets(st.integers(0, 59), max_size=4))
def test_any_numbers_and_bad_rows_are_written_as_the_plain_writer_writes_them(rows, bad):
    import tempfile

    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in rows]
    for i in bad:
        if i + 1 < len(lines):
            lines[i + 1] = lines[i + 1].replace(",", ";", 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/d.csv"
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        for expr in ("(w*x+b)^2", "sqrt(w) * x + b"):
            plain, fast = both(path, expr)
            assert fast == plain
        jpath = f"{tmp}/d.jsonl"
        with open(jpath, "w") as fh:
            for r in rows:
                fh.write(json.dumps(dict(zip("wxb", r))) + "\n")
        plain, fast = both(jpath, "w*x - b")
        assert fast == plain


def test_the_plain_writers_text_of_every_float_is_polars_text():
    """The premise of both CSV writers: Polars' text of a float64 is csvio.short_text of its repr
    (random bit patterns, every magnitude, the band below 1e-4 where they differ, both signs)."""
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.integers(0, 2**64, 200_000, dtype=np.uint64).view(np.float64),
                        10.0 ** rng.uniform(-30, 30, 200_000),
                        10.0 ** rng.uniform(-11, -3, 100_000) * rng.choice([-1, 1], 100_000),
                        np.round(rng.uniform(-1e17, 1e17, 50_000)),
                        np.array(SPECIAL + [np.nan, np.inf, -np.inf, 1e-10, -1e-5,
                                            9.999999999999999e-05, 1.0000000000000001e-05])])
    buf = io.BytesIO()
    pl.DataFrame({"v": x}).write_csv(buf, include_header=False)
    assert buf.getvalue().decode().splitlines() == [csvio.short_text(repr(v))
                                                     for v in x.tolist()]
    assert [csvio.short_text(repr(v)) for v in (1e-05, -1.5e-05, 9.99e-05, 1.5e-07, 2e-09,
                                                1.5e-10, np.nan, 1e+16, 0.0001)] == \
        ["0.00001", "-0.000015", "0.0000999", "1.5e-7", "2e-9", "1.5e-10", "NaN", "1e+16",
         "0.0001"]


def test_jsonl_bytes_and_messages_match_the_plain_path(tmp_path, small_blocks):
    rows = [{"x": i / 7, "y": -i} for i in range(50)]
    lines = [json.dumps(r) for r in rows]
    lines[3] = '{"x": 1}'                     # missing y
    lines[9] = "[1, 2]"                       # not an object
    lines[12] = ""                            # empty
    lines[20] = '{"x": "2.5", "y": true}'     # float() takes both
    lines[33] = '{"x": NaN, "y": 1e-5}'
    lines[40] = '{"x": 1, "y": {"a": 1}}'
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    plain, fast = both(tmp_path / "d.jsonl", "x^2 * y")
    assert fast == plain
    data, reports, nrows, bad = fast
    assert nrows == 50 and bad == len(reports)
    assert {"row 4", "row 10", "row 13", "row 41"} <= {r.split(":")[0] for r in reports}
    out = [json.loads(line) for line in data.decode().splitlines()]
    assert {k: out[1][k] for k in ("value", "d_x", "d_y")} == \
        {"value": -(1 / 7) ** 2, "d_x": -2 / 7, "d_y": (1 / 7) ** 2}
    assert out[33]["value"] == "nan" and "error" in out[3] and "error" in out[9]


def write_parquet(path, columns: dict) -> None:
    pq.write_table(pa.table(columns), path, row_group_size=40)


def test_parquet_in_and_out_agree_with_csv(tmp_path):
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((150, 3))
    w = pa.array(rows[:, 0], mask=np.arange(150) == 77)        # a null: a bad row
    write_parquet(tmp_path / "d.parquet", {"w": w, "x": rows[:, 1],
                                           "b": np.arange(150, dtype=np.int64)})  # ints too
    data, reports, nrows, bad = run_job(tmp_path / "d.parquet", "(w*x+b)^2", plain=False,
                                        fmt="parquet,csv")
    assert nrows == 150 and bad == 1 and reports == ["row 78: field 'w' is empty"]
    same = rows.copy()
    same[:, 2] = np.arange(150)
    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in same.tolist()]
    lines[78] = ",,"
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    expect, _, _, _ = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=True)
    assert data == expect
    # Parquet out: float64 results, null in the bad row, the same numbers
    job = DataJob("(w*x+b)^2", {}, str(tmp_path / "d.parquet"), str(tmp_path / "o.parquet"))
    with open(tmp_path / "o.parquet", "wb") as fh:
        job.execute(fh, lambda m: None)
    table = pq.read_table(tmp_path / "o.parquet")
    assert table.column_names == ["value", "d_w", "d_x", "d_b"]
    got = np.array([table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names]).T
    want = closed_form(same)
    assert np.isnan(got[77]).all() and table.column("value").null_count == 1
    keep = np.arange(150) != 77
    assert got[keep].tobytes() == want[keep].tobytes()


def test_map_binds_variables_to_other_columns(tmp_path):
    (tmp_path / "d.csv").write_text("col_w,col_x,b,w\n3,2,1,100\n0.5,4,-1,100\n")
    data, reports, _, _ = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=False,
                                  mapping=("w=col_w", "x=col_x"))
    assert data == b"value,d_w,d_x,d_b\n49.0,28.0,42.0,14.0\n1.0,8.0,1.0,2.0\n"
    from ddx.errors import DdxUsageError

    with pytest.raises(DdxUsageError, match="the data has no column 'nope'"):
        run_job(tmp_path / "d.csv", "w*x", plain=False, mapping=("x=nope",))
    with pytest.raises(DdxUsageError, match="--map takes NAME=COLUMN"):
        run_job(tmp_path / "d.csv", "w*x", plain=False, mapping=("x",))


def test_keep_writes_the_input_columns_verbatim_before_the_results(tmp_path):
    (tmp_path / "d.csv").write_text('id,name,w,x,b\n7,"Smith, J",3,2,1\n8,,1e0,0x1,2\n'
                                    '9,plain,.5,4,-1\n')
    data, reports, nrows, bad = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=False, keep=True)
    assert reports == ["row 2: field 'x' is not a number: '0x1'"] and bad == 1
    assert data.decode().splitlines() == [
        "id,name,w,x,b,value,d_w,d_x,d_b",
        '7,"Smith, J",3,2,1,49.0,28.0,42.0,14.0',
        "8,,1e0,0x1,2,,,,",
        "9,plain,.5,4,-1,1.0,8.0,1.0,2.0"]
    write_parquet(tmp_path / "d.parquet", {"id": [7, 9], "w": [3.0, 0.5], "x": [2.0, 4.0],
                                           "b": [1.0, -1.0]})
    job = DataJob("(w*x+b)^2", {}, str(tmp_path / "d.parquet"), str(tmp_path / "o.parquet"),
                  keep=True)
    with open(tmp_path / "o.parquet", "wb") as fh:
        job.execute(fh, lambda m: None)
    table = pq.read_table(tmp_path / "o.parquet")
    assert table.to_pydict() == {"id": [7, 9], "w": [3.0, 0.5], "x": [2.0, 4.0], "b": [1.0, -1.0],
                                 "value": [49.0, 1.0], "d_w": [28.0, 8.0], "d_x": [42.0, 1.0],
                                 "d_b": [14.0, 2.0]}


def test_keep_across_blocks_written_together_keeps_each_row_with_its_results(tmp_path,
                                                                             small_blocks):
    """Blocks gathered into one write (overlap.Gathered): the kept columns of each block stay
    beside its own results, and a bad row inside any block is still empty there."""
    rng = np.random.default_rng(5)
    rows = rng.integers(-9, 9, (60, 3)).astype(float)
    lines = ["id,w,x,b"] + [f"r{i},{w!r},{x!r},{b!r}" for i, (w, x, b) in enumerate(rows.tolist())]
    lines[13] = "r12,1,oops,2"
    lines[44] = "r43,1,2"
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    data, reports, nrows, bad = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=False, keep=True)
    assert nrows == 60 and bad == 2
    assert reports == ["row 13: field 'x' is not a number: 'oops'",
                       "row 44: expected 4 fields, got 3"]
    out = data.decode().splitlines()
    assert out[13] == "r12,1,oops,2,,,," and out[44] == ",,,,,,,"
    want = closed_form(rows)
    for i in (0, 1, 19, 20, 21, 40, 59):
        assert out[i + 1] == ",".join([f"r{i}"] + [repr(v) for v in rows[i].tolist()]
                                      + [repr(v) for v in want[i].tolist()])


def ddx(*args, input: bytes = b"", env=None):
    import os

    proc = subprocess.run([sys.executable, "-m", "ddx", *args], input=input, capture_output=True,
                          timeout=120, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr.decode()


def test_cli_formats_stdin_and_stdout(tmp_path):
    code, out, err = ddx("batch", "--expr", "x*y", "--data", "-", "--format", "csv,jsonl",
                         input=b"x,y\n2,3\n")
    doc = json.loads(out)
    assert code == 0 and out.count(b"\n") == 1
    assert {k: doc[k] for k in ("value", "d_x", "d_y")} == {"value": 6.0, "d_x": 3.0, "d_y": 2.0}
    assert "batch: 1 rows, 0 bad" in err
    code, out, err = ddx("batch", "--expr", "x*y", "--data", "-", input=b"x,y\n2,3\n")
    assert code == 2 and "cannot tell the format of -: name it with --format" in err
    code, out, err = ddx("batch", "--expr", "x*y", "--data", "-", "--format", "parquet",
                         input=b"")
    assert code == 2 and "error: Parquet is read from a file, not standard input" in err
    (tmp_path / "d.csv").write_text("x,y\n2,3\n")
    code, out, err = ddx("batch", "--expr", "x*y", "--data", str(tmp_path / "d.csv"), "-o",
                         str(tmp_path / "o.parquet"))
    assert code == 0 and pq.read_table(tmp_path / "o.parquet").to_pydict() == \
        {"value": [6.0], "d_x": [3.0], "d_y": [2.0]}


def test_without_the_extra_the_plain_path_runs_and_parquet_says_what_to_install(tmp_path):
    block = "import sys; sys.modules['polars'] = None; sys.modules['pyarrow'] = None; " \
            "from ddx.app.cli import main; main()"
    (tmp_path / "d.csv").write_text("x,y\n2,3\n")
    proc = subprocess.run([sys.executable, "-c", block, "batch", "--expr", "x*y", "--data",
                           str(tmp_path / "d.csv")], capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"value,d_x,d_y\n6.0,3.0,2.0\n"
    write_parquet(tmp_path / "d.parquet", {"x": [2.0], "y": [3.0]})
    proc = subprocess.run([sys.executable, "-c", block, "batch", "--expr", "x*y", "--data",
                           str(tmp_path / "d.parquet"), "-o", str(tmp_path / "o.csv")],
                          capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines()[0] == \
        "error: reading Parquet needs Polars and PyArrow: pip install 'ddx[data]'"


def test_the_one_liner_imports_neither_polars_nor_arrow():
    probe = ("import sys\nfrom ddx.app.cli import main\ntry:\n    main()\nexcept SystemExit:\n"
             "    pass\nsys.stderr.write(repr(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('polars', 'pyarrow', 'dask', 'distributed'))))\n")
    proc = subprocess.run([sys.executable, "-c", probe, "x*y", "x=1", "y=2", "--json"],
                          capture_output=True, timeout=60)
    assert json.loads(proc.stdout)["value"] == 2.0
    assert proc.stderr.decode().strip() == "[]"


def test_a_data_job_raises_the_allocators_thresholds_before_it_reads(tmp_path, monkeypatch):
    """Every block of a data job allocates arrays past glibc's mmap threshold: the thresholds
    are raised (ddx/replay/allocator.py) before the first block is read, not at the first
    replay, so that the first blocks' memory is reused too."""
    from ddx.replay import allocator

    events: list[str] = []
    monkeypatch.setattr(allocator, "tune", lambda: events.append("tune") or True)
    opened = DataJob.open
    monkeypatch.setattr(DataJob, "open", lambda self: events.append("open") or opened(self))
    (tmp_path / "d.csv").write_text("w,x,b\n3,2,1\n1,1,1\n")
    data, reports, rows, bad = run_job(tmp_path / "d.csv", "(w*x+b)^2", plain=False)
    assert events == ["tune", "open"] and (rows, bad, reports) == (2, 0, [])
    assert data.decode().splitlines() == ["value,d_w,d_x,d_b", "49.0,28.0,42.0,14.0",
                                          "4.0,4.0,4.0,4.0"]
