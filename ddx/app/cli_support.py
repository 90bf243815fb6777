"""The ddx commands' Click plumbing: the default group, the one-liner's words, errors as exit codes."""

from __future__ import annotations

import re
import sys

import click

from ..errors import (
    DdxError,
    DdxUsageError,
    missing_expression,
    no_such_option,
    not_a_binding,
    option_needs_value,
    suggest,
)
from ..textsafe import safe_text
from .cli_base import fail, pipe_gone, stderr_line, stdout_failed


def _one_liner_json(args: list[str], commands) -> bool:
    """Whether a command line that failed to parse asked for the one-liner's --json."""
    if not args or args[0] in commands and args[0] != "eval":
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
        elif args[0] == "help" and (len(args) == 1 or len(args) == 2 and args[1] in self.commands):
            args = [*args[1:], "--help"]  # ddx help, ddx help batch
        elif args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["eval", *args]
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            stderr_line("error: interrupted")
            sys.exit(130)
        except click.ClickException as exc:
            fail(_usage_error(exc), as_json=_one_liner_json(args, self.commands))
        except DdxError as exc:
            fail(exc, as_json=_one_liner_json(args, self.commands))
        except BrokenPipeError:
            pipe_gone()
        except OSError as exc:  # (commands word their own: this is --help or --version output)
            stdout_failed(exc)
        if not standalone_mode:
            return code
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            pipe_gone()
        except OSError as exc:
            stdout_failed(exc)
        sys.exit(code if isinstance(code, int) else 0)


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
                raise _no_such_option(key, {o for o in flags | valued if o.startswith("--")}
                                      | {"--version", "--help"})
            else:
                words.append(word)
        return super().parse_args(ctx, [*opts, "--", *words])


def _no_such_option(option: str, known: set[str]) -> DdxUsageError:
    """Click's NoSuchOption in ddx's words, with the closest option when one is close."""
    error = no_such_option(option)
    close = suggest(option, known)
    if close:
        error.message += f"; did you mean {close}?"
    return error


def split_bindings(args: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """The expression and its NAME=VALUE bindings; a name bound twice is a warning (the last
    value wins, as in a shell), and so is a name with no value next to a bound name it may
    have meant (``sin(X) x=1``)."""
    if not args:
        raise missing_expression()
    expr, rest = args[0], args[1:]
    bindings: dict[str, str] = {}
    for item in rest:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise not_a_binding(item)
        name = name.strip()
        if name in bindings:
            stderr_line(safe_text(f"warning: {name} is bound twice ({name}={bindings[name]}, "
                                  f"then {name}={value}): {name}={value} is used"))
            del bindings[name]  # (the order of the bindings is the order of their last use)
        bindings[name] = value
    for message in near_misses(expr, bindings):
        stderr_line(safe_text(message))
    return expr, bindings


def near_misses(expr: str, bindings: dict) -> list[str]:
    """Warnings for names the expression uses without a value that are close to a bound name
    it does not use: a typo, most likely (``sin(X) x=1``)."""
    if not bindings or all(re.search(rf"(?<![\w.]){re.escape(b)}(?!\w)", expr) for b in bindings):
        return []  # every bound name appears: nothing to parse a second time for
    try:
        from ..graph.functions import FUNCTIONS
        from ..graph.values import CONSTANTS
        from ..lang.syntax import parse
        from .data import free_names

        used = free_names(parse(expr))
    except Exception:  # noqa: BLE001 - the evaluation reports a bad expression in its words
        return []
    unused = [b for b in bindings if b not in used]
    out = []
    for name in used:
        if name in bindings or name in CONSTANTS or name in FUNCTIONS or not unused:
            continue
        close = next((b for b in unused if b.lower() == name.lower()), None) \
            or suggest(name, unused)
        if close:
            out.append(f"warning: '{name}' has no value; did you mean '{close}'? ({close} is "
                       "bound but not used)")
    return out


def print_view(console, renderable) -> None:
    """Print a view at the console's width; when the output is not a terminal, without the
    spaces Rich pads lines with (they spoil diffs and copy-paste)."""
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    text = "\n".join(line.rstrip() for line in captured.get().split("\n"))
    console.file.write(text)
