"""Pure functions from a Trace to Rich renderables; they never compute gradients and never print."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from . import fmt
from .tensor import Tensor

MAX_ROWS = 40
MAX_DEPTH = 12
MAX_TREE_NODES = 200

STYLE_LEAF = "bold blue"
STYLE_OP = "yellow"
STYLE_OUT = "bold green"
STYLE_BAD = "bold red"


def _val(arr, *, width: int = 40, exact: bool = True) -> Text:
    text = Text(fmt.value(arr, width=width, exact=exact))
    if arr is not None and fmt.nonfinite(arr):
        text.stylize(STYLE_BAD)
    return text


def _name_style(trace, t: Tensor) -> str:
    if t is trace.output:
        return STYLE_OUT
    if t.is_leaf and t.requires_grad:
        return STYLE_LEAF
    return STYLE_OP if t.grad_fn is not None else "dim"


def forward_table(trace) -> Table:
    """Every named and intermediate node: name, op, shape, value, requires_grad."""
    table = Table(title="forward", box=box.SIMPLE_HEAD, title_justify="left", expand=False)
    table.add_column("node", overflow="fold", max_width=28)
    table.add_column("op")
    table.add_column("shape")
    table.add_column("value", overflow="fold")
    table.add_column("requires_grad")
    nodes = trace.nodes
    shown = nodes if len(nodes) <= MAX_ROWS else nodes[: MAX_ROWS // 2] + nodes[-MAX_ROWS // 2:]
    for i, t in enumerate(shown):
        if len(nodes) > MAX_ROWS and i == MAX_ROWS // 2:
            table.add_row(Text(f"... {len(nodes) - MAX_ROWS} more nodes", style="dim"))
        name = t.display if t is not trace.output else f"{trace.output_name} = {t.display}" \
            if t.name is None else t.display
        op = t.grad_fn.name if t.grad_fn is not None else ("leaf" if t.op == "leaf" else t.op)
        table.add_row(Text(name, style=_name_style(trace, t)), op, fmt.shape(t.value),
                      _val(t.value), str(t.requires_grad))
    return table


def _tree_label(trace, t: Tensor | None, const=None) -> Text:
    if t is None:
        return Text("None", style="dim")
    label = Text()
    name = t.display
    if t is trace.output and t.name is None:
        name = f"{trace.output_name} = {name}"
    if len(name) > 24:
        name = name[:21] + "..."
    label.append(name, style=_name_style(trace, t))
    label.append("  ")
    if t.grad_fn is not None:
        label.append(t.grad_fn.name, style=STYLE_OP)
    elif t.requires_grad:
        label.append("AccumulateGrad", style=STYLE_LEAF)
    else:
        label.append("None (constant)", style="dim")
    label.append("  value ", style="dim")
    label.append_text(_val(t.value, width=30, exact=False))
    if trace.backward_done and t.requires_grad:
        label.append("  grad ", style="dim")
        label.append_text(_val(trace.grad_of(t), width=30, exact=False))
    return label


def grad_fn_tree(trace) -> Tree:
    """The grad_fn tree rooted at the output, built with an explicit stack and depth-capped."""
    root_t = trace.output
    tree = Tree(_tree_label(trace, root_t), guide_style="dim")
    seen: set[int] = set()
    count = 0
    stack = [(root_t, tree, 0)]
    while stack:
        t, branch, depth = stack.pop()
        fn = t.grad_fn
        if fn is None:
            continue
        if id(fn) in seen:
            branch.add(Text("(inputs shown above)", style="dim"))
            continue
        seen.add(id(fn))
        if depth >= MAX_DEPTH or count >= MAX_TREE_NODES:
            branch.add(Text(f"... deeper nodes not shown (depth > {MAX_DEPTH} or over "
                            f"{MAX_TREE_NODES} nodes)", style="dim"))
            continue
        children = []
        for child in fn.inputs:
            if child.requires_grad:
                sub = branch.add(_tree_label(trace, child))
                children.append((child, sub, depth + 1))
            else:
                branch.add(_tree_label(trace, None).append(
                    f"  (constant {fmt.value(child.value, width=20)})", style="dim"))
            count += 1
        stack.extend(reversed(children))
    return tree


def gradient_table(trace) -> Table:
    table = Table(title=f"gradients of {escape(trace.output_name)}", box=box.SIMPLE_HEAD,
                  title_justify="left")
    table.add_column("leaf", style=STYLE_LEAF)
    table.add_column("shape")
    table.add_column(f"d{trace.output_name}/d(leaf)", overflow="fold")
    for name, t in trace.leaves.items():
        g = t.grad
        table.add_row(name, fmt.shape(t.value),
                      _val(g, width=50) if g is not None else Text("None (not used)", "dim"))
    for t in trace.nodes:
        if t.retains_grad and t.grad is not None:
            table.add_row(Text(t.display, style=STYLE_OP), fmt.shape(t.value),
                          _val(t.grad, width=50))
    return table


def one_liner(trace) -> Group:
    parts = [forward_table(trace), Text("grad_fn tree", style="bold"), grad_fn_tree(trace)]
    if trace.backward_done:
        parts.append(gradient_table(trace))
    elif not trace.output.requires_grad:
        parts.append(Text("no gradients: nothing in this expression requires grad", style="dim"))
    return Group(*parts)
