"""Pure functions from a Trace to Rich renderables; they never compute gradients and never print.

Every text goes in as a ``Text`` made by ``_t``: escaped for the terminal (``\\x1b``, ``\\u202e``)
and never read as Rich markup, whatever console prints it."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from .. import fmt
from ..graph.tensor import Tensor
from ..textsafe import safe_text

MAX_ROWS = 40
MAX_DEPTH = 12
MAX_TREE_NODES = 200

STYLE_LEAF = "bold blue"
STYLE_OP = "yellow"
STYLE_OUT = "bold green"
STYLE_BAD = "bold red"


def _t(text, style: str = "") -> Text:
    """User or ddx text as a Text: control and bidi characters escaped, no markup."""
    return Text(safe_text(str(text)), style=style)


def _val(arr, *, width: int = 40, exact: bool = True) -> Text:  # noqa: D103
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
        table.add_row(_t(name, _name_style(trace, t)), _t(op), _t(fmt.shape(t.value)),
                      _val(t.value), _t(t.requires_grad))
    return table


def _tree_label(trace, t: Tensor | None, const=None) -> Text:
    if t is None:
        return Text("None", style="dim")
    label = Text()
    name = safe_text(t.display)
    if t is trace.output and t.name is None:
        name = f"{safe_text(trace.output_name)} = {name}"
    if len(name) > 24:
        name = name[:21] + "..."
    label.append(name, style=_name_style(trace, t))
    label.append("  ")
    if t.grad_fn is not None:
        label.append(safe_text(t.grad_fn.name), style=STYLE_OP)
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
    table = Table(title=_t(f"gradients of {trace.output_name}"), box=box.SIMPLE_HEAD,
                  title_justify="left")
    table.add_column("leaf", style=STYLE_LEAF)
    table.add_column("shape")
    table.add_column(_t(f"d{trace.output_name}/d(leaf)"), overflow="fold")
    for name, t in trace.leaves.items():
        g = t.grad
        table.add_row(_t(name), _t(fmt.shape(t.value)),
                      _val(g, width=50) if g is not None else Text("None (not used)", "dim"))
    for t in trace.nodes:
        if t.retains_grad and t.grad is not None:
            table.add_row(_t(t.display, STYLE_OP), _t(fmt.shape(t.value)),
                          _val(t.grad, width=50))
    return table


def one_liner(trace) -> Group:
    parts = [forward_table(trace), Text("grad_fn tree", style="bold"), grad_fn_tree(trace)]
    if trace.backward_done:
        parts.append(gradient_table(trace))
    elif not trace.output.requires_grad:
        parts.append(Text("no gradients: nothing in this expression requires grad", style="dim"))
    parts.extend(extras(trace))
    return Group(*parts)


def _num(v) -> str:
    return fmt.value(v, width=40, exact=False)


def forward_view(trace, result: dict) -> Group:
    table = Table(title="reverse mode vs forward mode", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("leaf", "reverse", "forward"):
        table.add_column(col, overflow="fold")
    for name, g in result["gradients"].items():
        table.add_row(_t(name, STYLE_LEAF), _val(trace.grads[name]), _val(g))
    max_abs, max_rel = result["difference"]
    rev, fwd = result["cost"]["reverse"], result["cost"]["forward"]
    cost = Table(box=box.SIMPLE_HEAD, title="cost", title_justify="left")
    cost.add_column("mode")
    cost.add_column("passes")
    cost.add_column("primitive ops")
    cost.add_row(_t("reverse"), _t("1 forward + 1 backward"),
                 _t(f"{rev['forward_ops']} forward + {rev['vjps']} VJPs"))
    cost.add_row(_t("forward"), _t(f"{fwd['passes']} (one per input element)"),
                 _t(f"{fwd['ops']} JVPs"))
    return Group(table, Text(f"max |reverse - forward| = {max_abs:.3g}   max relative = "
                             f"{max_rel:.3g}"), cost)


def check_view(trace, result: dict) -> Group:
    table = Table(title=_t(f"finite differences ({result['method']}, {result['step_rule']})"),
                  box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("leaf", "reverse", "finite difference"):
        table.add_column(col, overflow="fold")
    for name, g in result["gradients"].items():
        table.add_row(_t(name, STYLE_LEAF), _val(trace.grads[name]), _val(g, exact=False))
    verdict = Text("ok: " if result["ok"] else "MISMATCH: ",
                   style="bold green" if result["ok"] else STYLE_BAD)
    verdict.append(f"max abs error {result['max_abs_error']:.3g}, max relative error "
                   f"{result['max_rel_error']:.3g} (tolerance rtol {result['rtol']:g}, "
                   f"atol {result['atol']:g})")
    parts = [table, verdict]
    if "warning" in result:
        parts.append(_t("warning: " + result["warning"], "yellow"))
    return Group(*parts)


def jacobian_view(trace, result: dict) -> Group:
    parts = [_t(f"Jacobian of {trace.output_name} (shape {fmt.shape(trace.output.value)})",
                "bold")]
    for name, jac in result["reverse"].items():
        parts.append(Text.assemble(_t(f"d{trace.output_name}/d{name}", STYLE_LEAF),
                                   f"  shape {fmt.shape(jac)}"))
        parts.append(Text(fmt.value(jac, threshold=64, width=76, exact=False)))
    rev, fwd = result["cost"]["reverse"], result["cost"]["forward"]
    cheaper = "reverse" if rev["passes"] < fwd["passes"] else (
        "forward" if fwd["passes"] < rev["passes"] else "neither (same number of passes)")
    max_abs, _ = result["difference"]
    parts.append(Text(f"reverse: {rev['passes']} backward passes (one per output element); "
                      f"forward: {fwd['passes']} passes (one per input element); cheaper here: "
                      f"{cheaper}. max |reverse - forward| = {max_abs:.3g}"))
    return Group(*parts)


def hessian_view(trace, result: dict) -> Group:
    parts = [_t(f"Hessian of {trace.output_name} ({result['method']})", "bold")]
    for a, row in result["hessian"].items():
        for b, block in row.items():
            parts.append(_t(f"d2{trace.output_name}/d{a}d{b}", STYLE_LEAF))
            parts.append(Text(fmt.value(block, threshold=64, width=76, exact=False)))
    ok = result["check"]["ok"]
    error, step = result["check"]["max_abs_error"], result["check"]["step"]
    if error != error:  # nan: the gradient is not finite on one side or both
        parts.append(Text(f"unchecked: the gradient is not finite near this point, so its "
                          f"finite differences say nothing (step {step:g})", style=STYLE_BAD))
        return Group(*parts)
    parts.append(Text(("ok" if ok else "MISMATCH") + ": finite differences of the gradient agree"
                      f" to {error:.3g} (step {step:g})", style="green" if ok else STYLE_BAD))
    return Group(*parts)


def explain_view(trace, result: dict) -> Group:
    out = safe_text(trace.output_name)
    parts = [Text("chain rule, path by path", style="bold")]
    for name, entry in result["leaves"].items():
        head = _t(f"d{out}/d{name}", STYLE_LEAF)
        if entry["mode"] == "unused":
            parts.append(head.append(" = 0: no path leads from the output to it", style="dim"))
            continue
        if entry["mode"] == "nodes":
            why = ("the values are tensors" if entry.get("path_count", 0) <= 32
                   else f"{entry['path_count']} paths is too many to list")
            parts.append(head.append(f" = {_num(entry['gradient'])}  ({why}: see the per-node "
                                     "steps below)", style="default"))
            continue
        many = len(entry["paths"]) > 1
        for k, path in enumerate(entry["paths"], 1):
            line = Text()
            line.append_text(head.copy() if not many else Text(f"  path {k}: ", style="dim"))
            if not many:
                line.append(" = ")
            for j, f in enumerate(path["factors"]):
                if j:
                    line.append(" × ")
                line.append(safe_text(f"[{f['node']}] "), style=STYLE_OP)
                line.append(safe_text(str(f["local"])))
                if f["local"] != fmt.number(f["value"]):
                    line.append(f" = {_num(f['value'])}")
            line.append(f" → {_num(path['product'])}", style="bold")
            if many and k == 1:
                parts.append(head.copy().append(f": {len(entry['paths'])} paths, one per use",
                                                style="default"))
            parts.append(line)
        if many:
            parts.append(Text(f"  sum of the paths = {_num(entry['sum'])}", style="bold"))
    steps = result["steps"]
    if any(e["mode"] == "nodes" for e in result["leaves"].values()) or any(
            s["summed_axes"] for s in steps):
        table = Table(title="per node: upstream gradient × local derivative = what the input "
                            "gets", box=box.SIMPLE_HEAD, title_justify="left")
        for col in ("node", "input", "local", "upstream", "gets", "broadcast"):
            table.add_column(col, overflow="fold")
        for s in steps[:MAX_ROWS]:
            table.add_row(_t(f"{s['node']} {s['at']}", STYLE_OP), _t(s["input"]),
                          _t(s["local"]), _val(s["upstream"], width=24, exact=False),
                          _val(s["gets"], width=24, exact=False),
                          _t(f"summed over axes {tuple(s['summed_axes'])}" if s["summed_axes"]
                             else ""))
        parts.append(table)
    kinks = {}  # each kinked node once, with what PyTorch takes there
    for s in steps:
        if s.get("kink"):
            kinks.setdefault(f"[{s['node']}] {s['at']}", s["kink"])
    for where, note in kinks.items():
        parts.append(_t(f"kink at {where}: {note}", "yellow"))
    bad = result["nonfinite"]
    if bad:
        parts.append(_t(f"nan/inf first arose in the {bad['pass']} pass at "
                        f"[{bad['node']}] {bad['at']}: {bad['why']}", STYLE_BAD))
        parts.append(_t(f"hint: {bad['hint']}", "yellow"))
    return Group(*parts)


def extras(trace) -> list:
    views = {"forward": forward_view, "check": check_view, "jacobian": jacobian_view,
             "hessian": hessian_view, "explain": explain_view}
    return [views[k](trace, v) for k, v in trace.extras.items()]
