"""Compiled templates on disk, so that a long text is parsed once, not once per process.

A text of at least MIN_CHARS characters that ddx/replay/lean.py compiles is written to
``$XDG_CACHE_HOME/ddx/templates/`` (``~/.cache/ddx/templates/`` without it), one file per key:
the text, the binding names and shapes, the dtype (the only option a compiled template
takes: it is made only without wrt, no_grad and retain_grad) and ddx itself: its version and
the contents of every source file a template depends on, so an edited ddx never reads an
old layout. The next process reads the file instead of parsing (ddx/replay/diskread.py):
its first replay runs on the file's columns, and a template used again is made whole by the
same ``from_columns`` as a fresh compile (tests compare the two field by field).

The file is data only, in a layout this module reads itself: a JSON header and numpy's raw
integer and float columns, each in the narrowest integer type that holds it, each distinct
number once (no pickle, marshal or code), behind a CRC-32 and the length of all of it (a
check against damage: ddx/replay/diskread.py validates every column, as a hostile file
could carry a matching CRC). A file that is unreadable, truncated, altered, from another key, text or
layout, or that names an op this ddx lacks is ignored (and rewritten on the next compile).
Writers write a file of their own and rename it into place, so two processes writing at
once leave one whole file. The directory is kept under MAX_BYTES by removing the least
recently used files.
``DDX_TEMPLATE_CACHE=0`` turns it off; ``DDX_TEMPLATE_CACHE=/some/dir`` puts it there."""

from __future__ import annotations

import json
import os
import zlib

import numpy as np

MIN_CHARS = 2048  # shorter texts parse in less time than a file takes to open and check
MAX_BYTES = 256 << 20  # the directory's bound; pruned to three quarters of it when over
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
    times: an installed copy and the source tree it came from must agree): each file's
    length, CRC-32 and Adler-32 (zlib's, at memory speed; hashlib alone takes longer to
    import than this whole stamp to make). Reading the ninety-odd files costs a new process
    about 3 ms, so the stamp is also kept in the cache folder under a name made of the files'
    paths, sizes and modification times (as Python's own bytecode cache trusts them): a file
    edited since has another name, and is read again."""
    if not _STAMP:
        from .. import __version__

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        files = []
        for package in _SOURCES:
            try:
                entries = sorted(os.scandir(os.path.join(root, package)), key=lambda e: e.name)
            except OSError:
                entries = []
            for e in entries:
                if e.name.endswith(".py"):
                    try:
                        st = e.stat()
                        files.append((f"{package}/{e.name}", e.path, st.st_size, st.st_mtime_ns))
                    except OSError:
                        files.append((f"{package}/{e.name}", e.path, -1, -1))
        listing = json.dumps([__version__, root, [[f[0], f[2], f[3]] for f in files]])
        folder = directory()
        memo = None if folder is None else \
            os.path.join(folder, f"{_digest(listing.encode())}.ddxs")
        stamp = _read_memo(memo)
        if stamp is None:
            parts = [__version__]
            for name, path, _, _ in files:
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                    digest = f"{len(data)}:{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
                except OSError:
                    digest = "unreadable"
                parts.append(f"{name}:{digest}")
            stamp = _digest("\n".join(parts).encode())
            if memo is not None:
                try:
                    _write(memo, stamp.encode())
                except OSError:
                    pass  # (a read-only or full disk: made again next time)
        _STAMP.append(stamp)
    return _STAMP[0]


def _read_memo(path: str | None) -> str | None:
    """A kept stamp: 16 hexadecimal digits, or None (no file, or not one)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            text = fh.read(17).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) == 16 and all(c in "0123456789abcdef" for c in text):
        return text
    return None


def _write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: a file of this process's own, renamed
    into place (a reader sees the old file or the new); errors: OSError."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _digest(data: bytes) -> str:
    """64 bits of zlib's CRC-32 and Adler-32 of ``data`` (against chance, as a cache needs:
    anyone who can write the folder can make ddx read anything anyway)."""
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def _key(source: str, names: list[str], shapes: list[tuple]) -> tuple[str, str]:
    """(file name, the key text written inside the file) for a compile's inputs."""
    text = _digest(source.encode("utf-8", "surrogatepass"))
    key = json.dumps([code_stamp(), text, len(source), names, [list(s) for s in shapes],
                      "float64"])
    return f"{_digest(key.encode())}.ddxt", key


def _column(values, header: dict, name: str, parts: list[bytes]) -> None:
    """An integer column, in the narrowest of int8, int16, int32 and int64 that holds it."""
    arr = np.asarray(values, dtype=np.int64)
    if arr.size:
        low, high = int(arr.min()), int(arr.max())
        for kind in (np.int8, np.int16, np.int32):
            info = np.iinfo(kind)
            if info.min <= low and high <= info.max:
                arr = arr.astype(kind)
                break
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
        from .diskread import NONE, PREFIX, seal  # (the reader's code: only for long texts)
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
        _column([NONE if r[5] is None else r[5] for r in rows], header, "b", parts)
        _column([0 if r[7] is None else r[6] for r in rows], header, "start", parts)
        _column([NONE if r[7] is None else r[7] for r in rows], header, "end", parts)
        _column(shape_ids, header, "shape", parts)
        # each distinct number once, then per number where it is: floats by value (0.0 and
        # -0.0 apart by their text; each nan its own), ints after them
        floats: dict = {}
        ints: dict[int, int] = {}
        num = [floats.setdefault(v if v else repr(v), len(floats)) if type(v) is float
               else ~ints.setdefault(v, len(ints)) for v in numbers]
        num = np.asarray(num, np.int64)
        num[num < 0] = len(floats) + ~num[num < 0]
        _column(num, header, "num", parts)
        _column(list(ints), header, "ints", parts)
        _column(plan.fform, header, "fform", parts)
        for name in ("bi", "bform", "bj", "bfirst", "bslot"):
            _column(getattr(plan, name), header, name, parts)
        values = np.asarray([float(v) for v in floats], np.float64)
        header["columns"].append(["floats", values.dtype.str, int(values.size)])
        parts.append(values.tobytes())
        head = json.dumps(header).encode()
        head += b" " * (-(PREFIX + 8 + len(head)) % 8)  # (the columns: aligned)
        data = seal(len(head).to_bytes(8, "little") + head + b"".join(parts))
        _write(os.path.join(folder, fname), data)
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
        if e.name.endswith((".ddxt", ".ddxs")):
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


def load(source: str, names: list[str], shapes: list[tuple]):
    """The template kept for these inputs, or None (no file, or one to ignore)."""
    folder = directory()
    if folder is None:
        return None
    from .diskread import decode  # (not imported by a process that reads no long text: 5 ms)

    try:
        fname, key = _key(source, names, shapes)
        path = os.path.join(folder, fname)
        with open(path, "rb") as fh:
            data = fh.read()
        template = decode(data, key, source, names, shapes)
    except Exception:  # noqa: BLE001 - whatever is wrong with the file, it is not used
        return None
    if template is not None:
        try:
            os.utime(path)  # (recently used: pruned last)
        except OSError:
            pass
    return template
