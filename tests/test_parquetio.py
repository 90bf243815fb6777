"""Parquet through pyarrow's own reader and writer classes (ddx/app/parquetio.py): the same file
as pyarrow.parquet writes, the same batches read, without importing pyarrow.parquet, its file
systems or cloudpickle; and pyarrow.parquet when those classes are not the expected ones."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from ddx.app import parquetio  # noqa: E402


def table(n: int = 1000):
    g = np.random.default_rng(5)
    return pa.table({"a": g.standard_normal(n), "b": np.arange(n), "c": [f"r{i}" for i in range(n)]})


def written(make, data, **options) -> bytes:
    buf = io.BytesIO()
    writer = make(buf, data.schema, **options)
    writer.write_table(data)
    writer.close()
    return buf.getvalue()


@pytest.mark.parametrize("options", [
    {},  # Arrow's defaults: dictionaries, Snappy
    {"use_dictionary": False, "compression": "none"},  # a data job's results
    {"use_dictionary": ["c"], "compression": {"a": "none", "b": "snappy", "c": "snappy"}},
])
def test_the_writer_writes_the_bytes_pyarrow_parquet_writes(options):
    data = table()
    ours = written(parquetio.parquet_writer, data,
                   **({"use_dictionary": True, "compression": "snappy"} | options))
    theirs = written(pq.ParquetWriter, data, **options)
    assert ours == theirs
    assert pq.read_table(io.BytesIO(ours)).equals(data)


def test_the_reader_reads_the_schema_and_batches_pyarrow_parquet_reads(tmp_path):
    data = table(5000)
    pq.write_table(data, tmp_path / "t.parquet", row_group_size=1500)
    reader = parquetio.ParquetReader(str(tmp_path / "t.parquet"), buffer_size=1 << 10)
    assert reader.schema.equals(pq.read_schema(tmp_path / "t.parquet"))
    ours = list(reader.batches(700, ["c", "a"]))
    theirs = list(pq.ParquetFile(tmp_path / "t.parquet").iter_batches(batch_size=700,
                                                                      columns=["c", "a"]))
    assert [b.num_rows for b in ours] == [b.num_rows for b in theirs]
    assert all(a.equals(b) for a, b in zip(ours, theirs))
    assert ours[0].schema.names == ["c", "a"]


def test_other_classes_fall_back_to_pyarrow_parquet(tmp_path, monkeypatch):
    import pyarrow._parquet as pqc

    data = table()
    expected = written(parquetio.parquet_writer, data, use_dictionary=False, compression="none")
    pq.write_table(data, tmp_path / "t.parquet")

    real, calls = pqc.ParquetWriter, []

    def refuse_once(*args, **kwargs):  # (pyarrow.parquet's own writer calls it too: then real)
        calls.append(kwargs)
        if len(calls) == 1:
            raise TypeError("an unexpected keyword argument")
        return real(*args, **kwargs)

    def refuse(*args, **kwargs):
        raise TypeError("an unexpected keyword argument")

    monkeypatch.setattr(pqc, "ParquetWriter", refuse_once)
    monkeypatch.setattr(pqc, "ParquetReader", refuse)
    assert written(parquetio.parquet_writer, data, use_dictionary=False,
                   compression="none") == expected
    assert len(calls) == 2
    reader = parquetio.ParquetReader(str(tmp_path / "t.parquet"), buffer_size=0)
    assert reader.file is not None  # (pyarrow.parquet's ParquetFile)
    assert pa.Table.from_batches(list(reader.batches(300, ["a", "b", "c"]))).equals(data)


def test_a_parquet_job_imports_neither_pyarrow_parquet_nor_its_file_systems(tmp_path):
    pq.write_table(pa.table({"x": [1.0, 2.0], "y": [3.0, 4.0]}), tmp_path / "d.parquet")
    probe = ("import sys\nsys.argv = ['ddx', 'batch', '--expr', 'x*y', '--data', 'd.parquet',\n"
             "            '-o', 'o.parquet']\nfrom ddx.app.cli_lean import main\ntry:\n"
             "    main()\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write(repr(sorted(m for m in ('pyarrow.parquet', 'pyarrow.fs', 'ssl',\n"
             "    'cloudpickle') if m in sys.modules)))\nimport cloudpickle\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().splitlines()[-1] == "[]"  # (and cloudpickle imports after)
    assert pq.read_table(tmp_path / "o.parquet").to_pydict() == \
        {"value": [3.0, 8.0], "d_x": [3.0, 4.0], "d_y": [1.0, 2.0]}
