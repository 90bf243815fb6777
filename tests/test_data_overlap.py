"""Data mode's speed paths (issue 20): the writer on its own thread (ddx/app/overlap.py) writes
every block in order and passes its errors on; Parquet to Parquet imports neither Polars nor
pandas; Arrow arrays made on numpy's buffers write the same bytes as pa.array's."""

from __future__ import annotations

import io
import subprocess
import sys
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ddx.app import colwrite
from ddx.app.csvio import Chunk
from ddx.app.datajob import DataJob
from ddx.app.overlap import WriteBehind


class Recorder:
    def __init__(self, fail_at: int | None = None) -> None:
        self.seen: list[int] = []
        self.threads: set[str] = set()
        self.closed = False
        self.fail_at = fail_at

    def write(self, block, columns) -> None:
        self.threads.add(threading.current_thread().name)
        if block == self.fail_at:
            raise OSError(28, "No space left on device")
        self.seen.append(block)

    def close(self) -> None:
        self.closed = True


def test_blocks_are_written_in_order_on_another_thread_then_closed():
    rec = Recorder()
    behind = WriteBehind(rec)
    for k in range(50):
        behind.write(k, [])
    behind.close()
    assert rec.seen == list(range(50)) and rec.closed
    assert rec.threads == {"ddx-write"}
    assert not behind.thread.is_alive()


def test_a_write_error_is_raised_on_the_jobs_thread_and_the_rest_is_not_written():
    rec = Recorder(fail_at=3)
    behind = WriteBehind(rec, depth=1)
    with pytest.raises(OSError, match="No space left"):
        for k in range(20):
            behind.write(k, [])
        behind.close()
    behind.drop()
    assert rec.seen == [0, 1, 2] and not rec.closed
    assert not behind.thread.is_alive()


def test_drop_lets_the_queued_blocks_go():
    gate = threading.Event()

    class Slow(Recorder):
        def write(self, block, columns) -> None:
            gate.wait(5)
            super().write(block, columns)

    rec = Slow()
    behind = WriteBehind(rec, depth=3)
    for k in range(3):
        behind.write(k, [])
    behind.drop()  # (the job failed while block 0 was being written)
    gate.set()
    behind.thread.join(5)
    assert not behind.thread.is_alive() and len(rec.seen) <= 1 and not rec.closed


def write_parquet(path, cols: dict) -> None:
    pq.write_table(pa.table(cols), path, row_group_size=64)


def test_parquet_results_with_bad_rows_are_the_bytes_pa_array_writes():
    rng = np.random.default_rng(1)
    n = 300
    bad = {5: "field 'w' is empty", 77: "field 'x' is empty", 299: "x"}
    cols = [rng.standard_normal(n) for _ in range(3)]
    ours = io.BytesIO()
    writer = colwrite.ParquetWriter(None, ours, ["value", "d_w", "d_x"], [])
    writer.write(Chunk(1, n, {}, bad), cols)
    writer.close()
    mask = np.zeros(n, dtype=bool)
    mask[list(bad)] = True
    theirs = io.BytesIO()
    table = pa.Table.from_arrays([pa.array(c, mask=mask) for c in cols],
                                 names=["value", "d_w", "d_x"])
    with pq.ParquetWriter(theirs, table.schema, use_dictionary=False, compression="none") as w:
        w.write_table(table)
    assert ours.getvalue() == theirs.getvalue()
    # (results are written uncompressed: Snappy saved nothing on them and cost a third of the
    # writing)
    meta = pq.ParquetFile(io.BytesIO(ours.getvalue())).metadata.row_group(0)
    assert {meta.column(k).compression for k in range(3)} == {"UNCOMPRESSED"}
    back = pq.read_table(io.BytesIO(ours.getvalue()))
    assert back.column("d_w").null_count == 3
    assert back.column("d_w").to_pylist()[:6] == cols[1][:5].tolist() + [None]


def test_parquet_to_parquet_imports_neither_polars_nor_pandas_and_matches_in_process(tmp_path):
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((1000, 3))
    rows[:, 2] = rng.integers(-5, 5, 1000)
    w = pa.array(rows[:, 0], mask=np.arange(1000) % 97 == 3)  # bad rows: nulls
    write_parquet(tmp_path / "d.parquet", {"w": w, "x": rows[:, 1],
                                           "b": rows[:, 2].astype(np.int64)})  # (ints: a cast)
    probe = ("import sys\nfrom ddx.app.cli import main\ntry:\n    main()\nexcept SystemExit:\n"
             "    pass\nsys.stderr.write(repr(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'polars', 'pandas'})))\n")
    proc = subprocess.run([sys.executable, "-c", probe, "batch", "--expr", "(w*x+b)^2",
                           "--data", str(tmp_path / "d.parquet"), "-o", str(tmp_path / "o.parquet")],
                          capture_output=True, timeout=120)
    err = proc.stderr.decode().strip().splitlines()
    assert err[-1] == "[]" and "row 4: field 'w' is empty" in "\n".join(err)
    # in-process, one block at a time and no thread: the same bytes
    job = DataJob("(w*x+b)^2", {}, str(tmp_path / "d.parquet"), str(tmp_path / "p.parquet"))
    source, names, kept = job.open()
    direct = io.BytesIO()
    writer = colwrite.ParquetWriter(None, direct, ["value"] + [f"d_{v}" for v in names], kept)
    for chunk in source.chunks():
        value, grads = job.run.compute(chunk)
        writer.write(chunk, [value] + [grads[v] for v in names])
    writer.close()
    assert (tmp_path / "o.parquet").read_bytes() == direct.getvalue()
    y = rows[:, 0] * rows[:, 1] + rows[:, 2]
    got = pq.read_table(tmp_path / "o.parquet").column("d_x").to_numpy(zero_copy_only=False)
    ok = np.arange(1000) % 97 != 3
    assert np.array_equal(got[ok], (2 * y * rows[:, 0])[ok]) and np.isnan(got[~ok]).all()


def test_data_mode_renames_its_output_without_fsync_and_other_outputs_sync(tmp_path, monkeypatch):
    """Syncing 775 MB took 0.28 s of a 3.2 s data job: data mode leaves it to the system (as
    Polars and DuckDB do); the other outputs still sync before their rename."""
    import os

    from ddx.app.datajob import data_mode
    from ddx.out.outfile import Output

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    (tmp_path / "d.csv").write_text("x,y\n2,3\n")
    said: list[str] = []
    code = data_mode("x*y", {}, str(tmp_path / "d.csv"), str(tmp_path / "o.csv"), fmt=None,
                     mapping=(), keep=False, say=said.append, start=0.0, now=lambda: 1.0)
    assert code == 0 and synced == []
    assert (tmp_path / "o.csv").read_bytes() == b"value,d_x,d_y\n6.0,3.0,2.0\n"
    assert said == ["batch: 1 rows, 0 bad, 1.00 s, 1 rows/s"]
    with Output(str(tmp_path / "p.txt"), option="-o") as out:
        out.write("hello\n")
    assert len(synced) == 1 and (tmp_path / "p.txt").read_text() == "hello\n"


def test_a_write_error_inside_polars_comes_back_as_ddx_s_own():
    """Polars writes each run's text through colwrite.Through; an error there is raised as it
    was, not as the bare OSError Polars makes of it."""
    import polars as pl

    from ddx.errors import DdxOutputError

    class Full:
        def write(self, data):
            raise DdxOutputError("cannot write out.csv: No space left on device")

    writer = colwrite.CsvWriter(pl, io.BytesIO(), ["value"], [])
    writer.out = writer.text.out = Full()
    with pytest.raises(DdxOutputError, match="No space left on device"):
        writer.write(Chunk(1, 3, {}, {}), [np.array([1.0, 2.0, 3.0])])
