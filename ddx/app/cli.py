"""The ddx command: thin Click commands (their plumbing and error boundary: cli_support)."""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import DdxUsageError, hessian_needs_scalar
from ..limits import LIMITS
from .cli_base import guarded, one_blas_thread, pipe_gone, stderr_line, stdout_failed
from .cli_io import open_bytes, read_text, stdout_console, write_out
from .cli_support import DefaultGroup, EvalCommand, print_view, split_bindings

EXAMPLES = """\b
Examples:
  ddx "(w*x+b)^2" w=3 x=2 b=1           out = 49; dout/dw = 28, dout/dx = 42, dout/db = 14
  ddx "w*x + b" w=3 x=[2,4] b=1 --grad-output ones
  ddx "sum(sin(x)^2)" x=[0.1,0.2,0.3] --json
  ddx "x^3"                              3*x^2: a variable without a value gives formulas
  ddx "d/dx sin x * e^x"                the calculator's forms: d/dx, diff(f, x, 2), 2x, x²
  ddx "y = w*x; L = y^2" w=3 x=2 --wrt w --retain-grad
  ddx repl                              a PyTorch autograd playground
  ddx run lesson.ddx                    run a REPL script
  ddx batch jobs.txt                    one job per line, JSON Lines out
  ddx plot "relu(x)+x^2" x=-2:2         f and f' in the terminal; -o f.png for a file
"""
# the size limits, each raised by its environment variable (ddx/limits.py)
EXAMPLES += "\n\b\nLimits (raise one with its environment variable):\n" + "\n".join(
    f"  {name}={default:,}  {what}" for name, (default, _, what) in LIMITS.items())


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
      --jacobian  --hessian  --explain  --symbolic  --swell  --graph FILE  --emit torch|jax
      --json  --dtype float64|float32  --precision N  --no-color

    \b
    Shell completion (bash; zsh and fish alike): eval "$(_DDX_COMPLETE=bash_source ddx)"
    """


@main.command("eval", cls=EvalCommand, epilog=EXAMPLES)
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
@click.option("--symbolic", is_flag=True, help="Also print each derivative as a formula (the "
              "default when a variable has no value).")
@click.option("--swell", is_flag=True, help="Sizes of the naive, simplified and shared formulas "
              "beside SymPy's and the AD op count.")
@click.option("--graph", "graph_file", metavar="FILE",
              help="Write the graph picture: .dot, .mmd (Mermaid), .html (a page that steps the "
                   "backward pass), .svg/.png (needs Graphviz).")
@click.option("--emit", type=click.Choice(["torch", "jax"]),
              help="Print a Python script that redoes this with PyTorch or JAX, to compare.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64",
              show_default=True)
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--precision", type=click.IntRange(1, 17), default=6, show_default=True,
              help="Significant digits in the views (--json always has them all).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def eval_cmd(args, wrt, no_grad, grad_output, retain_grad, fwd, check, jacobian, hessian, explain,
             symbolic, swell, graph_file, emit, as_json, dtype, no_color, precision, debug):
    """Evaluate EXPR with NAME=VALUE bindings, differentiate, print (ddx EXPR ... is short for it)."""
    one_blas_thread()
    expr, bindings = split_bindings(args)
    if graph_file is not None:  # a path that can't be written is refused before the work
        from ..out.outfile import check as check_path  # (not the --check flag's name)

        check_path(graph_file, option="--graph")
    from .derivative import OneLiner

    one = OneLiner(expr, bindings, symbolic, swell)  # the calculator's forms (2x, d/dx, ...)
    trace = one.trace(wrt=wrt, no_grad=no_grad, dtype=dtype, retain_grad=retain_grad,
                      lean=False)  # the view shows the whole graph
    if trace is None:  # a variable without a value, or d/dx EXPR: the formulas alone
        return one.alone(as_json=as_json, no_color=no_color, dtype=dtype, wrt=wrt,
                         no_grad=no_grad, numeric={"--forward": fwd, "--check": check,
                         "--jacobian": jacobian, "--hessian": hessian, "--explain": explain,
                         "--graph": graph_file, "--emit": emit, "--grad-output": grad_output})
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
    one.beside(trace, dtype=dtype, wrt=wrt, no_grad=no_grad)
    if graph_file is not None:
        from ..out.pictures import write_graph

        write_graph(trace, graph_file)
    from ..textsafe import safe_text

    if emit:
        from ..out.emit import emit as emit_script

        write_out(safe_text(emit_script(trace, emit)))
        return
    if as_json:
        write_out(one.json(trace.to_json()) + "\n")  # (JSON text: control characters escaped)
    else:
        from ..out.render import one_liner

        console = stdout_console(no_color)
        print_view(console, one_liner(trace, precision=precision))
        one.show(console)  # (the formulas, when asked)
        console.file.flush()
    for message in trace.warnings:
        stderr_line(f"warning: {safe_text(message)}")


PLOT_EXAMPLES = """\b
Examples:
  ddx plot "relu(x - 1) + x^2" x=-2:2 --at x=1      kink at 1 marked; tangent with slope 2
  ddx plot "sin(w*x)" x=-pi:pi w=2 --order 2        f, f' and f''
  ddx plot "abs(x)*x" x=-1:1 -o f.svg               a file: .png, .svg or .pdf (matplotlib)
"""


@main.command("plot", cls=EvalCommand, epilog=PLOT_EXAMPLES)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--order", type=click.IntRange(1, 2), default=1, show_default=True,
              help="2 adds f''.")
@click.option("--at", metavar="X=V", help="Draw the tangent line at this point, with its slope.")
@click.option("-o", "--output", metavar="FILE", help="Write .png, .svg or .pdf (needs matplotlib).")
@click.option("--points", type=int, help="Grid points (default 801).")
@click.option("--width", type=click.IntRange(40, 1000), help="Columns (default: the terminal's).")
@click.option("--height", type=click.IntRange(4, 200), default=16, show_default=True,
              help="Rows of the terminal plot.")
@click.option("--json", "as_json", is_flag=True, help="The samples and findings as JSON.")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64")
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def plot_cmd(args, order, at, output, points, width, height, as_json, dtype, no_color, debug):
    """Plot EXPR and its derivative over NAME=A:B (other NAME=VALUE bindings are constants)."""
    from .plot import plot_command

    expr, bindings = split_bindings(args)
    console = stdout_console(no_color)
    plot_command(expr, bindings, order=order, at=at, output=output, points=points, width=width,
                 height=height, color=console.color_system is not None, as_json=as_json,
                 dtype=dtype, console=console)


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
@click.option("-i", "--interactive", is_flag=True,
              help="Stay in the REPL after the script, with its names (as python -i).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def run_cmd(file, bail, interactive, debug):
    """Run a REPL script (FILE, or - for stdin) without prompts; exit 1 if a statement failed.

    A .py file runs as Python; .scala and .java files (and pasted listings that look like
    them) are the seed chapter's dialects, rewritten line for line."""
    from .session import Session

    text = read_text(file)
    if interactive and sys.stdin.isatty() and file != "-":
        from .repl import Repl

        repl = Repl()
        repl.session.run_script(text, bail=bail, filename=file)
        sys.exit(repl.loop())
    failed = Session(*_session_writers()).run_script(text, bail=bail,
                                                     filename=None if file == "-" else file)
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
            pipe_gone()
        except OSError as exc:
            stdout_failed(exc)

    def err(text: str) -> None:
        stderr_line(safe_text(text))

    return out, err


@main.command("batch")
@click.argument("file", required=False, type=click.Path(allow_dash=True, dir_okay=False))
@click.argument("bindings", nargs=-1)
@click.option("--expr", help="One expression for every row of --data (--csv, --jsonl) data.")
@click.option("--csv", "csv_file", metavar="DATA", help="CSV data (- for stdin): columns bind "
              "the variables.")
@click.option("--jsonl", "jsonl_file", metavar="DATA", help="JSON Lines data (- for stdin).")
@click.option("--data", "data_file", metavar="DATA", help="A .csv, .jsonl or .parquet file (- for "
              "stdin, with --format).")
@click.option("--format", "fmt", metavar="FMT[,OUT]", help="csv, jsonl or parquet, when a name "
              "does not say (input, output).")
@click.option("--map", "mapping", metavar="X=COL", multiple=True, help="Variable X reads column "
              "COL.")
@click.option("--keep", is_flag=True, help="Write the input's columns before the results.")
@click.option("--dask", "dask", is_flag=False, flag_value="", default=None, metavar="[ADDRESS]",
              help="Run on a Dask cluster (a local one without ADDRESS); -o names a folder.")
@click.option("-o", "--output", metavar="OUT", help="Where results go (default: stdout).")
@click.option("--human", is_flag=True, help="Print the Rich view per job instead of JSON.")
@click.option("--no-color", is_flag=True, help="No colour (also: NO_COLOR).")
@click.option("--debug", is_flag=True, hidden=True)
@guarded
def batch_cmd(file, bindings, expr, csv_file, jsonl_file, data_file, fmt, mapping, keep, dask,
              output, human, no_color, debug):
    """Many jobs (FILE or -, one per line) to JSON Lines; or --expr over --data FILE rows."""
    one_blas_thread()
    if expr is not None or csv_file or jsonl_file or data_file:
        from .datajob import data_command

        sys.exit(data_command(file, bindings, expr=expr, csv_file=csv_file, jsonl_file=jsonl_file,
                              data_file=data_file, fmt=fmt, mapping=mapping, keep=keep, dask=dask,
                              output=output))
    from ..out.outfile import Output
    from ..textsafe import safe_text
    from . import batch

    start = batch.now()
    say = lambda text: stderr_line(safe_text(text))  # noqa: E731 - stderr, after a flush
    if bindings:
        raise DdxUsageError("job files take no NAME=VALUE arguments (put them on each line)")
    stream = sys.stdin.buffer if file in (None, "-") else open_bytes(file)
    with Output(output, option="-o", inputs=(file or "-",)) as out:
        emit = (batch.human_writer(stdout_console(no_color, out)) if human
                else batch.json_writer(out))
        from .progress import counted, job_progress

        with job_progress(file) as bar:  # (on stderr, on a terminal, after a second)
            jobs, failed = batch.run_jobs(stream, counted(emit, bar), replay=not human)
        out.flush()
    took = batch.now() - start
    say(f"batch: {jobs} jobs, {failed} failed, {took:.2f} s"
        + (f" ({1e3 * took / jobs:.3f} ms per job)" if jobs else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
