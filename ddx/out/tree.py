"""The grad_fn tree laid out at a width: each label folds rather than being cropped.

A label that does not fit on one line folds: the node and its grad_fn on the first line, its
value and gradient under it (an array wraps between elements); a name too long for the line
is cut with an ellipsis. The gradient is the last thing to go. Built with an explicit stack,
depth-capped (deeper at wider widths), so any depth of graph renders."""

from __future__ import annotations

from rich.text import Text

from .. import fmt
from ..graph.tensor import Tensor
from ..textsafe import safe_text
from . import numbers
from .fit import ELLIPSIS, STYLE_BAD, Fitted, cut

MAX_DEPTH = 12
MAX_TREE_NODES = 200
NARROW = 60  # below this width the guides are two cells wide instead of four
STYLE_LEAF = "bold blue"
STYLE_OP = "yellow"
STYLE_OUT = "bold green"


def name_style(trace, t: Tensor) -> str:
    if t is trace.output:
        return STYLE_OUT
    if t.is_leaf and t.requires_grad:
        return STYLE_LEAF
    return STYLE_OP if t.grad_fn is not None else "dim"


def _number(arr, precision: int, width: int) -> Text:
    text = Text("\n".join(numbers.fitted(arr, precision, width)))
    if arr is not None and fmt.nonfinite(arr):
        text.stylize(STYLE_BAD)
    return text


def _head(trace, t: Tensor) -> tuple[Text, Text]:
    name = safe_text(t.display)
    if t is trace.output and t.name is None:
        name = f"{safe_text(trace.output_name)} = {name}"
    if t.grad_fn is not None:
        op = Text(safe_text(t.grad_fn.name), style=STYLE_OP)
    elif t.requires_grad:
        op = Text("AccumulateGrad", style=STYLE_LEAF)
    else:
        op = Text("None (constant)", style="dim")
    return Text(name, style=name_style(trace, t)), op


def label_lines(trace, t: Tensor, width: int, precision: int, rest: int | None = None
                ) -> list[Text]:
    """A node's label as lines: the first of at most ``width`` cells, the others (indented
    under it) of at most ``rest``."""
    rest = width if rest is None else rest
    name, op = _head(trace, t)
    fields = [("value ", t.value)]
    if trace.backward_done and t.requires_grad:
        fields.append(("grad ", trace.grad_of(t)))
    one = Text.assemble(name, "  ", op)
    for word, arr in fields:
        got = numbers.lines(arr, precision, 10 ** 6)
        one.append("  ")
        one.append(word, style="dim")
        one.append_text(_number(arr, precision, 10 ** 6) if len(got) == 1 else Text("\n"))
    if one.cell_len <= width and "\n" not in one.plain:
        return [one]
    # fold: name and grad_fn first (the name cut if need be), then value and grad under it
    room = max(width - 2 - op.cell_len, min(8, name.cell_len))
    head = cut(Text.assemble(cut(name, room), "  ", op), width)
    out = [head]
    inner = max(rest - 2, 1)
    together = Text("  ")
    for k, (word, arr) in enumerate(fields):
        if k:
            together.append("  ")
        together.append(word, style="dim")
        together.append_text(_number(arr, precision, 10 ** 6))
    if together.cell_len <= rest and "\n" not in together.plain:
        return out + [together]
    for word, arr in fields:
        lead = Text("  ").append(word, style="dim")
        body = _number(arr, precision, max(inner - len(word), 1)).split("\n")
        for j, line in enumerate(body):
            out.append((lead if j == 0 else Text(" " * lead.cell_len)) + line)
    return [out[0]] + [cut(line, rest) for line in out[1:]]


def _constant_lines(child, precision: int, width: int, rest: int) -> list[Text]:
    """A constant input: ``None  (constant 2)``, its value folded under it if need be."""
    got = numbers.lines(child.value, precision, 10 ** 6)
    one = Text(f"None  (constant {got[0]})", style="dim")
    if len(got) == 1 and one.cell_len <= width:
        return [one]
    lines = [Text("None  (constant)", style="dim")]
    lines += [Text("  " + line, style="dim")
              for line in numbers.fitted(child.value, precision, max(rest - 2, 8))]
    return lines


def tree_lines(trace, width: int, precision: int = numbers.DEFAULT_PRECISION) -> list[Text]:
    """The grad_fn tree rooted at the output, as lines that fit ``width``."""
    unit = 4 if width >= NARROW else 2
    tee, last, bar, gap = (("├── ", "└── ", "│   ", "    ") if unit == 4
                           else ("├ ", "└ ", "│ ", "  "))
    max_depth = max(1, min(MAX_DEPTH, (width - 16) // unit))
    lines: list[Text] = []
    seen: set[int] = set()
    count = 0
    # (tensor or a ready label, depth, guide before the connector, connector, guide for children)
    stack: list = [(trace.output, 0, "", "", "")]
    while stack:
        item, depth, before, connector, below = stack.pop()
        prefix = Text(before + connector, style="dim")
        if isinstance(item, Text):
            lines.append(prefix + cut(item, max(width - prefix.cell_len, 4)))
            continue
        if isinstance(item, tuple):  # a constant input: no grad_fn, no children
            more = Text(below + gap, style="dim")
            got = _constant_lines(item[1], precision, max(width - prefix.cell_len, 8),
                                  max(width - more.cell_len, 8))
            lines.append(prefix + got[0])
            lines.extend(more + line for line in got[1:])
            continue
        t = item
        fn = t.grad_fn
        children: list = []
        if fn is not None and id(fn) in seen:
            children = [Text("(inputs shown above)", style="dim")]
        elif fn is not None:
            seen.add(id(fn))
            if depth >= max_depth or count >= MAX_TREE_NODES:
                children = [Text(f"{ELLIPSIS} deeper nodes not shown (depth > {max_depth} or "
                                 f"over {MAX_TREE_NODES} nodes)", style="dim")]
            else:
                for child in fn.inputs:
                    children.append(child if child.requires_grad else ("constant", child))
                    count += 1
        more = Text(below + (bar if children else gap), style="dim")
        label = label_lines(trace, t, max(width - prefix.cell_len, 8), precision,
                            max(width - more.cell_len, 8))
        lines.append(prefix + label[0])
        lines.extend(more + line for line in label[1:])
        for k in range(len(children) - 1, -1, -1):
            end = k == len(children) - 1
            stack.append((children[k], depth + 1, below, last if end else tee,
                          below + (gap if end else bar)))
    return lines


def grad_fn_tree(trace, *, precision: int = numbers.DEFAULT_PRECISION) -> Fitted:
    """The grad_fn tree as a renderable that fits the width it is printed at."""
    def build(width: int) -> Text:
        return Text("\n", no_wrap=True, overflow="ellipsis").join(
            tree_lines(trace, width, precision))
    return Fitted(build)
