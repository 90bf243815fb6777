"""The views in a notebook: Rich's HTML export of the same renderables the terminal shows.

``mimebundle(renderable, plain)`` is what an object's ``_repr_mimebundle_`` returns: ``text/plain``
(its repr) and ``text/html`` (the view, inline styles, no scripts)."""

from __future__ import annotations

import io

from rich.console import Group

WIDTH = 100  # a notebook's output area holds about this many monospace cells
PRE = ('<pre style="white-space: pre; overflow-x: auto; line-height: 1.25; '
       "font-family: Menlo, 'DejaVu Sans Mono', Consolas, monospace\">{code}</pre>")


def html(renderable, width: int = WIDTH) -> str:
    """The renderable as an HTML fragment, laid out at ``width`` cells."""
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor",
                      force_terminal=True, force_jupyter=False, markup=False, highlight=False,
                      emoji=False)
    console.print(renderable)
    return console.export_html(inline_styles=True, code_format=PRE)


def text(renderable, width: int = WIDTH) -> str:
    """The renderable as plain text (no colour, no trailing spaces)."""
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO(), color_system=None,
                      markup=False, highlight=False, emoji=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().split("\n")).rstrip("\n")


def mimebundle(renderable, plain: str, include=None, exclude=None) -> dict:
    bundle = {"text/plain": plain, "text/html": html(renderable)}
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


class View(Group):
    """A Group of views that also displays itself in a notebook (no Rich extension needed)."""

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return mimebundle(self, text(self), include, exclude)

    def _repr_html_(self) -> str:
        return html(self)

    def __repr__(self) -> str:
        return text(self)
