"""Parquet files through pyarrow's reader and writer classes themselves (``pyarrow._parquet``,
which ``pyarrow.parquet`` wraps), so that a data job imports neither ``pyarrow.parquet`` nor the
file systems it brings (``pyarrow.fs``: with ssl, urllib and S3's library, about 18 ms of CPU
before the first row of a job that reads and writes local files only). When those classes are
not what this module expects (another pyarrow), ``pyarrow.parquet`` does the same work.

Also left out of pyarrow's start: cloudpickle, which pyarrow imports when it is installed (a
Dask install brings it) and a data job never uses (9 ms with the logging module it imports)."""

from __future__ import annotations

import sys

from ..errors import DdxUsageError


def arrow():
    """pyarrow, for Parquet only (CSV and JSON Lines do without its import)."""
    try:
        if "pyarrow" not in sys.modules and "cloudpickle" not in sys.modules:
            # (pyarrow 26's lib takes "pickle" from cloudpickle, then from the standard
            # library's pickle again, which it uses; later imports of cloudpickle still work)
            sys.modules["cloudpickle"] = None
            try:
                import pyarrow
            finally:
                if "cloudpickle" in sys.modules and sys.modules["cloudpickle"] is None:
                    del sys.modules["cloudpickle"]
        import pyarrow
        import pyarrow._parquet  # noqa: F401
    except ImportError:
        raise DdxUsageError("Parquet needs PyArrow: pip install 'ddx[data]'") from None
    return pyarrow


class ParquetReader:
    """A local Parquet file: its Arrow schema, and record batches of some of its columns."""

    def __init__(self, path: str, *, buffer_size: int) -> None:
        arrow()
        import pyarrow._parquet as pqc

        try:
            reader = pqc.ParquetReader()
            reader.open(path, buffer_size=buffer_size, pre_buffer=False)
            self.schema = reader.schema_arrow
            self.groups = list(range(reader.num_row_groups))
            self.index = reader.column_name_idx
            self.reader, self.file = reader, None
        except (AttributeError, TypeError):  # (not the classes this module knows)
            import pyarrow.parquet as pq

            self.file = pq.ParquetFile(path, pre_buffer=False, buffer_size=buffer_size)
            self.schema = self.file.schema_arrow

    def batches(self, batch_size: int, columns: list[str]):
        if self.file is not None:
            return self.file.iter_batches(batch_size=batch_size, columns=columns)
        return self.reader.iter_batches(batch_size, self.groups,
                                        column_indices=[self.index(c) for c in columns])


def parquet_writer(sink, schema, **options):
    """A Parquet writer on ``sink`` (a file-like object), set as ``pyarrow.parquet.ParquetWriter``
    sets its own defaults: format 2.6, page format 1.0, statistics, the schema stored."""
    arrow()
    import pyarrow._parquet as pqc

    try:
        return pqc.ParquetWriter(sink, schema, version="2.6", write_statistics=True,
                                 writer_engine_version="V2", data_page_version="1.0",
                                 store_schema=True, **options)
    except (AttributeError, TypeError):  # (not the class this module knows)
        import pyarrow.parquet as pq

        return pq.ParquetWriter(sink, schema, **options)
