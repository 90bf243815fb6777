"""A trace's repr: its expression, value and gradients, short enough for a prompt or a notebook."""

from __future__ import annotations

from ..out import numbers

WIDTH = 60  # the most cells one value takes in the repr (arrays are summarised)


def _short(value) -> str:
    return " ".join(numbers.lines(value, numbers.DEFAULT_PRECISION, WIDTH))


def trace_repr(trace) -> str:
    """``<ddx.Trace '(w*x+b)^2': out = 49; gradients w = 28, x = 42, b = 14>``."""
    source = trace.source if len(trace.source) <= 60 else trace.source[:57] + "..."
    name = trace.output_name  # (a replayed trace builds its graph for it: a repr is rare)
    head = f"<ddx.Trace {source!r}: {name} = {_short(trace.value)}"
    if not trace.backward_done:
        tail = "; call .backward() for gradients" if trace.requires_grad else \
            "; nothing requires grad"
        return head + tail + ">"
    grads = ", ".join(f"{n} = {_short(g) if g is not None else 'None'}"
                      for n, g in trace.grads.items())
    return f"{head}; gradients {grads}>"
