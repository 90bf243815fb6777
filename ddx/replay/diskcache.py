"""Compiled templates on disk, so that a long text is parsed once, not once per process.

A text of at least MIN_CHARS characters that ddx/replay/lean.py compiles is written to
``$XDG_CACHE_HOME/ddx/templates/`` (``~/.cache/ddx/templates/`` without it), one file per key:
the text, the binding names and shapes, the dtype (the only option a compiled template
takes: it is made only without wrt, no_grad and retain_grad) and ddx itself: its version and
the size and time of every source file a template depends on, so an edited ddx never reads
an old layout. The next process reads the file instead of parsing: the same columns go
through the same ``from_columns`` as a fresh compile (tests compare the two field by field).

The file is data only, in a layout this module reads itself: a JSON header and numpy's raw
integer and float columns (no pickle, marshal or code), behind a SHA-256 of all of it. A
file that is unreadable, truncated, altered, from another key or layout, or that names an
op this ddx lacks is ignored (and rewritten on the next compile). Writers write a file of
their own and rename it into place, so two processes writing at once leave one whole file.
The directory is kept under MAX_BYTES by removing the least recently used files.
``DDX_TEMPLATE_CACHE=0`` turns it off; ``DDX_TEMPLATE_CACHE=/some/dir`` puts it there."""

from __future__ import annotations

import json
import os
from operator import itemgetter

import numpy as np

MIN_CHARS = 2048  # shorter texts parse in less time than a file takes to open and check
MAX_BYTES = 256 << 20  # the directory's bound; pruned to three quarters of it when over
MAGIC = b"ddx-template-1\n"
_NONE = -(1 << 31)  # an absent second input or label end in an integer column
_SOURCES = ("ops", "lang", "replay", "graph")  # the packages a template's layout comes from


def directory() -> str | None:
    """Where templates are kept, or None when the cache is off."""
    setting = os.environ.get("DDX_TEMPLATE_CACHE", "").strip()
    if setting.lower() in ("0", "off", "no", "false"):
        return None
    if setting and setting.lower() not in ("1", "on", "yes", "true"):
        return setting
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ddx", "templates")


_STAMP: list[str] = []


def code_stamp() -> str:
    """ddx's version and a digest of its template-making source files' contents (not their
    times: an installed copy and the source tree it came from must agree)."""
    if not _STAMP:
        import hashlib

        from .. import __version__

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        parts = [__version__]
        for package in _SOURCES:
            folder = os.path.join(root, package)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                entries = []
            for e in entries:
                if e.name.endswith(".py"):
                    try:
                        with open(e.path, "rb") as fh:
                            digest = hashlib.sha256(fh.read()).hexdigest()
                    except OSError:
                        digest = "unreadable"
                    parts.append(f"{package}/{e.name}:{digest}")
        _STAMP.append(hashlib.sha256("\n".join(parts).encode()).hexdigest())
    return _STAMP[0]


def _key(source: str, names: list[str], shapes: list[tuple]) -> tuple[str, str]:
    """(file name, the key text written inside the file) for a compile's inputs."""
    import hashlib

    text = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    key = json.dumps([code_stamp(), text, len(source), names, [list(s) for s in shapes],
                      "float64"])
    return hashlib.sha256(key.encode()).hexdigest()[:40] + ".ddxt", key


def _column(values: list, header: dict, name: str, parts: list[bytes]) -> None:
    arr = np.asarray(values, dtype=np.int64)
    if arr.size and -(1 << 31) <= int(arr.min()) and int(arr.max()) < (1 << 31):
        arr = arr.astype(np.int32)
    header["columns"].append([name, arr.dtype.str, int(arr.size)])
    parts.append(_padded(arr.tobytes()))


def _padded(raw: bytes) -> bytes:
    """``raw`` padded to whole 8-byte words: every column starts aligned (numpy reads an
    unaligned column element by element, some 50 times slower)."""
    return raw + bytes(-len(raw) % 8)


def save(source: str, names: list[str], shapes: list[tuple], lb, template) -> None:
    """Write the finished LeanBuilder ``lb``'s template for these inputs, and the template's
    Plan (ddx/replay/plan.py), so that its first replay is a planned one (errors: nothing)."""
    folder = directory()
    if folder is None:
        return
    try:
        from .plan import Plan

        plan = template.plan if template.plan.__class__ is Plan else Plan(template)
        fname, key = _key(source, names, shapes)
        rows = lb.rows
        op_names: dict[str, int] = {}
        ops = [op_names.setdefault(r[0].name, len(op_names)) for r in rows]
        kws = {str(i): r[3] for i, r in enumerate(rows) if r[3]}
        labels = {str(i): r[6] for i, r in enumerate(rows) if r[7] is None}
        distinct: dict[tuple, int] = {}
        shape_ids = [distinct.setdefault(tuple(s), len(distinct)) for s in lb.shape_of]
        numbers = lb.numbers
        if not all(type(v) is float or (type(v) is int and abs(v) < (1 << 62)) for v in numbers):
            return  # (a number of 20 digits and more: rare, and not worth a layout of its own)
        header = {"key": key, "names": names, "k": lb.k, "ops": list(op_names), "kws": kws,
                  "labels": labels, "shapes": [list(s) for s in distinct],
                  "named": {str(i): v for i, v in lb.named.items()},
                  "grads_at": [[n, i] for n, i in lb.env.items() if i < lb.k],
                  "result": lb.result, "out_name": lb.out_name, "stmts": lb.stmts,
                  "assigned": lb.assigned, "columns": []}
        parts: list[bytes] = []
        _column(ops, header, "op", parts)
        _column([r[4] for r in rows], header, "a", parts)
        _column([_NONE if r[5] is None else r[5] for r in rows], header, "b", parts)
        _column([0 if r[7] is None else r[6] for r in rows], header, "start", parts)
        _column([_NONE if r[7] is None else r[7] for r in rows], header, "end", parts)
        _column(shape_ids, header, "shape", parts)
        ints = [k for k, v in enumerate(numbers) if type(v) is int]
        _column(ints, header, "int_at", parts)
        _column([numbers[k] for k in ints], header, "ints", parts)
        _column(plan.fform, header, "fform", parts)
        for name in ("bi", "bform", "bj", "bfirst", "bslot"):
            _column(getattr(plan, name), header, name, parts)
        floats = np.asarray([float(v) if type(v) is float else 0.0 for v in numbers], np.float64)
        header["columns"].append(["floats", floats.dtype.str, int(floats.size)])
        parts.append(floats.tobytes())
        head = json.dumps(header).encode()
        head += b" " * (-(len(MAGIC) + 32 + 8 + len(head)) % 8)  # (the columns: aligned)
        body = len(head).to_bytes(8, "little") + head + b"".join(parts)
        import hashlib

        data = MAGIC + hashlib.sha256(body).digest() + body
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, fname)
        tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)  # (atomic: a reader sees the old file or the new, whole)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        prune(folder)
    except (OSError, ValueError, TypeError, OverflowError):
        pass  # a read-only or full disk: the cache is only a cache


def prune(folder: str, limit: int | None = None) -> None:
    """Remove the least recently used files until the folder holds at most three quarters
    of ``limit`` (MAX_BYTES) bytes, once it holds more; and writers' leftovers over an hour old."""
    limit = MAX_BYTES if limit is None else limit
    import time

    files = []
    total = 0
    now = time.time()
    for e in os.scandir(folder):
        try:
            st = e.stat()
        except OSError:
            continue
        if e.name.endswith(".tmp"):
            if now - st.st_mtime > 3600:
                _remove(e.path)
            continue
        if e.name.endswith(".ddxt"):
            files.append((st.st_mtime, st.st_size, e.path))
            total += st.st_size
    if total <= limit:
        return
    files.sort()
    for _, size, path in files:
        if total <= limit * 3 // 4:
            break
        _remove(path)
        total -= size


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _picker(ids: list[int]):
    """A function of a list giving the tuple of its items at ``ids``."""
    if len(ids) == 1:
        return lambda seq: (seq[ids[0]],)
    return itemgetter(*ids)


class _Spans:
    """The labels' starts or ends, made Python's ints only when the JSON asks for the labels
    (a label that is no span of the text, ``1/x`` for 2/x: the text as start, None as end)."""

    __slots__ = ("column", "labels", "end")

    def __init__(self, column: np.ndarray, labels: dict, *, end: bool = False) -> None:
        self.column, self.labels, self.end = column, labels, end

    def __iter__(self):
        found = self.column.tolist()
        for i, label in self.labels.items():
            found[i] = None if self.end else label
        return iter(found)


class _Saved:
    """What from_columns reads of a LeanBuilder, as a file gives it back."""

    __slots__ = ("names", "k", "shape_of", "source", "numbers", "named", "env", "out_name",
                 "stmts", "assigned")


def load(source: str, names: list[str], shapes: list[tuple]):
    """The template kept for these inputs, or None (no file, or one to ignore)."""
    folder = directory()
    if folder is None:
        return None
    try:
        fname, key = _key(source, names, shapes)
        path = os.path.join(folder, fname)
        with open(path, "rb") as fh:
            data = fh.read()
        return _decode(data, key, source, names, shapes, path)
    except Exception:  # noqa: BLE001 - whatever is wrong with the file, it is not used
        return None


def _decode(data: bytes, key: str, source: str, names: list[str], shapes: list[tuple],
            path: str):
    import hashlib

    from ..ops import OPS
    from .lean_template import from_columns

    start = len(MAGIC)
    if data[:start] != MAGIC or hashlib.sha256(data[start + 32:]).digest() != \
            data[start:start + 32]:
        return None
    body = memoryview(data)[start + 32:]
    size = int.from_bytes(body[:8], "little")
    header = json.loads(bytes(body[8:8 + size]))
    if header["key"] != key or header["names"] != names or header["k"] != len(names):
        return None
    cols = {}
    at = 8 + size
    for name, dtype, count in header["columns"]:
        if dtype not in ("<i4", "<i8", "<f8"):
            return None
        arr = np.frombuffer(body, dtype=dtype, count=count, offset=at)
        at += arr.nbytes + (-arr.nbytes % 8)
        cols[name] = arr if arr.flags.aligned else arr.copy()
    if at != len(body):
        return None
    k = len(names)
    m = cols["op"].size
    a, b, ends = cols["a"], cols["b"], cols["end"]
    rows = np.arange(k, k + m)
    numbers_n = cols["floats"].size
    if not (cols["b"].size == cols["a"].size == cols["start"].size == ends.size == m
            and cols["shape"].size == k + m and cols["ints"].size == cols["int_at"].size
            and ((cols["int_at"] >= 0) & (cols["int_at"] < numbers_n)).all() and m
            and ((a >= 0) & (a < rows)).all()
            and ((b == _NONE) | ((b >= -numbers_n) & (b < rows))).all()
            and ((cols["op"] >= 0) & (cols["op"] < len(header["ops"]))).all()
            and ((cols["shape"] >= 0) & (cols["shape"] < len(header["shapes"]))).all()):
        return None
    table_of = [OPS[name] for name in header["ops"]]  # (an op this ddx lacks: KeyError)
    pick = _picker(cols["op"].tolist())  # (C loops: a 10^5-op text in milliseconds)
    table = pick(table_of)
    kw_col = [None] * m
    kws = {int(i): dict(kw) for i, kw in header["kws"].items()}
    for i, kw in kws.items():
        kw_col[i] = kw
    b_col = b.tolist()
    if (b == _NONE).any():
        b_col = [None if v == _NONE else v for v in b_col]
    labels = {int(i): str(label) for i, label in header["labels"].items()}
    starts, end_col = _Spans(cols["start"], labels), _Spans(ends, labels, end=True)
    distinct = [tuple(int(d) for d in s) for s in header["shapes"]]
    shape_of = [distinct[0]] * (k + m) if len(distinct) == 1 else \
        list(_picker(cols["shape"].tolist())(distinct))
    if [tuple(s) for s in shapes] != shape_of[:k]:
        return None
    floats, ints = cols["floats"].tolist(), cols["ints"].tolist()
    lb = _Saved()
    lb.names, lb.k, lb.shape_of, lb.source = list(names), k, shape_of, source
    lb.numbers = floats
    for i, v in zip(cols["int_at"].tolist(), ints):
        floats[i] = v
    lb.named = {int(i): v for i, v in header["named"].items()}
    lb.env = {n: i for n, i in header["grads_at"]}
    lb.out_name, lb.stmts, lb.assigned = header["out_name"], header["stmts"], \
        header["assigned"]
    out = header["result"]
    if not (type(out) is int and k <= out < k + m and _words(header, lb, names, kws, table)
            and _labels_fit(source, labels)):
        return None
    columns = (table, pick([op.fn for op in table_of]), pick([op.vjp for op in table_of]),
               tuple(kw_col), tuple(a.tolist()), tuple(b_col), starts, end_col)
    template = from_columns(lb, out, columns, pick_slots=(b >= 0).astype(np.int32).tolist())
    plan = _plan(template, cols, k, a, b, kws, table_of)
    if plan is None:
        return None
    from .plan import Plan

    if Plan.fits(template):  # (large arrays replay by BufferReuse's path, not a Plan)
        template.plan = plan
    try:
        os.utime(path)  # (recently used: pruned last)
    except OSError:
        pass
    return template


def _words(header: dict, lb, names: list[str], kws: dict, table: tuple) -> bool:
    """Whether the header's names and keywords are ones a compile could have written: what
    reaches the JSON or a call must be no more than that, whatever a file says."""
    from ..lang.lowering import BINARY

    k, m = lb.k, len(table)
    keys = {plan.op: plan.key for plan in BINARY.values() if plan.key is not None}
    return (all(type(i) is int and 0 <= i < k and names[i] == n for n, i in lb.env.items())
            and all(k <= i < k + m and type(v) is str and v.isidentifier()
                    for i, v in lb.named.items())
            and type(lb.out_name) is str and lb.out_name.isidentifier()
            and type(lb.stmts) is int and lb.stmts > 0 and type(lb.assigned) is bool
            and all(0 <= r < m and list(kw) == [keys.get(table[r].name)]
                    and type(next(iter(kw.values()))) in (int, float) for r, kw in kws.items()))


def _labels_fit(source: str, labels: dict) -> bool:
    """A label that is no span of the text is 2/x's ``1/x``: plain text if the source is."""
    from .jsonfmt import PLAIN_TEXT

    plain = PLAIN_TEXT(source)
    return all(v.startswith("1/") and (not plain or PLAIN_TEXT(v)) for v in labels.values())


def _plan(template, cols: dict, k: int, a: np.ndarray, b: np.ndarray, kws: dict,
          table_of: list):
    """The saved Plan of ``template`` if it routes every gradient along the template's own
    edges (else None: the file is not used)."""
    from .plan import ONE, SAME, TWO, Plan

    fform, bi, bj, bslot = cols["fform"], cols["bi"], cols["bj"], cols["bslot"]
    bform, bfirst = cols["bform"], cols["bfirst"]
    e, m = bi.size, a.size
    if not (fform.size == m and bj.size == bform.size == bfirst.size == bslot.size == e
            and ((bi >= k) & (bi < k + m)).all() and ((bslot == 0) | (bslot == 1)).all()):
        return None
    rows = bi - k
    target = np.where(bslot == 0, a[rows], b[rows])  # the input each gradient goes to
    two = np.where(b == _NONE, ONE, TWO)
    same = fform == SAME
    if not ((target == bj).all() and ((fform == two) | same).all()
            and (bform == fform[rows]).all() and (~same | (b == _NONE)).all()):
        return None
    if same.any() and not (template.scalar and all(
            template.op[k + r].name == "sum" for r in np.flatnonzero(same).tolist())):
        return None
    if e == 0 or ((bslot == 1) & (b[rows] == _NONE)).any():
        return None
    # each gradient's VJP: the op table's, by (op, slot), picked in one C loop
    vjps = [op.vjp[s] if s < len(op.vjp) else None for op in table_of for s in (0, 1)]
    which = (cols["op"][rows].astype(np.int64) * 2 + bslot).tolist()
    back = [bi.tolist(), bform.tolist(), bj.tolist(), bfirst.astype(bool).tolist(),
            bslot.tolist(), list(_picker(which)(vjps))]
    return Plan.restore(template, fform.tolist(), back, kws)
