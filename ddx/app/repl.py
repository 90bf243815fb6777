"""The interactive REPL: prompt_toolkit line editing, history, completion, and ':' commands."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import fmt
from ..errors import DdxError, DdxUsageError, format_error, suggest
from ..graph.tensor import Tensor
from ..textsafe import safe_text
from .session import Continuation, Session

HELP = """\
Type statements as in PyTorch; a bare expression prints its value.
  x = tensor(2.0, requires_grad=true)     w = tensor([0.5, -1.0], requires_grad=true)
  y = w * x + 1;  y.grad_fn;  y.grad_fn.next_functions
  loss = sum(y^2);  loss.backward();  w.grad
  loss.backward(retain_graph=true)  y.retain_grad()  w.requires_grad_(false)  w.detach()
  zero_grad()   w.grad.zero_()   ones_like(y)   zeros(2, 3)   with no_grad: z = w * 2
Commands:
  :help            this text
  :graph NAME      the grad_fn tree of NAME, with values and gradients
  :dot NAME [FILE] the graph as Graphviz DOT (to FILE if given: .dot, .svg, .png, .mmd)
  :html NAME FILE  the graph as a page: values, gradients, the backward pass step by step
  :plot EXPR x=A:B [--order 2] [--at x=V] [-o FILE]   f and f' (session tensors bind names)
  :vars            every tensor: shape, dtype, requires_grad, grad_fn, grad
  :reset           forget every name
  :quit            leave (also Ctrl-D); Ctrl-C abandons the line being typed
"""

COMMANDS = (":help", ":graph", ":dot", ":html", ":plot", ":vars", ":reset", ":quit", ":exit")
ATTRS = ("grad", "grad_fn", "requires_grad", "is_leaf", "shape", "dtype", "next_functions",
         "backward(", "retain_grad()", "requires_grad_(", "detach()", "item()", "zero_()",
         "name()", "variable")


def history_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return Path(base) / "ddx" / "history"


class GraphView:
    """What render.grad_fn_tree needs, for a tensor in a REPL session."""

    def __init__(self, name: str, t: Tensor) -> None:
        self.output = t
        self.output_name = name
        self.backward_done = True
        self.nodes: list[Tensor] = []

    def grad_of(self, t: Tensor):
        return t.grad


class Repl:
    def __init__(self, *, no_color: bool = False) -> None:
        color = not no_color and "NO_COLOR" not in os.environ
        self.console = Console(no_color=not color, highlight=False, markup=False, emoji=False)
        self.session = Session(self._out, self._err)

    def _out(self, text: str) -> None:
        self.console.print(Text(safe_text(text)), highlight=False, soft_wrap=True)

    def _err(self, text: str) -> None:
        style = "yellow" if text.startswith("warning") else "red"
        self.console.print(Text(safe_text(text), style=style), soft_wrap=True)

    # --- ':' commands ----------------------------------------------------------------
    def command(self, line: str) -> bool:
        """Run a ':' command; False when the session should end."""
        parts = line.split()
        cmd, args = parts[0], parts[1:]
        if cmd in (":quit", ":exit", ":q"):
            return False
        if cmd == ":help":
            self.console.print(HELP, markup=False, highlight=False)
        elif cmd == ":reset":
            self.session.reset()
            self._out("all names forgotten")
        elif cmd == ":vars":
            self.console.print(self.vars_table())
        elif cmd == ":plot":
            self.plot(line)
        elif cmd in (":graph", ":dot", ":html"):
            if not args or (cmd == ":html" and len(args) < 2):
                self._err(f"error: usage: {cmd} NAME" + {":dot": " [FILE]", ":html": " FILE"}
                          .get(cmd, ""))
                return True
            t = self.session.env.get(args[0])
            if not isinstance(t, Tensor):
                self._err(f"error: '{args[0]}' is not a tensor in this session")  # (escaped there)
                return True
            view = GraphView(args[0], t)
            if cmd == ":graph":
                from ..out.render import grad_fn_tree

                self.console.print(grad_fn_tree(view))
            else:
                self.dot(view, args[1] if len(args) > 1 else None, option=cmd)
        else:
            close = suggest(cmd, COMMANDS)
            self._err(f"error: unknown command {cmd}" + (f"; did you mean {close}?" if close else "")
                      + "; try :help")
        return True

    def dot(self, view: GraphView, path: str | None, option: str = ":dot") -> None:
        from ..out.pictures import graph_text, write_graph

        try:
            if path is None:
                self._out(graph_text(view, "dot"))
            else:
                if option == ":html" and not path.lower().endswith((".html", ".htm")):
                    raise DdxUsageError(f":html {path}: the page's name ends in .html")
                write_graph(view, path, option=option)
                self._out(f"wrote {path}")
        except DdxError as exc:
            self._err(format_error(exc))

    def plot(self, line: str) -> None:
        import shlex

        from .plot import repl_plot

        try:
            words = shlex.split(line)[1:]
        except ValueError as exc:
            self._err(f"error: :plot: {exc}")
            return
        try:
            wrote = repl_plot(words, self.session.env, self.console,
                              color=self.console.color_system is not None
                              and not self.console.no_color)
            if wrote is not None:
                self._out(f"wrote {wrote}")
        except DdxError as exc:
            self._err(format_error(exc))

    def vars_table(self) -> Table:
        table = Table(box=None, header_style="bold")
        for col in ("name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "grad"):
            table.add_column(col)
        for name, t in self.session.tensors():
            cells = (name, fmt.shape(t.value), str(t.value.dtype), str(t.requires_grad),
                     str(t.is_leaf), t.grad_fn.name if t.grad_fn is not None else "None",
                     fmt.value(t.grad, width=40))
            table.add_row(*(Text(safe_text(c)) for c in cells))
        return table

    # --- the loop --------------------------------------------------------------------
    def handle(self, text: str) -> bool:
        """Run what was typed; an error of any kind, or Ctrl-C, never ends the session."""
        stripped = text.strip()
        if not stripped:
            return True
        try:
            if stripped.startswith(":"):
                return self.command(stripped)
            self.session.run(text)
        except KeyboardInterrupt:
            self._err("KeyboardInterrupt")  # (the statement's changes were undone)
        except Exception as exc:  # noqa: BLE001 - the session's boundary
            from .session import foreign_error

            self._err(format_error(foreign_error(exc, stripped)))
        return True

    def loop(self) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        path = history_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            history = InMemoryHistory()
        prompt = PromptSession(history=history, completer=Completer(self.session),
                               complete_while_typing=False)
        self.console.print(Text("ddx repl: PyTorch's autograd on your own expressions. "
                                ":help for help, :quit or Ctrl-D to leave.", style="dim"))
        while True:
            try:
                first = prompt.prompt(">>> ")
                lines = [first]
                state = Continuation()
                more = state.add(first)
                while more:
                    # (auto-indent after a ':' line; a blank line ends the block)
                    line = prompt.prompt("... ", default=state.indent() if state.block else "")
                    if not line.strip() and state.block and state.depth == 0:
                        break
                    lines.append(line)
                    more = state.add(line)
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            try:
                if not self.handle("\n".join(lines)):
                    return 0
            except KeyboardInterrupt:  # Ctrl-C while a statement runs: it is undone
                self._err("KeyboardInterrupt: the statement was stopped and undone")


def members_of(session: Session, path: str) -> list[str]:
    """What follows ``path.`` in completion: the members of the object ``path`` names,
    found without running anything (names, modules, attributes only; no calls)."""
    from ..graph.namespaces import MODULES, Namespace
    from ..graph.tensor import AccumulateGrad, Function
    from . import pymodules
    from .methods import TENSOR_ATTRS, TENSOR_METHODS
    from .pyvalues import Instance

    parts = path.split(".")
    env = session.env
    obj = env.get(parts[0], MODULES.get(parts[0], pymodules.MODULES.get(parts[0])))
    if obj is None:
        return []
    for name in parts[1:]:
        if isinstance(obj, Namespace):
            obj = obj.children.get(name, pymodules.EXTRA.get(obj.path, {}).get(name))
        elif isinstance(obj, pymodules.PyModule):
            obj = obj.members.get(name)
        elif isinstance(obj, Tensor) and name in ("grad_fn", "data"):
            obj = obj.grad_fn if name == "grad_fn" else obj
        elif isinstance(obj, Tensor) and name == "grad":
            obj = None
        elif isinstance(obj, Instance):
            obj = obj.attrs.get(name)
        else:
            return []
        if obj is None:
            return []
    if isinstance(obj, Namespace):
        from ..graph import namespaces
        from ..graph.functions import FUNCTIONS

        names = list(obj.children) + list(pymodules.EXTRA.get(obj.path, {}))
        names += [f + "(" for f in FUNCTIONS if obj.space in namespaces.spaces_of(f)]
        return sorted(set(names))
    if isinstance(obj, pymodules.PyModule):
        return sorted(obj.members)
    if isinstance(obj, Tensor):
        from ..graph import namespaces
        from ..graph.functions import FUNCTIONS

        return sorted(set(TENSOR_ATTRS) | {m + "(" for m in TENSOR_METHODS} |
                      {f + "(" for f in FUNCTIONS if "Tensor" in namespaces.spaces_of(f)})
    if isinstance(obj, (Function, AccumulateGrad)):
        return ["next_functions", "name()", "register_hook(", "register_prehook("] + (
            ["variable"] if isinstance(obj, AccumulateGrad) else [])
    if isinstance(obj, list):
        return ["append(", "extend(", "pop(", "insert(", "index(", "count(", "copy(",
                "clear(", "reverse("]
    if isinstance(obj, dict):
        return ["items()", "keys()", "values()", "get(", "update(", "pop("]
    if isinstance(obj, Instance):
        return sorted(set(obj.attrs) | {k for k in obj.cls.scope if not k.startswith("__")})
    return list(ATTRS)


def _completer_base():
    from prompt_toolkit.completion import Completer as Base

    return Base


class Completer(_completer_base()):
    """Names, functions, attributes after '.', and ':' commands."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_completions(self, document, complete_event):
        from prompt_toolkit.completion import Completion

        from ..graph.functions import FUNCTIONS
        from .surface import REPL_FUNCTIONS

        before = document.text_before_cursor
        if before.lstrip().startswith(":") and " " not in before.strip():
            word = before.strip()
            for c in COMMANDS:
                if c.startswith(word):
                    yield Completion(c, start_position=-len(word))
            return
        m = re.search(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.([A-Za-z_]*)$", before)
        if m:
            word = m.group(2)
            for a in members_of(self.session, m.group(1)):
                if a.startswith(word):
                    yield Completion(a, start_position=-len(word))
            return
        m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)$", before)
        if not m:
            return
        word = m.group(1)
        names = list(self.session.env) + [f + "(" for f in FUNCTIONS] + \
            [f + "(" for f in REPL_FUNCTIONS] + ["requires_grad=", "retain_graph=", "gradient=",
                                                 "dtype=", "true", "false", "no_grad", "torch"]
        for n in sorted(set(names)):
            if n.startswith(word) and n != word:
                yield Completion(n, start_position=-len(word))


def run_stdin_like_script(no_color: bool = False) -> int:
    """`ddx repl` with piped input: run it as a script (no prompts)."""
    session = Session(lambda t: _write(sys.stdout, t), lambda t: _write(sys.stderr, t))
    return 1 if session.run_script(sys.stdin.read()) else 0


def _write(stream, text: str) -> None:
    stream.write(safe_text(text) + "\n")
    stream.flush()
