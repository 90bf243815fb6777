"""The ddx command: thin Click commands; the one place where errors become exit codes."""

from __future__ import annotations

import json
import os
import re
import sys

import click

from .. import __version__
from ..errors import (
    DdxError,
    DdxUsageError,
    format_error,
    hessian_needs_scalar,
    missing_expression,
    no_such_option,
    not_a_binding,
    option_needs_value,
)

EXAMPLES = """\b
Examples:
  ddx "(w*x+b)^2" w=3 x=2 b=1           value 49; dL/dw=28, dL/dx=42, dL/db=14
  ddx "w*x + b" w=3 x=[2,4] b=1 --grad-output ones
  ddx "sum(sin(x)^2)" x=[0.1,0.2,0.3] --json
  ddx "y = w*x; L = y^2" w=3 x=2 --wrt w --retain-grad
  ddx repl                              a PyTorch autograd playground
  ddx run lesson.ddx                    run a REPL script
  ddx batch jobs.txt                    one job per line, JSON Lines out
"""


def _stdout_console(no_color: bool, file=None):
    """The Console for results: markup is never read from any text (user text is data)."""
    from rich.console import Console

    from ..out.outfile import stdout

    file = stdout() if file is None else file
    color = not no_color and "NO_COLOR" not in os.environ and file.isatty()
    return Console(file=file, no_color=not color, highlight=False, soft_wrap=False,
                   markup=False, emoji=False, color_system="auto" if color else None)


def _write_out(text: str) -> None:
    """Write to standard output and flush, so that a failure is a worded error right here."""
    from ..out.outfile import stdout

    out = stdout()
    out.write(text)
    out.flush()


def _stderr(text: str) -> None:
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
        try:
            sys.stdout.write(json.dumps({"error": exc.to_json()}) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            from ..out.outfile import silence_stdout

            silence_stdout()
    _stderr(format_error(exc))
    sys.exit(exc.exit_code)


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
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # the reader left (| head): not an error of ours
            from ..out.outfile import silence_stdout

            silence_stdout()
            sys.exit(0)
        except RecursionError:
            fail(DdxError("input nested too deeply"), as_json=as_json)
        except OSError as exc:
            if debug:
                raise
            from ..out.outfile import reason

            where = f" {exc.filename}" if exc.filename else ""
            fail(DdxError(f"input/output error{where}: {reason(exc)}"), as_json=as_json)
        except Exception as exc:  # noqa: BLE001 - the boundary: turned into one line
            if debug:
                raise
            fail(DdxError(f"internal error: {type(exc).__name__}: {exc}",
                          hint="please report this input; --debug shows the traceback"),
                 as_json=as_json)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _one_liner_json(args: list[str]) -> bool:
    """Whether a command line that failed to parse asked for the one-liner's --json."""
    if not args or args[0] in main.commands and args[0] != "eval":
        return False
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _usage_error(exc: click.ClickException) -> DdxError:
    """Click's own complaint, in ddx's words: ``error: ...`` and a hint, exit code 2."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return DdxUsageError("missing command or expression",
                             hint='try: ddx "(w*x+b)^2" w=3 x=2 b=1, or ddx --help')
    message = exc.format_message().strip().removesuffix(".")
    if message[1:2].islower():
        message = message[:1].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path.replace(" eval", "") if ctx is not None else "ddx"
    error = DdxUsageError(message, hint=f"see {path} --help")
    if exc.exit_code != 2:
        error.exit_code = exc.exit_code
    return error


class DefaultGroup(click.Group):
    """`ddx EXPR ...` runs the hidden `eval` command; `ddx` alone on a terminal opens the REPL.

    Every usage error, Click's own too, is reported as ddx reports errors (``error: ...``,
    exit code 2, a JSON error object under --json)."""

    def parse_args(self, ctx, args):
        if not args:
            if sys.stdin.isatty() and sys.stdout.isatty():
                args = ["repl"]
        elif args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["eval", *args]
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            _stderr("error: interrupted")
            sys.exit(130)
        except click.ClickException as exc:
            fail(_usage_error(exc), as_json=_one_liner_json(args))
        except DdxError as exc:
            fail(exc, as_json=_one_liner_json(args))
        except BrokenPipeError:
            _pipe_gone()
        except OSError as exc:  # (commands word their own: this is --help or --version output)
            _stdout_failed(exc)
        if not standalone_mode:
            return code
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _pipe_gone()
        except OSError as exc:
            _stdout_failed(exc)
        sys.exit(code if isinstance(code, int) else 0)


def _stdout_failed(exc: OSError) -> None:
    from ..out.outfile import stdout

    fail(stdout().error(exc))


def _pipe_gone():
    from ..out.outfile import silence_stdout

    silence_stdout()
    sys.exit(0)


class EvalCommand(click.Command):
    """The one-liner's words: its options anywhere, everything else an argument, so that an
    expression such as ``-theta`` or ``-h*x`` is never read as options (``--`` ends them)."""

    def parse_args(self, ctx, args):
        flags, valued = set(ctx.help_option_names), set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                (flags if param.is_flag else valued).update(param.opts + param.secondary_opts)
        opts: list[str] = []
        words: list[str] = []
        rest = iter(args)
        for word in rest:
            key = word.partition("=")[0]
            if word == "--":
                words.extend(rest)
            elif word in flags or key in flags:
                opts.append(word)  # (--json=1: Click says that it takes no value)
            elif key in valued:
                opts.append(word)
                if key == word:
                    value = next(rest, None)
                    if value is None:
                        raise option_needs_value(word)
                    opts.append(value)
            elif re.fullmatch(r"--[A-Za-z][\w-]*(=.*)?", word):
                raise no_such_option(key)
            else:
                words.append(word)
        return super().parse_args(ctx, [*opts, "--", *words])


@click.group("ddx", cls=DefaultGroup, epilog=EXAMPLES,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ddx")
def main() -> None:
    """ddx: differentiate an expression the way PyTorch's autograd would, and show every step.

    ddx EXPR [NAME=VALUE ...] [options] evaluates EXPR, runs backward() and prints the forward
    values, the grad_fn tree and every gradient.

    \b
    One-liner options (details: ddx eval --help):
      --wrt A,B  --no-grad A,B  --grad-output VALUE  --retain-grad  --forward  --check
      --jacobian  --hessian  --explain  --graph FILE  --emit torch|jax  --json
      --dtype float64|float32  --no-color
    """


def split_bindings(args: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    if not args:
        raise missing_expression()
    expr, rest = args[0], args[1:]
    bindings: dict[str, str] = {}
    for item in rest:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise not_a_binding(item)
        bindings[name.strip()] = value
    return expr, bindings


@main.command("eval", cls=EvalCommand, hidden=True, epilog=EXAMPLES)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--wrt", metavar="A,B", help="Only these variables require grad.")
@click.option("--no-grad", "no_grad", metavar="A,B", help="These variables are data.")
@click.option("--grad-output", metavar="VALUE",
              help="The gradient= argument of backward() for a non-scalar output ('ones').")
@click.option("--retain-grad", is_flag=True, help="Keep and show intermediate gradients.")
@click.option("--forward", "fwd", is_flag=True,
              help="Also run forward mode (a JVP pass per input element), side by side.")
@click.option("--check", is_flag=True, help="Also compare with central finite differences.")
@click.option("--jacobian", is_flag=True,
              help="Full Jacobian of a vector output, by reverse and by forward mode.")
@click.option("--hessian", is_flag=True, help="Hessian of a scalar output (forward-over-reverse).")
@click.option("--explain", is_flag=True, help="Show the chain rule: path products per leaf.")
@click.option("--graph", "graph_file", metavar="FILE",
              help="Write the graph picture: .dot, .mmd (Mermaid), .svg/.png (needs Graphviz).")
@click.option("--emit", type=click.Choice(["torch", "jax"]),
              help="Print a Python script that redoes this with PyTorch or JAX, to compare.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64",
              show_default=True)
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def eval_cmd(args, wrt, no_grad, grad_output, retain_grad, fwd, check, jacobian, hessian, explain,
             graph_file, emit, as_json, dtype, no_color, debug):
    """Evaluate EXPR with NAME=VALUE bindings, differentiate, print."""
    expr, bindings = split_bindings(args)
    if graph_file is not None:  # a path that can't be written is refused before the work
        from ..out.outfile import check

        check(graph_file, option="--graph")
    from .api import Trace

    trace = Trace(expr, bindings, wrt=wrt, no_grad=no_grad, dtype=dtype,
                  retain_grad=retain_grad, lean=False)  # the view shows the whole graph
    if hessian and trace.output.value.size != 1:
        raise hessian_needs_scalar()
    vector_ok = jacobian and trace.output.value.size > 1 and grad_output is None
    if trace.output.requires_grad and not vector_ok:
        trace.backward(grad_output)
    for flag, method in ((fwd, trace.forward_mode), (check, trace.check),
                         (jacobian, trace.jacobian), (hessian, trace.hessian),
                         (explain, trace.explain)):
        if flag and trace.output.requires_grad:
            method()
    if graph_file is not None:
        from ..out.pictures import write_graph

        write_graph(trace, graph_file)
    from ..textsafe import safe_text

    if emit:
        from ..out.emit import emit as emit_script

        _write_out(safe_text(emit_script(trace, emit)))
        return
    if as_json:
        _write_out(json.dumps(trace.to_json()) + "\n")  # (json.dumps escapes every control)
    else:
        from ..out.render import one_liner

        console = _stdout_console(no_color)
        console.print(one_liner(trace), soft_wrap=True)
        console.file.flush()
    for message in trace.warnings:
        _stderr(f"warning: {safe_text(message)}")


@main.command("repl")
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def repl_cmd(no_color, debug):
    """Interactive session: PyTorch's autograd surface on your own tensors."""
    if not sys.stdin.isatty():  # piped input: run it as a script (no prompts)
        from .session import Session

        sys.exit(1 if Session(*_session_writers()).run_script(sys.stdin.read()) else 0)
    from .repl import Repl

    sys.exit(Repl(no_color=no_color).loop())


@main.command("run")
@click.argument("file", type=click.Path(allow_dash=True, dir_okay=False))
@click.option("--bail", is_flag=True, help="Stop at the first error.")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def run_cmd(file, bail, debug):
    """Run a REPL script (FILE, or - for stdin) without prompts; exit 1 if a statement failed."""
    from .session import Session

    text = _read_text(file)
    failed = Session(*_session_writers()).run_script(text, bail=bail)
    sys.exit(1 if failed else 0)


def _session_writers():
    """What a script's session prints with: escaped for the terminal; if standard output
    fails, that is one worded error and the end of the run (SystemExit, past the session)."""
    from ..textsafe import safe_text

    def out(text: str) -> None:
        try:
            sys.stdout.write(safe_text(text) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            _pipe_gone()
        except OSError as exc:
            _stdout_failed(exc)

    def err(text: str) -> None:
        _stderr(safe_text(text))

    return out, err


@main.command("batch")
@click.argument("file", required=False, type=click.Path(allow_dash=True, dir_okay=False))
@click.argument("bindings", nargs=-1)
@click.option("--expr", help="One expression for every row of --csv / --jsonl data.")
@click.option("--csv", "csv_file", metavar="DATA", help="CSV data (- for stdin): columns bind "
              "the variables.")
@click.option("--jsonl", "jsonl_file", metavar="DATA", help="JSON Lines data (- for stdin).")
@click.option("-o", "--output", metavar="OUT", help="Where results go (default: stdout).")
@click.option("--human", is_flag=True, help="Print the Rich view per job instead of JSON.")
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def batch_cmd(file, bindings, expr, csv_file, jsonl_file, output, human, no_color, debug):
    """Many jobs (FILE or -, one per line) to JSON Lines; or --expr over --csv/--jsonl data."""
    from ..out.outfile import Output
    from ..textsafe import safe_text
    from . import batch

    start = batch.now()
    say = lambda text: _stderr(safe_text(text))  # noqa: E731 - stderr, after a flush
    data = csv_file or jsonl_file
    if expr is not None or data:
        if expr is None or not data or (csv_file and jsonl_file):
            raise DdxUsageError("data mode needs --expr and one of --csv or --jsonl")
        extra = dict(_binding(b) for b in ((file,) if file else ()) + bindings)
        run = batch.DataRun(expr, extra, fmt="csv" if csv_file else "jsonl")
        source = batch.open_text(data)
        with Output(output, option="-o", inputs=(data,)) as out:  # (checked before any read)
            with batch.progress(data) as advance:
                run.run(source, out, lambda msg: say(f"error: {msg}"), advance)
            out.flush()
        for message, count in list(run.warnings.items())[:5]:
            say(f"warning: {message}" + (f" ({count} chunks)" if count > 1 else ""))
        say(f"batch: {run.rows} rows, {run.bad_rows} bad, {batch.now() - start:.2f} s")
        sys.exit(1 if run.bad_rows else 0)
    if bindings:
        raise DdxUsageError("job files take no NAME=VALUE arguments (put them on each line)")
    stream = sys.stdin.buffer if file in (None, "-") else _open_bytes(file)
    with Output(output, option="-o", inputs=(file or "-",)) as out:
        emit = (batch.human_writer(_stdout_console(no_color, out)) if human
                else batch.json_writer(out))
        jobs, failed = batch.run_jobs(stream, emit, replay=not human)
        out.flush()
    took = batch.now() - start
    say(f"batch: {jobs} jobs, {failed} failed, {took:.2f} s"
        + (f" ({1e3 * took / jobs:.3f} ms per job)" if jobs else ""))
    sys.exit(1 if failed else 0)


def _binding(item: str) -> tuple[str, str]:
    name, eq, value = item.partition("=")
    if not eq or not name.isidentifier():
        raise not_a_binding(item)
    return name, value


def _open_bytes(path: str):
    try:
        return open(path, "rb")
    except OSError as exc:
        raise DdxUsageError(f"cannot read {path}: {exc.strerror}") from None


def _read_text(file: str) -> str:
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


if __name__ == "__main__":  # pragma: no cover
    main()
