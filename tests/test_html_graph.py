"""--graph FILE.html: the page's data (steps in the engine's order, accumulation, folding) and the
page itself in a real headless Chromium: no console error, no network request, every node's
value and gradient, the backward control, folding and search on a 500-node graph."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from exprgen import exprs, to_text
from hypothesis import given, settings

import ddx
from ddx.engine.explain import local_text
from ddx.graph.record import ancestors
from ddx.out.graphdoc import cell, document, fold_groups, label
from ddx.out.html_graph import to_html

ARTIFACTS = Path(os.environ.get("DDX_ARTIFACTS") or Path(tempfile.gettempdir()) / "ddx-artifacts")
SEED = ("(w*x+b)^2 + w", {"w": 3, "x": 2, "b": 1})


def traced(expr, bindings):
    t = ddx.Trace(expr, bindings, lean=False)
    t.backward()
    return t


def big_expr(terms: int) -> str:
    return " + ".join(f"sin(x*{i}) * w" for i in range(1, terms + 1))


def page_data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="ddx-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


# --- the page's data, without a browser ---------------------------------------------------------
def test_steps_follow_the_engines_order_with_explains_texts():
    t = traced(*SEED)
    doc = document(t)
    names = [n["name"] for n in doc["nodes"]]
    got = [(doc["steps"][k]["grad_fn"], names[doc["steps"][k]["node"]])
           for k in range(len(doc["steps"]))]
    assert got == [(fn.name, fn.output.display) for fn in t.flow]  # the engine's visiting order
    explain = [(s["node"], s["at"], s["input"], s["local"]) for s in t.explain()["steps"]]
    mine = [(s["grad_fn"], names[s["node"]], names[e["input"]], e["local"])
            for s in doc["steps"] for e in s["edges"]]
    assert mine == explain
    # w is used twice: 1 arrives first, then 28; the running totals end at .grad
    w_edges = [e for s in doc["steps"] for e in s["edges"] if names[e["input"]] == "w"]
    assert [(e["passed"]["text"], e["total"]["text"], e["count"], e["of"]) for e in w_edges] == \
        [("1", "1", 1, 2), ("28", "29", 2, 2)]
    leaves = {names[e["input"]]: e["total"]["text"] for s in doc["steps"] for e in s["edges"]}
    assert {k: leaves[k] for k in "wxb"} == {"w": "29", "x": "42", "b": "14"}


def test_where_a_nan_arose_is_on_the_page():
    t = traced("y = sqrt(x) * 0 + x", {"x": 0})
    doc = document(t)
    assert doc["output"] == "y"
    assert doc["nonfinite"].startswith("nan/inf first arose in the backward pass at "
                                       "[SqrtBackward0] sqrt(x): the local derivative "
                                       "1/(2*sqrt(x)) = inf at x = 0")
    x_edges = [e for s in doc["steps"] for e in s["edges"] if doc["nodes"][e["input"]]["name"] == "x"]
    assert [(e["passed"]["text"], e["total"]["text"]) for e in x_edges] == [("1", "1"),
                                                                              ("nan", "nan")]
    assert document(traced(*SEED))["nonfinite"] is None


def test_running_totals_end_bit_identical_to_the_gradients():
    t = traced("sum(tanh(W @ v + c) * v) + sum(v * v)", {"W": "[[1,2],[3,4]]", "v": "[0.5,-1]",
                                                        "c": 0.25})
    doc = document(t)
    final = {}
    for s in doc["steps"]:
        for e in s["edges"]:
            final[doc["nodes"][e["input"]]["name"]] = e["total"]["text"]
    for name, g in t.grads.items():
        assert final[name] == cell(g)["text"]


def test_values_are_small_grids_with_a_summary():
    c = cell(np.arange(30.0).reshape(5, 6))
    assert c["grid"] == [["0", "1", "…", "5"], ["6", "7", "…", "11"], ["…"] * 4,
                         ["24", "25", "…", "29"]]
    assert c["summary"] == "(5, 6)  min 0  max 29  mean 14.5"
    assert cell(np.array([1.0, np.nan]))["bad"] is True
    assert cell(np.array(2.5)) == {"shape": [], "bad": False, "text": "2.5"}


def test_folding_keeps_leaves_and_output_and_groups_the_chain():
    t = traced(big_expr(100), {"x": 0.5, "w": 2})
    doc = document(t)
    assert len(doc["nodes"]) > 500
    groups = doc["groups"]
    assert len(groups) == 1 and groups[0]["size"] > 490
    members = set(groups[0]["members"])
    for n in doc["nodes"]:
        if n["kind"] in ("out", "leaf"):
            assert n["id"] not in members
    assert fold_groups(t.nodes[:10], set()) == []  # small graphs never fold


def test_repeated_inputs_of_one_node_fold_into_one_group():
    t = traced("sum([" + ", ".join(f"sin(x*{i})" for i in range(1, 170)) + "])", {"x": 0.5})
    doc = document(t)
    assert len(doc["nodes"]) == 510
    [g] = doc["groups"]
    assert g["size"] == 507 and g["name"] == "169 parts like sin(x*169)"
    assert g["summary"] == "169 × constant, 169 × MulBackward0, 169 × SinBackward0"
    names = [n["name"] for n in doc["nodes"] if n["id"] not in set(g["members"])]
    assert names[0] == "x" and len(names) == 3  # x, the stack and the sum stay outside


def test_page_is_self_contained_and_escapes_text():
    t = traced("(x < 2) * x + y", {"x": 1, "y": 3})
    text = to_html(t)
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)="(?!data:)', text)
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") \
        .replace('"http://www.w3.org/2000/svg"', "")
    assert "https://" not in text
    data = page_data(text)  # '<' inside the data is written \u003c: the script cannot end early
    assert any(n["name"] == "(x < 2) * x" for n in data["nodes"])
    assert "(x < 2)" not in text.split('id="ddx-data">')[1].split("</script>")[0]


def test_cli_writes_html(run, tmp_path):
    path = tmp_path / "g.html"
    code, out, err = run(SEED[0], "w=3", "x=2", "b=1", "--graph", str(path))
    assert code == 0 and err == ""
    data = page_data(path.read_text())
    assert [n["name"] for n in data["nodes"] if n["kind"] == "leaf"] == ["w", "x", "b"]


def test_repl_html(tmp_path, capsys):
    from ddx.app.repl import Repl

    repl = Repl(no_color=True)
    for line in ("x = tensor(2.0, requires_grad=true)", "w = tensor(3.0, requires_grad=true)",
                 "loss = (w * x + 1) * (w * x + 1)", "loss.backward(retain_graph=true)"):
        repl.handle(line)
    path = tmp_path / "l.html"
    repl.handle(f":html loss {path}")
    assert capsys.readouterr().out.strip().endswith(f"wrote {path}")
    data = page_data(path.read_text())
    grads = {n["name"]: n["grad"]["text"] for n in data["nodes"] if n["kind"] == "leaf"}
    assert grads == {"x": "42", "w": "28"}
    inner = {n["name"]: n["grad"]["text"] for n in data["nodes"] if n["kind"] == "op"}
    assert inner["w * x + 1"] == "7"  # what reached it, though PyTorch keeps no .grad there
    assert [s["grad_fn"] for s in data["steps"]][0] == "MulBackward0"
    repl.handle(f":html loss {tmp_path / 'l.txt'}")
    assert "the page's name ends in .html" in capsys.readouterr().out
    repl.handle("y = w * x")  # the steps are a fresh pass from y; .grad shows loss's
    repl.handle(f":html y {tmp_path / 'y.html'}")
    data = page_data((tmp_path / "y.html").read_text())
    assert data["fresh"] is True and [n["value"]["text"] for n in data["nodes"]] == ["3", "2", "6"]
    assert [(e["total"]["text"]) for e in data["steps"][0]["edges"]] == ["2", "3"]
    assert [n["grad"]["text"] for n in data["nodes"][:2]] == ["28", "42"]
    repl.handle("z = tensor(1.0, requires_grad=true) * 2")  # no backward reached it: no steps
    repl.handle(f":html z {tmp_path / 'z.html'}")
    assert page_data((tmp_path / "z.html").read_text())["steps"] == []


# --- in a real browser --------------------------------------------------------------------------
def chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        found = None
    why = None if found and driver else "no headless Chromium + selenium (CI installs them)"
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if why is None and soft != resource.RLIM_INFINITY and soft < 1 << 40:
        # Chromium reserves a terabyte of address space for V8's sandbox at start
        why = f"Chromium cannot start under a {soft >> 20} MiB address-space limit (ulimit -v)"
    if why is not None:
        if os.environ.get("DDX_REQUIRE_BROWSER"):
            raise AssertionError(f"the browser tests are required here: {why}")
        pytest.skip(why)
    return found, driver


@pytest.fixture(scope="module")
def browser():
    binary, driver_path = chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900", "--disable-background-networking"):
        opts.add_argument(arg)
    opts.binary_location = binary
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def open_page(browser, trace, name: str, tmp_path) -> str:
    path = tmp_path / f"{name}.html"
    path.write_text(to_html(trace), encoding="utf-8")
    browser.get_log("browser")
    browser.get_log("performance")
    url = path.as_uri()
    browser.get(url)
    assert browser.execute_script("return document.body.dataset.ready") == "1"
    return url


def shot(browser, name: str) -> None:
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def requests_made(browser) -> list[str]:
    urls = []
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def nodes_shown(browser) -> dict[int, dict]:
    """The visible nodes by id: name, value and gradient as the page shows them."""
    return {int(k): v for k, v in browser.execute_script("""
        var out = {};
        document.querySelectorAll('.node[data-id]').forEach(function (d) {
          if (d.style.display === 'none') return;
          out[d.dataset.id] = {name: d.dataset.name, value: d.querySelector('.nval').dataset.text,
                                 grad: d.querySelector('.ngrad').dataset.text,
                                 text: d.querySelector('.ngrad').textContent};
        });
        return out;""").items()}


def by_name(browser) -> dict[str, dict]:
    return {v["name"]: v for v in nodes_shown(browser).values()}


def click(browser, element_id: str) -> None:
    browser.find_element("id", element_id).click()


def test_page_loads_clean_and_shows_every_value_and_gradient(browser, tmp_path):
    t = traced(*SEED)
    url = open_page(browser, t, "seed", tmp_path)
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    assert [u for u in requests_made(browser) if u != url and not u.startswith("data:")] == []
    shown = nodes_shown(browser)
    assert len(shown) == len(ancestors(t.output))
    for i, node in enumerate(ancestors(t.output)):  # the page's ids are this order's
        got = shown[i]
        assert got["name"] == label(node)
        assert got["value"] == cell(node.value)["text"]
        assert got["grad"] == cell(t.grad_of(node))["text"]
    shown = by_name(browser)
    assert {k: shown[k]["grad"] for k in "wxb"} == {"w": "29", "x": "42", "b": "14"}
    legend = browser.find_element("id", "legend").text
    for word in ("leaf", "constant", "operation", "output", "folded group", "gradient passed"):
        assert word in legend
    shot(browser, "seed")


def test_an_input_sits_just_below_its_consumer(browser, tmp_path):
    # (w*x+b)^2: b feeds the add, one layer above w*x, so b shares w*x's row and its edge
    # passes behind no node (in the bottom row beside w and x it ran behind w*x)
    open_page(browser, traced(*SEED), "layers", tmp_path)
    box = browser.execute_script("""
        var out = {};
        document.querySelectorAll('.node[data-id]').forEach(function (d) {
          var r = d.getBoundingClientRect(); out[d.dataset.name] = [r.top, r.bottom]; });
        return out;""")
    top, bottom = 0, 1
    assert box["w"][top] == box["x"][top]  # the product's inputs: the bottom row
    assert box["b"][bottom] < box["w"][top]  # b: a row higher...
    assert box["b"][top] < box["w*x"][bottom] and box["w*x"][top] < box["b"][bottom]  # ...w*x's
    assert box["w*x+b"][bottom] < box["b"][top]  # and its consumer above it
    shot(browser, "layers")


@pytest.mark.parametrize("expr", [SEED[0], "sin(x)*x + x^2 + exp(x)/x + w*(x - w)"])
def test_no_edge_passes_behind_a_node(browser, tmp_path, expr):
    # an edge across several rows (w into the last add) goes through gaps of the rows between
    open_page(browser, traced(expr, {"w": 3, "x": 2, "b": 1}), "edges", tmp_path)
    hits = browser.execute_script("""
        var boxes = {}, hits = [];
        document.querySelectorAll('.node[data-id]').forEach(function (d) {
          boxes['n' + d.dataset.id] = d.getBoundingClientRect(); });
        document.querySelectorAll('#edges path, svg path[data-from]').forEach(function (p) {
          var n = p.getTotalLength(), m = p.getScreenCTM();
          for (var t = 0; t <= n; t += 2) {
            var q = p.getPointAtLength(t), x = m.a * q.x + m.e, y = m.d * q.y + m.f;
            Object.keys(boxes).forEach(function (k) {
              var r = boxes[k];
              if (k !== p.dataset.from && k !== p.dataset.to && x > r.left + 1 &&
                  x < r.right - 1 && y > r.top + 1 && y < r.bottom - 1)
                hits.push(p.dataset.from + '>' + p.dataset.to + ' behind ' + k);
            });
          }
        });
        return hits;""")
    shot(browser, "edges-" + str(len(expr)))
    assert hits == []
    assert browser.execute_script("return document.querySelectorAll('svg path[data-from]').length")\
        >= 6


def test_backward_control_replays_ddx_order_and_accumulates(browser, tmp_path):
    t = traced(*SEED)
    open_page(browser, t, "seed-steps", tmp_path)
    engine = [fn.output.display for fn in t.flow]
    explain_order = []
    for s in t.explain()["steps"]:
        if not explain_order or explain_order[-1] != s["at"]:
            explain_order.append(s["at"])
    assert engine == explain_order
    visited, panels = [], []
    for k in range(len(engine)):
        click(browser, "bw-step")
        cur = browser.find_elements("css selector", ".node.current")
        assert len(cur) == 1
        visited.append(cur[0].get_attribute("data-name"))
        panels.append(browser.find_element("id", "panel").text)
        assert browser.find_element("id", "bw-count").text == f"step {k + 1} / {len(engine)}"
        if k == 0:  # the first step: w got 1 of its 2 contributions; x not reached yet
            shown = by_name(browser)
            assert shown["w"]["grad"] == "1" and "1 of 2 contributions" in shown["w"]["text"]
            assert shown["x"]["grad"] == "" and "not yet" in shown["x"]["text"]
            shot(browser, "seed-step1")
    assert visited == engine
    mul = panels[engine.index("w*x")]
    x_value = local_text(next(n for n in t.nodes if n.display == "w*x"), 0)
    assert x_value == "x"
    assert "local derivative  d w*x / d w = x = 2" in mul and "× upstream 14" in mul
    assert "= passed on 28" in mul and "1 + 28 = 29" in mul
    assert browser.find_element("id", "bw-step").get_attribute("disabled") == "true"
    shown = by_name(browser)
    for name, g in t.grads.items():
        assert shown[name]["grad"] == cell(g)["text"]
    shot(browser, "seed-end")
    click(browser, "bw-back")
    assert browser.execute_script("return document.body.dataset.step") == str(len(engine) - 1)
    click(browser, "bw-reset")
    assert browser.find_elements("css selector", ".node.current") == []


def test_matrix_values_show_as_grids(browser, tmp_path):
    t = traced("sum(tanh(W @ v + c))", {"W": "[[1,2,3,4,5],[1,2,3,4,5],[1,2,3,4,5],"
                                                  "[1,2,3,4,5],[1,2,3,4,5],[6,7,8,9,10]]",
                                         "v": "[0.1,0.2,0.3,0.4,0.5]", "c": 0.1})
    open_page(browser, t, "matrix", tmp_path)
    cells = browser.execute_script("""
        var d = document.querySelector('.node[data-name="W"] table.grid');
        return Array.from(d.rows).map(function (r) {
          return Array.from(r.cells).map(function (c) { return c.textContent; }); });""")
    assert cells == [["1", "2", "…", "5"], ["1", "2", "…", "5"], ["…"] * 4, ["6", "7", "…", "10"]]
    summary = browser.find_element("css selector", '.node[data-name="W"] .summary').text
    assert summary.split() == "(6, 5) min 1 max 10 mean 3.83333".split()  # 115 / 30
    width = browser.execute_script(
        "return document.querySelector('.node[data-name=\"W\"]').offsetWidth")
    assert width < 300  # a grid, not one long line
    shot(browser, "matrix")


def test_folding_and_search_on_a_500_node_graph(browser, tmp_path):
    t = traced(big_expr(130), {"x": 0.5, "w": 2})
    every = ancestors(t.output)
    assert len(t.nodes) > 500
    url = open_page(browser, t, "big", tmp_path)
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    assert [u for u in requests_made(browser) if u != url and not u.startswith("data:")] == []
    visible = browser.execute_script(
        "return Array.from(document.querySelectorAll('.node')).filter(function (d) {"
        " return d.style.display !== 'none'; }).length")
    assert visible < 12  # folded: the leaves, the output's neighbourhood and one group
    shot(browser, "big-folded")
    group = browser.find_element("css selector", ".node.kind-group")
    assert "nodes" in group.text and "AddBackward0" in group.text
    group.click()
    assert len(nodes_shown(browser)) == len(every)
    shot(browser, "big-unfolded")
    top = browser.execute_script(
        "return JSON.parse(document.getElementById('ddx-data').textContent).groups[0].top")
    browser.find_element("css selector", f'.node[data-id="{top}"] .gtag').click()  # fold again
    assert len(nodes_shown(browser)) < 12
    box = browser.find_element("id", "search")
    box.send_keys("sin(x*57)")
    assert browser.find_element("id", "search-result").text == "2 found"  # and sin(x*57) * w
    box.send_keys("\n")
    found = browser.find_elements("css selector", ".node.found")
    assert [f.get_attribute("data-name") for f in found] == ["sin(x*57)"]
    assert browser.find_element("id", "search-result").text == "1 of 2"
    inside = browser.execute_script("""
        var r = document.querySelector('.node.found').getBoundingClientRect();
        var v = document.getElementById('view').getBoundingClientRect();
        return r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom;""")
    assert inside
    shot(browser, "big-search")
    box.send_keys("\n")  # Enter again: the next match
    found = browser.find_elements("css selector", ".node.found")
    assert [f.get_attribute("data-name") for f in found] == ["sin(x*57) * w"]
    click(browser, "bw-end")  # every step done: the leaves hold their gradients
    shown = by_name(browser)
    for name, g in t.grads.items():
        assert shown[name]["grad"] == cell(g)["text"]


@pytest.mark.skipif(shutil.which("ddx") is None and not os.environ.get("DDX_REQUIRE_INSTALLED"),
                    reason="ddx is not installed as a command here")
def test_installed_package_ships_the_page_assets(tmp_path):
    """A non-editable install (CI's) carries the page's script, style and template."""
    import subprocess

    path = tmp_path / "g.html"
    proc = subprocess.run([shutil.which("ddx"), SEED[0], "w=3", "x=2", "b=1", "--graph", str(path),
                           "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    assert "function layout()" in text and ".node.kind-leaf" in text
    assert [s["grad_fn"] for s in page_data(text)["steps"]] == \
        ["AddBackward0", "PowBackward0", "AddBackward0", "MulBackward0"]


@settings(max_examples=25, deadline=None)
@given(exprs)
def test_steps_cover_every_vjp_and_end_at_the_gradients(tree):
    text = to_text(tree, parens=False)
    t = ddx.Trace(text, {"a": 0.3, "b": -1.1, "c": 2.0}, lean=False)
    if not t.output.requires_grad:
        return
    t.backward()
    doc = document(t)
    assert sum(len(s["edges"]) for s in doc["steps"]) == t.vjp_count
    if t.output.grad_fn is None:  # the output is a leaf: nothing to step
        assert doc["steps"] == []
        return
    final: dict[str, str] = {}
    for s in doc["steps"]:
        for e in s["edges"]:
            final[doc["nodes"][e["input"]]["name"]] = e["total"]["text"]
    for name, g in t.grads.items():
        if g is not None:
            assert final[name] == cell(g)["text"]
