"""--graph FILE.html: one self-contained page (inline script and style, no network) that draws the
graph with values and gradients, pans, zooms, folds, finds, and steps the backward pass."""

from __future__ import annotations

import html
import json
from pathlib import Path

from .graphdoc import document

ASSETS = Path(__file__).parent / "assets"

LEGEND = """<div id="legend" aria-label="legend">
<div><span class="sw" style="background:#cfe2ff;border-color:#1c64f2"></span>leaf (requires grad): AccumulateGrad</div>
<div><span class="sw" style="background:#f1f3f5;border-color:#adb5bd;border-style:dashed"></span>constant / data</div>
<div><span class="sw" style="background:#fff3bf;border-color:#e0a800;border-radius:6px"></span>operation: grad_fn [symbol]</div>
<div><span class="sw" style="background:#d3f9d8;border-color:#2b8a3e"></span>output</div>
<div><span class="sw" style="background:#f3d9fa;border-color:#ae3ec9;border-style:double;border-width:3px"></span>folded group (click to unfold)</div>
<div><span class="ln"></span>forward: input → user</div>
<div><span class="ln flow"></span>gradient passed in this step</div>
<div><span class="sw" style="box-shadow:0 0 0 3px #ff922b;border-color:#ff922b"></span>step's node
<span class="sw" style="box-shadow:0 0 0 2px #e03131;border-color:#e03131"></span>receives</div>
</div>"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>ddx graph: {title}</title>
<style>{css}</style></head>
<body>
<header id="bar">
<span class="title" title="{title}">{title}</span><span class="sep"></span>
<button id="bw-reset" title="back to the result">reset</button><button id="bw-back" title="one step back (←)">◀</button>
<button id="bw-step" title="one step of the backward pass (→)">backward ▶</button><button id="bw-end" title="every step">end</button>
<span id="bw-count"></span><span class="sep"></span>
<input id="search" type="search" placeholder="find a node (Enter: next)" aria-label="find a node">
<span id="search-result"></span><span class="sep"></span>
<button id="zoom-in" title="zoom in">+</button><button id="zoom-out" title="zoom out">−</button>
<button id="fit">fit</button><button id="fold-all">fold all</button><button id="unfold-all">unfold all</button>
</header>
<div id="view"><div id="stage"><svg id="edges" xmlns="http://www.w3.org/2000/svg"></svg><div id="nodes"></div></div></div>
<aside id="panel"></aside>
{legend}
<script type="application/json" id="ddx-data">{data}</script>
<script>{js}</script>
</body></html>
"""


def _json_for_script(doc: dict) -> str:
    """JSON that cannot end its <script> element early, whatever the names say."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def to_html(view) -> str:
    doc = document(view)
    css = (ASSETS / "graph.css").read_text(encoding="utf-8")
    js = (ASSETS / "graph.js").read_text(encoding="utf-8")
    return PAGE.format(title=html.escape(doc["title"]), css=css, legend=LEGEND,
                       data=_json_for_script(doc), js=js)
