"""Pure functions from a Trace to Rich renderables; they never compute gradients and never print.

Every view fits the width it is printed at (``fit.Fitted``): tables drop or fold their least
important columns first and say so, the tree folds its labels, numbers are never cut. Numbers
use one format (``numbers``: ``precision`` significant digits). Every text goes in as a
``Text`` made by ``_t``: escaped for the terminal (``\\x1b``, ``\\u202e``) and never read as
Rich markup, whatever console prints it."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from .. import fmt
from ..textsafe import safe_text
from . import numbers
from .fit import STYLE_BAD, Column, Fitted, fit_table
from .grids import hessian_grids, jacobian_grids
from .notebook import View
from .tree import MAX_DEPTH, MAX_TREE_NODES, STYLE_LEAF, STYLE_OP, STYLE_OUT, name_style
from .tree import grad_fn_tree as grad_fn_tree

__all__ = ["one_liner", "forward_table", "grad_fn_tree", "gradient_table", "extras",
           "MAX_DEPTH", "MAX_TREE_NODES", "STYLE_OUT"]

MAX_ROWS = 40
P = numbers.DEFAULT_PRECISION
NO_REAL_VALUE = "nan (no real value)"


def _t(text, style: str = "") -> Text:
    """User or ddx text as a Text: control and bidi characters escaped, no markup."""
    return Text(safe_text(str(text)), style=style)


def _value_cell(value):
    """A forward value; a scalar nan says that there is no real value."""
    if value is not None and getattr(value, "ndim", 1) == 0 and value.dtype.kind == "f" \
            and value != value:
        return Text(NO_REAL_VALUE, style=STYLE_BAD)
    return value


def _node_name(trace, t) -> str:
    if t is trace.output and t.name is None:
        return f"{trace.output_name} = {t.display}"
    return t.display


def forward_table(trace, *, precision: int = P) -> Fitted:
    """Every named and intermediate node: name, op, shape, value, requires_grad."""
    nodes = list(trace.nodes)
    if all(t is not trace.output for t in nodes):  # a constant output is no recorded node
        nodes.append(trace.output)
    shown = nodes if len(nodes) <= MAX_ROWS else nodes[: MAX_ROWS // 2] + nodes[-MAX_ROWS // 2:]
    cols = [Column("node", kind="name", least=6), Column("op", least=12),
            Column("shape", least=5), Column("value", kind="number", least=8),
            Column("requires_grad", least=4)]
    for i, t in enumerate(shown):
        if len(nodes) > MAX_ROWS and i == MAX_ROWS // 2:
            more = Text(f"… {len(nodes) - MAX_ROWS} more nodes", style="dim")
            for c, cell in zip(cols, (more, "", "", Text(""), "")):
                c.cells.append(cell)
                c.styles.append("")
        op = t.grad_fn.name if t.grad_fn is not None else ("leaf" if t.op == "leaf" else t.op)
        for c, cell, style in zip(cols, (_t(_node_name(trace, t)), _t(op), _t(fmt.shape(t.value)),
                                         _value_cell(t.value), _t(t.requires_grad)),
                                  (name_style(trace, t), "", "", "", "")):
            c.cells.append(cell)
            c.styles.append(style)
    plan = [("drop", 4), ("shrink", 0, 12), ("drop", 2), ("shrink", 0)]
    return Fitted(lambda width: Group(*fit_table("forward", cols, width, precision, plan)))


def gradient_table(trace, *, precision: int = P) -> Fitted:
    """The output's gradient for every leaf that requires grad; retained intermediates apart."""
    out = trace.output_name
    leaf = [Column("leaf", kind="name", least=6), Column("shape", least=5),
            Column(f"d{out}/d(leaf)", kind="number", least=8)]
    for name, t in trace.leaves.items():
        g = t.grad
        for c, cell in zip(leaf, (_t(name, STYLE_LEAF), _t(fmt.shape(t.value)),
                                  g if g is not None else Text("None (not used)", "dim"))):
            c.cells.append(cell)
    mids = [Column("node", kind="name", least=6), Column("op", least=6), Column("shape", least=5),
            Column(f"d{out}/d(node)", kind="number", least=8)]
    for t in trace.nodes:
        if t.retains_grad and t.grad is not None and not t.is_leaf:
            op = t.grad_fn.name if t.grad_fn is not None else "leaf"
            for c, cell in zip(mids, (_t(t.display, STYLE_OP), _t(op), _t(fmt.shape(t.value)),
                                      t.grad)):
                c.cells.append(cell)

    def build(width: int) -> Group:
        parts = fit_table(_t(f"gradients of {out}"), leaf, width, precision, [("drop", 1)])
        if mids[0].cells:
            parts += fit_table(_t(f"retained gradients of {out} (intermediate nodes)"), mids,
                               width, precision, [("drop", 2), ("drop", 1)])
        return Group(*parts)
    return Fitted(build)


def one_liner(trace, *, precision: int = P) -> View:
    """The one-liner's view: forward values, the grad_fn tree, the gradients, each mode asked
    (a Rich renderable that also displays itself in a notebook)."""
    parts = [forward_table(trace, precision=precision), Text("grad_fn tree", style="bold"),
             grad_fn_tree(trace, precision=precision)]
    if trace.backward_done:
        parts.append(gradient_table(trace, precision=precision))
    elif not trace.output.requires_grad:
        parts.append(Text("no gradients: nothing in this expression requires grad", style="dim"))
    parts.extend(extras(trace, precision=precision))
    return View(*parts)


def _num(v, precision: int = P) -> str:
    return numbers.text(v, precision, 40)


def _compare(title, names: list[str], columns: dict, precision: int) -> Fitted:
    """A leaf column and a number column per mode."""
    cols = [Column("leaf", kind="name", least=6)] + [
        Column(head, kind="number", least=8) for head in columns]
    for name in names:
        cols[0].cells.append(_t(name, STYLE_LEAF))
        for c, values in zip(cols[1:], columns.values()):
            c.cells.append(values[name])
    return Fitted(lambda width: Group(*fit_table(title, cols, width, precision)))


def forward_view(trace, result: dict, *, precision: int = P) -> Group:
    names = list(result["gradients"])
    table = _compare("reverse mode vs forward mode", names,
                     {"reverse": trace.grads, "forward": result["gradients"]}, precision)
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
    return Group(table, Text(f"max |reverse - forward| = {numbers.scalar(max_abs, 3)}   "
                             f"max relative = {numbers.scalar(max_rel, 3)}"), cost)


def check_view(trace, result: dict, *, precision: int = P) -> Group:
    names = list(result["gradients"])
    table = _compare(_t(f"finite differences ({result['method']}, {result['step_rule']})"),
                     names, {"reverse": trace.grads, "finite difference": result["gradients"]},
                     precision)
    verdict = Text("ok: " if result["ok"] else "MISMATCH: ",
                   style="bold green" if result["ok"] else STYLE_BAD)
    verdict.append(f"max abs error {result['max_abs_error']:.3g}, max relative error "
                   f"{result['max_rel_error']:.3g} (tolerance rtol {result['rtol']:g}, "
                   f"atol {result['atol']:g})")
    parts = [table, verdict]
    if "warning" in result:
        parts.append(_t("warning: " + result["warning"], "yellow"))
    return Group(*parts)


def _leaf_values(trace) -> dict:
    return {name: t.value for name, t in trace.leaves.items()}


def jacobian_view(trace, result: dict, *, precision: int = P) -> Group:
    out = trace.output_name
    parts = [_t(f"Jacobian of {out} (shape {fmt.shape(trace.output.value)})", "bold"),
             jacobian_grids(out, tuple(trace.output.value.shape), result["reverse"],
                            _leaf_values(trace), precision)]
    rev, fwd = result["cost"]["reverse"], result["cost"]["forward"]
    cheaper = "reverse" if rev["passes"] < fwd["passes"] else (
        "forward" if fwd["passes"] < rev["passes"] else "neither (same number of passes)")
    max_abs, _ = result["difference"]
    parts.append(Text(f"reverse: {rev['passes']} backward passes (one per output element); "
                      f"forward: {fwd['passes']} passes (one per input element); cheaper here: "
                      f"{cheaper}. max |reverse - forward| = {numbers.scalar(max_abs, 3)}"))
    return Group(*parts)


def hessian_view(trace, result: dict, *, precision: int = P) -> Group:
    out = trace.output_name
    parts = [_t(f"Hessian of {out} ({result['method']})", "bold"),
             hessian_grids(out, result["hessian"], _leaf_values(trace), precision)]
    ok = result["check"]["ok"]
    error, step = result["check"]["max_abs_error"], result["check"]["step"]
    if error != error:  # nan: the gradient is not finite on one side or both
        parts.append(Text(f"unchecked: the gradient is not finite near this point, so its "
                          f"finite differences say nothing (step {step:g})", style=STYLE_BAD))
        return Group(*parts)
    parts.append(Text(("ok" if ok else "MISMATCH") + ": finite differences of the gradient agree"
                      f" to {error:.3g} (step {step:g})", style="green" if ok else STYLE_BAD))
    return Group(*parts)


def explain_view(trace, result: dict, *, precision: int = P) -> Group:
    from .explainview import explain_parts

    return Group(*explain_parts(trace, result, precision))


def extras(trace, *, precision: int = P) -> list:
    views = {"forward": forward_view, "check": check_view, "jacobian": jacobian_view,
             "hessian": hessian_view, "explain": explain_view}
    return [views[k](trace, v, precision=precision) for k, v in trace.extras.items()]
