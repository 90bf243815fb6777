"""ddx batch --dask: the data job on a Dask cluster (the ``dask`` extra). Dask reads the partitions
(CSV blocks split at line ends by ``dask.bytes.read_bytes``, Parquet by
``dask.dataframe.read_parquet``; local paths or any URL fsspec knows); each worker runs the same
reader, compiled replay and writer as one machine does (ddx/app/columnar.py, colwrite.py), the
program compiled once per worker process, and writes one part of the output folder
(``part-00000.csv`` ...). Bad rows are reported with their row number in the whole input.

A row is one job in ddx's data mode: ``sum(x)`` is the sum of that row's x, on one machine and
on a cluster alike, so no expression mixes rows and the parts are the single-machine output cut
in pieces (a test compares them byte for byte)."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable

from ..errors import DdxOutputError, DdxUsageError

PART_BYTES = 64 << 20  # bytes of CSV per partition
_RUNS: dict = {}  # (expr, bindings) -> DataRun, per worker process: compiled once
COMPILED = [0]  # DataRuns made in this process (the test reads it on each worker)


def dask_modules():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise DdxUsageError("--dask needs Dask: pip install 'ddx[dask]'") from None
    return distributed


def _run_for(spec: tuple):
    from .data import DataRun

    run = _RUNS.get(spec)
    if run is None:
        expr, bindings = spec
        run = _RUNS[spec] = DataRun(expr, dict(bindings))
        COMPILED[0] += 1
    return run


def _open_part(path: str):
    if "://" in path:
        import fsspec

        return fsspec.open(path, "wb").open()
    return open(path, "wb")


def _compute_part(source, spec: tuple, names: list[str], kept: list[str], path: str,
                  fmt: str) -> tuple[int, list, dict]:
    """Run one partition's chunks and write its part: (rows, [(index, why)], warnings)."""
    import numpy as np

    from .columnar import polars
    from .colwrite import WRITERS

    run = _run_for(spec)
    rows, bad = 0, []
    with _open_part(path) as out:
        writer = WRITERS[fmt](polars(), out, ["value"] + [f"d_{n}" for n in names], kept)
        for chunk in source:
            with np.errstate(all="ignore"):
                value, grads = run.compute(chunk)
            writer.write(chunk, [value] + [grads[n] for n in names])
            bad += [(rows + i, why) for i, why in sorted(chunk.bad.items())]
            rows += chunk.n
        writer.close()
    warnings = dict(run.warnings)
    run.warnings.clear()
    return rows, bad, warnings


def csv_part(block: bytes, first_of_file: bool, spec: tuple, header: list[str],
             wanted: dict[str, str], kept: list[str], path: str, fmt: str):
    """A worker's task: one block of a CSV (the file's first block starts with its header)."""
    os.environ.setdefault("POLARS_MAX_THREADS", "1")  # (one thread per Dask worker thread)
    from .columnar import CsvSource

    if first_of_file:
        block = block.split(b"\n", 1)[1] if b"\n" in block else b""
    source = CsvSource(io.BytesIO(block), header, wanted, kept)
    return _compute_part(source.chunks(), spec, list(wanted.values()), kept, path, fmt)


def parquet_part(frame, spec: tuple, wanted: dict[str, str], kept: list[str], path: str,
                 fmt: str):
    """A worker's task: one partition of a Parquet dataset (a pandas frame of Arrow columns)."""
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    import pyarrow as pa

    from .columnar import arrow_block, polars

    table = pa.Table.from_pandas(frame, preserve_index=False)
    blocks = [arrow_block(polars(), table, 1, wanted, kept)] if table.num_rows else []
    return _compute_part(blocks, spec, list(wanted.values()), kept, path, fmt)


def client_for(address: str | None):
    """A Client of the scheduler at ``address``, or of a new LocalCluster of this machine."""
    distributed = dask_modules()
    import logging

    if address:
        try:
            return distributed.Client(address, timeout=30), None
        except (OSError, TimeoutError) as exc:
            raise DdxUsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    workers = int(os.environ.get("DDX_DASK_WORKERS") or os.cpu_count() or 1)
    saved = dict(os.environ)
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    # distributed writes its workers' settings (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1, ...)
    # into this process's environment for good: the user's come back once they are spawned
    os.environ.clear()
    os.environ.update(saved)
    return distributed.Client(cluster), cluster


def prepare_folder(folder: str | None) -> tuple[str, str]:
    """(where the parts are written, where they end up): a new folder beside the target,
    renamed over it when every part is written (a URL is written in place)."""
    if not folder or folder == "-":
        raise DdxUsageError("--dask writes a folder of parts: name it with -o FOLDER")
    if "://" in folder:
        return folder, folder
    if os.path.exists(folder) and (not os.path.isdir(folder) or os.listdir(folder)):
        raise DdxOutputError(f"cannot write {folder}: it exists and is not an empty folder")
    parent = os.path.dirname(os.path.abspath(folder))
    if not os.path.isdir(parent):
        raise DdxOutputError(f"cannot write {folder}: the folder {parent} does not exist")
    import tempfile

    return tempfile.mkdtemp(prefix=f".{os.path.basename(folder)}.", dir=parent), folder


def run_dask(job, address: str | None, folder: str | None, say: Callable[[str], None],
             progress: Callable[[int], None] | None = None) -> tuple[int, int, dict]:
    """Run ``job`` (a DataJob) on Dask; (rows, bad rows, warnings)."""
    if job.fmt_in not in ("csv", "parquet") or job.fmt_out not in ("csv", "parquet"):
        raise DdxUsageError("--dask reads and writes CSV or Parquet",
                            hint="--format csv or parquet (IN,OUT)")
    distributed = dask_modules()
    work, final = prepare_folder(folder)
    spec = (job.run.expr, tuple(sorted(job.run.bindings.items())))
    tasks = _tasks(job, spec, work)
    client, cluster = client_for(address)
    try:
        futures = client.compute(tasks)
        for done in distributed.as_completed(futures):
            if progress is not None:
                progress(done.result()[0])
        results = client.gather(futures)
    except Exception:
        if work != final:
            shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    rows, bad, warnings = 0, 0, {}
    for n, part_bad, part_warnings in results:
        for i, why in part_bad:
            say(f"error: row {rows + i + 1}: {why}")
        rows += n
        bad += len(part_bad)
        for w, c in part_warnings.items():
            warnings[w] = warnings.get(w, 0) + c
    if work != final:
        if os.path.isdir(final):
            os.rmdir(final)  # (checked empty above)
        os.replace(work, final)
    return rows, bad, warnings


def _tasks(job, spec: tuple, work: str) -> list:
    from dask import delayed

    ext = job.fmt_out
    if job.fmt_in == "parquet":
        import dask.dataframe as dd

        from .columnar import ParquetSource

        header, types = ParquetSource.header(job.data) if "://" not in job.data else (None, None)
        frame = dd.read_parquet(job.data, dtype_backend="pyarrow", split_row_groups="infer",
                                blocksize=PART_BYTES)
        header = list(frame.columns)
        wanted = job.bind(header)
        if types is not None:
            ParquetSource.check_types(types, wanted)
        kept = job.kept(header)
        cols = list(dict.fromkeys(list(wanted) + kept))
        parts = frame[cols].to_delayed()
        return [delayed(parquet_part)(p, spec, wanted, kept, f"{work}/part-{k:05d}.{ext}", ext)
                for k, p in enumerate(parts)]
    from dask.bytes import read_bytes

    from . import csvio

    sample, files = read_bytes(job.data, delimiter=b"\n", blocksize=PART_BYTES, sample=1 << 20)
    line = sample.split(b"\n", 1)[0]
    header = csvio.csv_header(io.StringIO(line.decode("utf-8", "surrogateescape")))
    if not header:
        raise DdxUsageError("the CSV is empty (no header line)")
    wanted = job.bind(header)
    kept = job.kept(header)
    tasks, k = [], 0
    for blocks in files:
        for j, block in enumerate(blocks):
            tasks.append(delayed(csv_part)(block, j == 0, spec, header, wanted, kept,
                                           f"{work}/part-{k:05d}.{ext}", ext))
            k += 1
    return tasks
