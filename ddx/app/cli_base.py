"""What every ddx command shares without Click (so that a data job can start without importing
it, ddx/app/cli_lean.py): the error boundary, lines on standard error, exits for a closed
standard output, and the one-thread OpenBLAS setting made before numpy loads."""

from __future__ import annotations

import os
import sys

from ..errors import DdxError, format_error, not_a_binding


def stderr_line(text: str) -> None:
    """One line on standard error, after flushing standard output (so the two interleave)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # nowhere left to say it: the exit code still does
        pass


def fail(exc: DdxError, *, as_json: bool = False) -> None:
    """Report a ddx error the one way the SPEC wants, and exit with its code."""
    if getattr(exc, "stdout", False):  # standard output itself failed: no JSON can go there
        from ..out.outfile import silence_stdout

        silence_stdout()
    elif as_json:
        import json

        try:
            sys.stdout.write(json.dumps({"error": exc.to_json()}) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            from ..out.outfile import silence_stdout

            silence_stdout()
    stderr_line(format_error(exc))
    sys.exit(exc.exit_code)


def _clicks_own(exc: BaseException) -> bool:
    """Whether ``exc`` is Click's exit or usage error (Click, if it is loaded, reports it)."""
    click = sys.modules.get("click")
    return click is not None and isinstance(exc, (click.exceptions.Exit, click.ClickException))


def guarded(fn):
    """Run a command body so that no Python traceback reaches a user (unless --debug)."""
    def wrapper(*args, **kwargs):
        debug = kwargs.get("debug", False)
        as_json = kwargs.get("as_json", False)
        try:
            return fn(*args, **kwargs)
        except DdxError as exc:
            if debug:
                raise
            fail(exc, as_json=as_json)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # the reader left (| head): not an error of ours
            pipe_gone()
        except RecursionError:
            fail(DdxError("input nested too deeply"), as_json=as_json)
        except OSError as exc:
            if debug:
                raise
            from ..out.outfile import reason

            where = f" {exc.filename}" if exc.filename else ""
            fail(DdxError(f"input/output error{where}: {reason(exc)}"), as_json=as_json)
        except Exception as exc:  # noqa: BLE001 - the boundary: turned into one line
            if debug or _clicks_own(exc):
                raise
            fail(DdxError(f"internal error: {type(exc).__name__}: {exc}",
                          hint="please report this input; --debug shows the traceback"),
                 as_json=as_json)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def stdout_failed(exc: OSError) -> None:
    from ..out.outfile import stdout

    fail(stdout().error(exc))


def pipe_gone():
    from ..out.outfile import silence_stdout

    silence_stdout()
    sys.exit(0)


def binding(item: str) -> tuple[str, str]:
    """A data-mode NAME=VALUE argument."""
    name, eq, value = item.partition("=")
    if not eq or not name.isidentifier():
        raise not_a_binding(item)
    return name, value


def one_blas_thread(environ=os.environ, modules=sys.modules) -> bool:
    """Before numpy is imported by a command that multiplies no large matrices (a one-liner,
    batch): one OpenBLAS thread, unless the user set OPENBLAS_NUM_THREADS. OpenBLAS starts a
    worker per core at import, and they spin: about 80 ms of CPU in a 125 ms one-liner. ddx's
    own threads (DDX_NUM_THREADS) split large elementwise work and are not affected."""
    if "OPENBLAS_NUM_THREADS" in environ or "numpy" in modules:
        return False
    environ["OPENBLAS_NUM_THREADS"] = "1"
    return True
