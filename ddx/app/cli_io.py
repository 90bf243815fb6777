"""The ddx commands' input and output: the results console, standard output, input files."""

from __future__ import annotations

import os
import sys

from ..errors import DdxUsageError


def stdout_console(no_color: bool, file=None):
    """The Console for results: markup is never read from any text (user text is data)."""
    from rich.console import Console

    from ..out.outfile import stdout

    file = stdout() if file is None else file
    color = not no_color and "NO_COLOR" not in os.environ and file.isatty()
    return Console(file=file, no_color=not color, highlight=False, soft_wrap=False,
                   markup=False, emoji=False, color_system="auto" if color else None)


def write_out(text: str) -> None:
    """Write to standard output and flush, so that a failure is a worded error right here."""
    from ..out.outfile import stdout

    out = stdout()
    out.write(text)
    out.flush()


def open_bytes(path: str):
    """A job file opened for reading bytes; a failure is a usage error."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise DdxUsageError(f"cannot read {path}: {exc.strerror}") from None


def read_text(file: str) -> str:
    """A script (FILE, or - for stdin) as UTF-8 text; a failure is a usage error."""
    try:
        if file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(file, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise DdxUsageError(f"cannot read {file}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DdxUsageError(f"{file} is not UTF-8 text (byte {exc.start})") from None
