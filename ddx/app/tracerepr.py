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


class TraceDisplay:
    """A Trace at a prompt and in a notebook (a mixin): its repr, its view, its MIME bundle."""

    def __repr__(self) -> str:
        return trace_repr(self)

    def view(self, *, precision: int = 6):
        """The one-liner's view (forward values, grad_fn tree, gradients, each mode asked) as a
        Rich renderable; it also displays itself in a notebook."""
        from ..out.numbers import check_precision
        from ..out.render import one_liner

        return one_liner(self, precision=check_precision(precision))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from ..out.notebook import mimebundle

        return mimebundle(self.view(), repr(self), include, exclude)

    def _repr_html_(self) -> str:
        from ..out.notebook import html

        return html(self.view())
