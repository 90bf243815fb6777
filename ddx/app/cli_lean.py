"""The ``ddx`` entry point: a data job (``ddx batch --expr E --data FILE ...``) whose arguments
are plain starts without Click; any other command line goes to the Click commands (cli.py).

Importing Click and building ddx's commands costs a data job about 40 ms before its first row
(a 10^6-row Parquet job takes 0.4-0.5 s in all). The lean reading below takes only what Click
would read the same way: the data mode's options by their long names (``--expr E`` or
``--expr=E``, ``-o OUT``), ``--keep``, and NAME=VALUE words. Anything else (another option, a
value that starts with ``-``, an option given twice, a word naming an existing file, shell
completion) goes to Click, which reads and words it as it always has."""

from __future__ import annotations

import gc
import os
import sys

from .cli_base import guarded, one_blas_thread, stderr_line

# data mode's options that take a value -> data_command's parameter
VALUED = {"--expr": "expr", "--csv": "csv_file", "--jsonl": "jsonl_file", "--data": "data_file",
          "--format": "fmt", "--map": "mapping", "-o": "output", "--output": "output"}


def lean_batch(args: list[str]) -> dict | None:
    """data_command's arguments for ``batch`` data-mode words Click would read the same way,
    else None (Click reads them)."""
    if args[:1] != ["batch"] or "_DDX_COMPLETE" in os.environ:
        return None
    found: dict = {"mapping": [], "keep": False}
    words: list[str] = []
    rest = iter(args[1:])
    for word in rest:
        if word == "--keep" and not found["keep"]:
            found["keep"] = True
            continue
        if not word.startswith("-"):
            words.append(word)
            continue
        key, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        name = VALUED.get(key)
        if name is None or name in found and name != "mapping":
            return None  # (Click: help, another option, an option twice, --, -oFILE, -)
        if not eq:
            value = next(rest, None)
            if value is None or value.startswith("-") and value != "-":
                return None
        if name == "mapping":
            found["mapping"].append(value)
        else:
            found[name] = value
    if not {"expr", "csv_file", "jsonl_file", "data_file"} & found.keys():
        return None  # a job file: Click's command
    if words and os.path.exists(words[0]):
        return None  # (Click checks an existing FILE argument: not a folder, readable)
    found["mapping"] = tuple(found["mapping"])
    return {"file": words[0] if words else None, "bindings": tuple(words[1:]), **found}


@guarded
def _data_job(**found) -> int:
    from .datajob import data_command  # (numpy, ddx's graph and replay: inside the boundary)

    return data_command(**found, started=_collect_again)


def _collect_again() -> None:
    """The start-up is over: what it made (modules, the compiled program) lives to the end, so
    it goes to the collector's permanent generation, and collection resumes for the blocks."""
    gc.freeze()
    gc.enable()


def main() -> None:
    """``ddx``: a plain data job here, everything else through Click."""
    found = lean_batch(sys.argv[1:])
    if found is None:
        from .cli import main as click_main

        click_main(prog_name="ddx")
        return
    one_blas_thread()
    # (the start-up makes ~10^5 objects that live to the end, and the collector's passes over
    # them found nothing to free: 11-22 ms of a Parquet job, 60 ms from CSV with Polars)
    gc.disable()
    try:
        code = _data_job(**found)
    except KeyboardInterrupt:  # (as Click's main reports it: a new line, then the error)
        try:
            sys.stderr.write("\n")
        except (OSError, ValueError):
            pass
        stderr_line("error: interrupted")
        sys.exit(130)
    sys.exit(code)
