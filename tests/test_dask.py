"""ddx batch --dask on a LocalCluster of two worker processes: the parts are the single-machine
output byte for byte, bad rows carry their row number in the whole input, and each worker
compiles the program once."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys

import distributed  # (the dask extra: CI installs it)
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ddx.app import dask_job
from ddx.app.datajob import DataJob


@pytest.fixture(scope="module")
def cluster():
    # (distributed sets OMP_NUM_THREADS=1, MKL_NUM_THREADS=1, ... in this process for good:
    # later tests' PyTorch subprocesses ran on one thread and printed other float32 digits)
    saved = dict(os.environ)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as c:
            yield c
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_local_cluster_leaves_the_callers_environment_as_it_was(tmp_path):
    from ddx.app import dask_job

    before = dict(os.environ)
    client, local = dask_job.client_for(None)
    try:
        assert dict(os.environ) == before  # distributed had set OMP_NUM_THREADS=1 & co here
    finally:
        client.close()
        local.close()


def single(path, expr: str, fmt=None, output=None):
    job = DataJob(expr, {}, str(path), output, fmt=fmt)
    reports: list[str] = []
    out = io.BytesIO()
    run = job.execute(out, reports.append)
    return out.getvalue(), reports, run.rows, run.bad_rows


def on_dask(cluster, path, expr: str, folder, fmt=None):
    job = DataJob(expr, {}, str(path), str(folder), fmt=fmt, parts=True)
    said: list[str] = []
    rows, bad, _ = dask_job.run_dask(job, cluster.scheduler_address, str(folder), said.append)
    return said, rows, bad


def joined_csv(folder) -> bytes:
    parts = sorted(os.listdir(folder))
    texts = [open(os.path.join(folder, p), "rb").read() for p in parts]
    return texts[0] + b"".join(t.split(b"\n", 1)[1] for t in texts[1:])


def test_csv_parts_are_the_single_machine_output(cluster, tmp_path, monkeypatch):
    monkeypatch.setattr(dask_job, "PART_BYTES", 16 << 10)
    rng = np.random.default_rng(11)
    rows = rng.standard_normal((3000, 3))
    lines = ["w,x,b"] + [",".join(map(repr, r)) for r in rows.tolist()]
    for i, bad in ((7, "1,2"), (1500, "1,x,3"), (2999, "")):
        lines[i] = bad
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    expect, reports, nrows, nbad = single(tmp_path / "d.csv", "(w*x+b)^2")
    said, got_rows, got_bad = on_dask(cluster, tmp_path / "d.csv", "(w*x+b)^2", tmp_path / "out")
    assert len(os.listdir(tmp_path / "out")) > 4  # several partitions, on both workers
    assert joined_csv(tmp_path / "out") == expect
    assert (got_rows, got_bad) == (nrows, nbad) == (3000, 3)
    assert said == [f"error: {r}" for r in reports]
    assert [s.split(":")[1] for s in said] == [" row 7", " row 1500", " row 2999"]
    # each worker made the program once, however many partitions it ran
    compiled = cluster_run(cluster, lambda: dask_job.COMPILED[0])
    assert set(compiled) <= {1} and len(compiled) == 2


def cluster_run(cluster, fn) -> list:
    with distributed.Client(cluster) as client:
        return list(client.run(fn).values())


def test_parquet_parts_and_a_per_row_reduction(cluster, tmp_path, monkeypatch):
    monkeypatch.setattr(dask_job, "PART_BYTES", 16 << 10)
    rng = np.random.default_rng(12)
    rows = rng.standard_normal((5000, 2))
    x = pa.array(rows[:, 0], mask=np.arange(5000) == 4321)
    pq.write_table(pa.table({"x": x, "y": rows[:, 1]}), tmp_path / "d.parquet",
                   row_group_size=700)
    expr = "sum([x, y]^2) * sin(x)"  # a reduction within each row: the same on both paths
    job = DataJob(expr, {}, str(tmp_path / "d.parquet"), str(tmp_path / "one.parquet"))
    with open(tmp_path / "one.parquet", "wb") as fh:
        job.execute(fh, lambda m: None)
    said, nrows, nbad = on_dask(cluster, tmp_path / "d.parquet", expr, tmp_path / "parts.parquet")
    assert (nrows, nbad) == (5000, 1) and said == ["error: row 4322: field 'x' is empty"]
    parts = sorted(os.listdir(tmp_path / "parts.parquet"))
    assert len(parts) > 1
    got = pa.concat_tables([pq.read_table(tmp_path / "parts.parquet" / p) for p in parts])
    want = pq.read_table(tmp_path / "one.parquet")
    assert got.equals(want)
    v = want.column("value").to_numpy(zero_copy_only=False)
    ok = np.arange(5000) != 4321
    assert np.allclose(v[ok], ((rows[:, 0] ** 2 + rows[:, 1] ** 2) * np.sin(rows[:, 0]))[ok],
                       rtol=1e-14, atol=0)


def test_cli_dask_address_and_messages(cluster, tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n2,3\n4,5\n")
    run = [sys.executable, "-m", "ddx", "batch", "--expr", "x*y", "--data", str(tmp_path / "d.csv")]
    proc = subprocess.run(run + ["--dask", cluster.scheduler_address, "-o", str(tmp_path / "o")],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "part-00000.csv").read_bytes() == b"value,d_x,d_y\n6.0,3.0,2.0\n" \
        b"20.0,5.0,4.0\n"
    assert "batch: 2 rows, 0 bad" in proc.stderr.decode()
    proc = subprocess.run(run + ["--dask", cluster.scheduler_address, "-o", str(tmp_path / "o")],
                          capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith(f"error: cannot write {tmp_path / 'o'}: it exists and "
                                           "is not an empty folder")
    proc = subprocess.run(run + ["--dask", cluster.scheduler_address], capture_output=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "error: --dask writes a folder of parts: name it with -o FOLDER" in proc.stderr.decode()
