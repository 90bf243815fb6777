"""Where ddx writes: a file appears whole or not at all, never over an input; write errors worded."""

from __future__ import annotations

import errno
import os
import signal
import stat
import sys
from typing import IO

from ..errors import DdxOutputError, DdxUsageError

_WORDS = {errno.ENOENT: "no such file or folder", errno.EISDIR: "it is a directory",
          errno.EACCES: "permission denied", errno.EPERM: "permission denied",
          errno.ENOSPC: "no space left on device", errno.EROFS: "read-only file system",
          errno.ENOTDIR: "a part of the path is not a folder"}


def reason(exc: OSError) -> str:
    """An OSError in a few lower-case words."""
    words = _WORDS.get(exc.errno)
    if words is None:
        words = exc.strerror or type(exc).__name__
        words = words[:1].lower() + words[1:] if words[1:2].islower() else words
    return words


def _same(path: str, inp: str) -> bool:
    try:
        if inp == "-":
            fd = sys.stdin.fileno()
            here, there = os.fstat(fd), os.stat(path)
            return stat.S_ISREG(here.st_mode) and os.path.samestat(here, there)
        return os.path.samefile(path, inp)
    except (OSError, ValueError, AttributeError):  # (a missing file, a stdin with no fd)
        return False


def check(path: str, *, option: str, inputs: tuple[str, ...] = ()) -> None:
    """Refuse an output path before anything is opened for writing: an empty name or one of the
    inputs (followed through links) is a usage error; a directory or a missing folder fails as
    writing there would."""
    if path == "":
        raise DdxUsageError(f"{option} needs a file name, got ''")
    for inp in inputs:
        if inp is not None and _same(path, inp):
            shown = "standard input" if inp == "-" else f"the input {inp}"
            raise DdxUsageError(f"{option} {path} is the same file as {shown}",
                                hint="write the results to another file")
    if os.path.isdir(path):
        raise DdxOutputError(f"cannot write {path}: it is a directory")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):  # a file made read-only stays as it is
            raise DdxOutputError(f"cannot write {path}: permission denied")
        return
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        shown = os.path.dirname(path) or folder
        raise DdxOutputError(f"cannot write {path}: " + (
            f"{shown} is not a folder" if os.path.exists(folder) else
            f"the folder {shown} does not exist"))


class Stream:
    """A stream whose write errors are DdxOutputErrors naming it (a closed pipe stays a
    BrokenPipeError: the reader left, which is no error of ours)."""

    def __init__(self, raw: IO, name: str, *, stdout: bool = False) -> None:
        self.raw = raw
        self.name = name
        self.stdout = stdout

    def write(self, text) -> int:
        try:
            return self.raw.write(text)
        except OSError as exc:
            raise self.error(exc) from None

    def flush(self) -> None:
        try:
            self.raw.flush()
        except OSError as exc:
            raise self.error(exc) from None

    def isatty(self) -> bool:
        try:
            return self.raw.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str):
        return getattr(self.raw, name)

    def error(self, exc: OSError) -> OSError | DdxOutputError:
        if isinstance(exc, BrokenPipeError):
            return exc
        return DdxOutputError(f"cannot write {self.name}: {reason(exc)}", stdout=self.stdout)


def stdout(*, binary: bool = False) -> Stream:
    return Stream(sys.stdout.buffer if binary else sys.stdout, "to standard output", stdout=True)


def silence_stdout() -> None:
    """Point a failed standard output at /dev/null, so that Python's last flush at exit finds
    nothing to complain about (a traceback-like 'Exception ignored' and exit code 120)."""
    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _stop(signum, frame):
    raise SystemExit(128 + signum)


class Output:
    """``with Output(path, option="-o") as out:`` the file to write into: a temporary file in
    the target's folder, renamed over the target when the block completes and removed when it
    fails or is interrupted (SIGTERM and SIGHUP too). ``None`` or ``-`` is standard output; a
    device or pipe (``/dev/stdout``) is written directly."""

    def __init__(self, path: str | None, *, option: str, inputs: tuple[str, ...] = (),
                 binary: bool = False, sync: bool = True) -> None:
        self.path = None if path == "-" else path
        self.binary = binary
        self.sync = sync  # (fsync before the rename: whole on the disk, not just in the cache)
        self.tmp: str | None = None
        self.fh: IO | None = None
        self.saved: dict = {}
        if self.path is not None:
            check(self.path, option=option, inputs=inputs)

    def __enter__(self) -> Stream:
        if self.path is None:
            return stdout(binary=self.binary)
        path = self.path
        mode, kw = ("wb", {}) if self.binary else ("w", {"encoding": "utf-8", "newline": ""})
        try:
            st = os.stat(path)
        except OSError:
            st = None
        try:
            if st is not None and not stat.S_ISREG(st.st_mode):
                self.fh = open(path, mode, **kw)  # noqa: SIM115 - closed in __exit__
            else:
                real = os.path.realpath(path)  # a link keeps pointing at the (new) file
                folder, base = os.path.split(real)
                fd, self.tmp = _new_file(folder, f".{base}.", ".ddx-tmp")
                self.fh = os.fdopen(fd, mode, **kw)
                self.real = real
                self.mode = (st.st_mode & 0o7777) if st is not None else 0o666 & ~_umask()
        except OSError as exc:
            raise DdxOutputError(f"cannot write {path}: {reason(exc)}") from None
        if self.tmp is not None:
            self._trap()
        return Stream(self.fh, path)

    def _trap(self) -> None:
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self.saved[sig] = signal.signal(sig, _stop)
        except (ValueError, AttributeError, OSError):  # not the main thread; no SIGHUP
            pass

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.fh is None:
            return False
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        if exc_type is not None:
            self._abandon()
            return False
        try:
            if self.tmp is None:
                self.fh.close()
                return False
            self.fh.flush()
            if self.sync:
                os.fsync(self.fh.fileno())
            self.fh.close()
            os.chmod(self.tmp, self.mode)
            if self.sync:
                os.replace(self.tmp, self.real)
            else:  # (not synced: nor flushed by the rename, ddx/out/exchange.py)
                from .exchange import replace_unflushed

                replace_unflushed(self.tmp, self.real)
        except OSError as exc:
            self._abandon()
            raise DdxOutputError(f"cannot write {self.path}: {reason(exc)}") from None
        return False

    def _abandon(self) -> None:
        try:
            self.fh.close()
        except OSError:
            pass
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass


def _new_file(folder: str, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file of a name no other has (``prefix``, random letters, ``suffix``), open for
    writing, readable by its owner only: tempfile.mkstemp's work without importing tempfile
    (with shutil, random, bz2 and lzma: 5 ms of a 0.3 s data job)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no temporary name left", folder)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write(path: str, data: str | bytes, *, option: str) -> None:
    """Write a whole file (a picture, a script) the safe way."""
    with Output(path, option=option, binary=isinstance(data, bytes)) as out:
        out.write(data)
