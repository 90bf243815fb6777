"""The op table's linalg rows (one op(...) call per op; see ddx/ops/table.py for a row's fields)."""

from __future__ import annotations
