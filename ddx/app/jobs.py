"""Job lines: read from a stream, then split as the shell splits them or read as JSON objects."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from typing import IO, Any

from ..errors import (
    DdxError,
    DdxUsageError,
    missing_expression,
    no_such_option,
    not_a_binding,
    option_needs_value,
)

MAX_LINE = 1 << 20  # a job line longer than 1 MiB is reported, not parsed
FLAGS = {"--retain-grad": "retain_grad", "--forward": "forward", "--check": "check",
         "--jacobian": "jacobian", "--hessian": "hessian", "--explain": "explain",
         "--symbolic": "symbolic", "--swell": "swell", "--json": None, "--no-color": None}
VALUED = {"--wrt": "wrt", "--no-grad": "no_grad", "--grad-output": "grad_output",
          "--dtype": "dtype"}


_WORD = re.compile(r"""(?:[^\s"'\\]+|"[^"\\]*"|'[^']*')+""")


_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def _unquote(m: re.Match) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


# the usual job line: a double-quoted expression, then plain words (NAME=VALUE, options)
_USUAL = re.compile(r"""\s*"([^"\\]*)"((?:\s+[^\s"'\\]+)*)\s*""")


def _split(text: str) -> list[str]:
    """Shell-style words. The usual line is one match; other lines without backslashes are
    split by a regex (shlex is slow per line); with them, shlex itself."""
    usual = _USUAL.fullmatch(text)
    if usual is not None:
        return [usual[1], *usual[2].split()]
    return _split_words(text)


def _split_words(text: str) -> list[str]:
    if "\\" not in text:
        words = _WORD.findall(text)
        if not _WORD.sub("", text).strip():  # every character belongs to a word: no stray quote
            return [_QUOTED.sub(_unquote, w) if '"' in w or "'" in w else w for w in words]
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise DdxUsageError(f"bad quoting: {exc}") from None


_JSON_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true/false",
               type(None): "null", int: "a number", float: "a number"}


def _json_array(what: str, value: Any) -> None:
    """A JSON number or rectangular list of numbers, checked level by level (no recursion)."""
    level = [value]
    depth = 0
    while level and type(level[0]) is list:
        n = len(level[0])
        below: list = []
        for item in level:
            if type(item) is not list or len(item) != n:
                raise DdxUsageError(f"{what} is a ragged list: the items at depth {depth + 1} "
                                    "are not all lists of one length")
            below.extend(item)
        depth += 1
        if depth > 64:
            raise DdxUsageError(f"{what} nests more than 64 lists deep (a tensor has at most "
                                "64 dimensions)")
        level = below
    for item in level:
        if type(item) not in (int, float):
            kind = _JSON_KINDS.get(type(item), "that")
            raise DdxUsageError(f"{what} must be a number, a list of numbers or an expression "
                                f"string, not {kind}" if depth == 0 else
                                f"{what} is a ragged list: it mixes lists and non-lists"
                                if type(item) is list else
                                f"{what} holds {kind}: a list holds numbers only")


def _json_names(key: str, value: Any) -> None:
    if isinstance(value, str) or (type(value) is list and all(isinstance(v, str) for v in value)):
        return
    if type(value) is list:
        odd = next(v for v in value if not isinstance(v, str))
        raise DdxUsageError(f'"{key}" must list names (strings), not '
                            f"{_JSON_KINDS.get(type(odd), 'that')}")
    raise DdxUsageError(f'"{key}" must be a string ("a,b") or a list of names, not '
                        f"{_JSON_KINDS.get(type(value), 'that')}")


def parse_job(text: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A job line: one-liner arguments (shell quoting) or a JSON object."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DdxUsageError(f"bad JSON job: {exc.msg} at column {exc.colno}") from None
        except RecursionError:
            raise DdxUsageError("bad JSON job: nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("expr"), str):
            raise DdxUsageError('a JSON job needs "expr" (a string)')
        bindings = obj.get("bindings") or {}
        if not isinstance(bindings, dict):
            raise DdxUsageError('"bindings" must be an object')
        for name, value in bindings.items():
            if not isinstance(value, str):
                _json_array(f'"bindings": {name}', value)
        opts = {k: obj[k] for k in ("wrt", "no_grad", "grad_output", "dtype", "retain_grad",
                                    "forward", "check", "jacobian", "hessian", "explain",
                                    "symbolic", "swell")
                if k in obj}
        for key in ("wrt", "no_grad"):
            if key in opts:
                _json_names(key, opts[key])
        for key in ("retain_grad", "forward", "check", "jacobian", "hessian", "explain",
                    "symbolic", "swell"):
            if key in opts and type(opts[key]) is not bool:
                raise DdxUsageError(f'"{key}" must be true or false, not '
                                    f"{_JSON_KINDS.get(type(opts[key]), 'that')}")
        if "dtype" in opts and not isinstance(opts["dtype"], str):
            raise DdxUsageError(f'"dtype" must be a string ("float64" or "float32"), not '
                                f"{_JSON_KINDS.get(type(opts['dtype']), 'that')}")
        grad_output = opts.get("grad_output")
        if grad_output is not None and not isinstance(grad_output, str):
            _json_array('"grad_output"', grad_output)
            opts["grad_output"] = json.dumps(grad_output)
        return obj["expr"], bindings, opts
    args = _split(stripped)
    opts: dict[str, Any] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        key, eq, inline = a.partition("=")
        if a == "--":  # the rest are arguments, as on the command line: -- --x x=1
            rest.extend(args[i + 1:])
            break
        if a in FLAGS:
            if FLAGS[a]:
                opts[FLAGS[a]] = True
        elif key in VALUED:
            if eq:
                opts[VALUED[key]] = inline
            elif i + 1 < len(args):
                i += 1
                opts[VALUED[key]] = args[i]
            else:
                raise option_needs_value(key)
        elif a.startswith("--"):
            raise no_such_option(key)
        else:
            rest.append(a)
        i += 1
    if not rest:
        raise missing_expression()
    bindings = {}
    for item in rest[1:]:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise not_a_binding(item)
        bindings[name] = value
    return rest[0], bindings, opts


def job_lines(stream: IO[bytes]) -> Iterable[tuple[int, str | DdxError]]:
    """(line number, text) for every job line; undecodable or huge lines become errors.

    A line is read at most MAX_LINE + 1 bytes at a time, so a huge one is never held whole:
    the rest of it is read past in blocks and only counted."""
    readline = stream.readline
    number = 0
    while True:
        raw = readline(MAX_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE:
            size = len(raw)
            while not raw.endswith(b"\n"):
                raw = readline(1 << 20)
                if not raw:
                    break
                size += len(raw)
            yield number, DdxUsageError(f"line too long ({size} bytes; the limit is "
                                        f"{MAX_LINE})")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, DdxUsageError(f"invalid UTF-8 at byte {exc.start}")
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        yield number, text
