"""--graph FILE.html: one self-contained page (inline script and style, no network) that draws the
graph with values and gradients, pans, zooms, folds, finds, and steps the backward pass."""

from __future__ import annotations

import html
import json
from pathlib import Path

from .graphdoc import document

ASSETS = Path(__file__).parent / "assets"


def _json_for_script(doc: dict) -> str:
    """JSON that cannot end its <script> element early, whatever the names say."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def to_html(view) -> str:
    doc = document(view)
    page = (ASSETS / "page.html").read_text(encoding="utf-8")
    parts = {"@TITLE@": html.escape(doc["title"]),
             "@CSS@": (ASSETS / "graph.css").read_text(encoding="utf-8"),
             "@JS@": (ASSETS / "graph.js").read_text(encoding="utf-8"),
             "@DATA@": _json_for_script(doc)}
    # one pass, so that nothing a part contains is replaced again
    import re

    return re.sub("@(TITLE|CSS|JS|DATA)@", lambda m: parts[m.group()], page)
