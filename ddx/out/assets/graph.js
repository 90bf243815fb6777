/* ddx --graph FILE.html: draws the graph from the JSON beside it, lays it out in layers,
   pans and zooms, folds groups, finds nodes, and steps the backward pass in ddx's order.
   No network, no libraries; all user text goes in through textContent. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("ddx-data").textContent);
  var nodes = DATA.nodes, steps = DATA.steps, groups = DATA.groups;
  var groupOf = new Array(nodes.length).fill(null);
  var folded = groups.map(function () { return true; });
  groups.forEach(function (g) { g.members.forEach(function (i) { groupOf[i] = g.id; }); });
  var els = {};      // item key ("n3", "g0") -> element
  var pos = {};      // item key -> {x, y, w, h}
  var view = { s: 1, x: 20, y: 20 };
  var stepAt = 0;    // how many backward steps are done
  var stage = document.getElementById("stage");
  var svg = document.getElementById("edges");
  var box = document.getElementById("nodes");
  var viewEl = document.getElementById("view");
  var SVGNS = "http://www.w3.org/2000/svg";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function valueBlock(cell, cls, label) {
    var d = el("div", cls);
    d.appendChild(el("span", "lab", label));
    fillValue(d, cell);
    return d;
  }

  function fillValue(d, cell) {
    if (!cell) { d.appendChild(el("span", "none", "—")); d.dataset.text = ""; return; }
    d.dataset.text = cell.text;
    if (cell.grid) {
      var t = el("table", "grid");
      cell.grid.forEach(function (row) {
        var tr = el("tr");
        row.forEach(function (v) {
          var td = el("td", /^(nan|-?inf)$/.test(v) ? "bad" : "", v);
          tr.appendChild(td);
        });
        t.appendChild(tr);
      });
      d.appendChild(t);
      if (cell.summary) d.appendChild(el("div", "summary", cell.summary));
    } else {
      d.appendChild(el("span", cell.bad ? "bad" : "v", cell.text));
    }
  }

  function setGrad(d, cell, pending, acc) {
    while (d.childNodes.length > 1) d.removeChild(d.lastChild);
    d.classList.toggle("pending", !!pending);
    if (pending) { d.appendChild(el("span", "none", pending)); d.dataset.text = ""; }
    else fillValue(d, cell);
    if (acc) d.appendChild(el("div", "acc", acc));
  }

  function makeNode(n) {
    var d = el("div", "node kind-" + n.kind);
    d.dataset.id = n.id;
    d.dataset.name = n.name;
    d.appendChild(el("div", "nname", n.name));
    var op = n.grad_fn ? n.grad_fn + (n.op ? "  [" + n.op + "]" : "") : (n.kind === "const" ? "constant" : "");
    if (op) d.appendChild(el("div", "nop", op));
    d.appendChild(valueBlock(n.value, "nval", "value"));
    var g = valueBlock(n.requires_grad ? n.grad : null, "ngrad", "grad");
    if (!n.requires_grad) { g.textContent = ""; g.appendChild(el("span", "lab", "requires_grad=False")); g.dataset.text = ""; }
    d.appendChild(g);
    if (groupOf[n.id] !== null) {
      var tag = el("span", "gtag", "▾ fold group " + (groupOf[n.id] + 1));
      tag.addEventListener("click", function (ev) { ev.stopPropagation(); fold(groupOf[n.id], true); });
      d.appendChild(tag);
    }
    d.addEventListener("click", function () { showNode(n.id); });
    return d;
  }

  function makeGroup(g) {
    var d = el("div", "node kind-group");
    d.dataset.group = g.id;
    d.appendChild(el("div", "nname", "▸ group " + (g.id + 1) + ": " + g.size + " nodes"));
    d.appendChild(el("div", "nop", g.summary));
    d.appendChild(el("div", "summary", (/ parts like /.test(g.name) ? "" : "up to ") + g.name));
    d.title = "click to unfold";
    d.addEventListener("click", function () { fold(g.id, false); });
    return d;
  }

  function build() {
    nodes.forEach(function (n) { var d = makeNode(n); els["n" + n.id] = d; box.appendChild(d); });
    groups.forEach(function (g) { var d = makeGroup(g); els["g" + g.id] = d; box.appendChild(d); });
  }

  function rep(i) { var g = groupOf[i]; return g !== null && folded[g] ? "g" + g : "n" + i; }

  // --- layout: layers by longest path from the inputs, order by barycentres -------------
  function layout() {
    var keys = [], seen = {}, ins = {}, outs = {};
    nodes.forEach(function (n) {
      var k = rep(n.id);
      if (!seen[k]) { seen[k] = true; keys.push(k); ins[k] = []; outs[k] = []; }
    });
    var edges = [], eseen = {};
    nodes.forEach(function (n) {
      var b = rep(n.id);
      n.inputs.forEach(function (j) {
        var a = rep(j), key = a + ">" + b;
        if (a !== b && !eseen[key]) { eseen[key] = true; edges.push([a, b]); ins[b].push(a); outs[a].push(b); }
      });
    });
    var indeg = {}, layer = {}, order = [], queue = [];
    keys.forEach(function (k) { indeg[k] = ins[k].length; layer[k] = 0; if (!indeg[k]) queue.push(k); });
    for (var q = 0; q < queue.length; q++) {
      var k = queue[q]; order.push(k);
      outs[k].forEach(function (o) {
        layer[o] = Math.max(layer[o], layer[k] + 1);
        if (--indeg[o] === 0) queue.push(o);
      });
    }
    // an input sits just below its lowest consumer, not in the bottom row: an edge from it
    // to a node higher up would pass behind the nodes between (b in (w*x+b)^2)
    keys.forEach(function (k) {
      if (ins[k].length || !outs[k].length) return;
      var low = Infinity;
      outs[k].forEach(function (o) { low = Math.min(low, layer[o]); });
      layer[k] = low - 1;
    });
    var top = 0;
    keys.forEach(function (k) { els[k].style.display = ""; top = Math.max(top, layer[k]); });
    Object.keys(els).forEach(function (k) { if (!seen[k]) els[k].style.display = "none"; });
    var rows = [];
    for (var l = 0; l <= top; l++) rows.push([]);
    order.forEach(function (k) { rows[layer[k]].push(k); });
    // an edge across several rows passes each row between through a gap of its own (a
    // virtual point, ordered as a node is), not behind the nodes of that row. The edges from
    // one node share one trunk of such points (x used at every level of a chain: one column,
    // not one per use). Within a budget of points passed (each edge draws its whole path): past
    // it, an edge is drawn straight. The ordering sees each item's neighbours one row down
    // (lo) and up (hi)
    var lo = {}, hi = {}, virt = {}, trunk = {}, nv = 0, left = 4 * keys.length;
    keys.forEach(function (k) { lo[k] = []; hi[k] = []; });
    edges.forEach(function (e) {
      var chain = [], t = trunk[e[0]] || (trunk[e[0]] = []), prev = e[0];
      var need = layer[e[1]] - layer[e[0]] - 1;
      if (need > left) need = 0;  // (drawn straight)
      left -= need;
      for (var i = 0; i < need; i++) {
        var v = t[i];
        if (v === undefined) {
          v = t[i] = "v" + nv++;
          virt[v] = true; layer[v] = layer[e[0]] + 1 + i; lo[v] = [prev]; hi[v] = [];
          hi[prev].push(v); rows[layer[v]].push(v);
        }
        chain.push(v); prev = v;
      }
      lo[e[1]].push(prev); hi[prev].push(e[1]);
      e[2] = chain;
    });
    var idx = {};
    function index() { rows.forEach(function (r) { r.forEach(function (k, i) { idx[k] = i; }); }); }
    function bary(r, nb) {
      var c = {};
      r.forEach(function (k) {
        var ns = nb[k], s = 0;
        ns.forEach(function (m) { s += idx[m]; });
        c[k] = ns.length ? s / ns.length : idx[k];
      });
      r.sort(function (a, b) { return c[a] - c[b]; });
    }
    index();
    for (var it = 0; it < 4; it++) {
      for (l = 1; l <= top; l++) { bary(rows[l], lo); index(); }
      for (l = top - 1; l >= 0; l--) { bary(rows[l], hi); index(); }
    }
    var size = {}, vpos = {};
    keys.forEach(function (k) {
      var r = els[k].getBoundingClientRect(), z = view.s || 1;  // (the stage is scaled)
      size[k] = { w: Math.ceil(r.width / z) + 1, h: Math.ceil(r.height / z) };
    });
    Object.keys(virt).forEach(function (v) { size[v] = { w: 2, h: 0 }; });
    // the widths stay as laid out: stepping changes the texts, never the layout
    keys.forEach(function (k) { els[k].style.width = size[k].w + "px"; });
    var GAPX = 28, GAPY = 56, y = 0, widest = 0;
    var rowW = rows.map(function (r) {
      var w = 0; r.forEach(function (k) { w += size[k].w; }); return w + GAPX * Math.max(0, r.length - 1);
    });
    rowW.forEach(function (w) { widest = Math.max(widest, w); });
    for (l = top; l >= 0; l--) {  // the output's layer on top, the inputs at the bottom
      var x = (widest - rowW[l]) / 2, h = 0;
      rows[l].forEach(function (k) {
        (virt[k] ? vpos : pos)[k] = { x: x, y: y, w: size[k].w, h: size[k].h };
        x += size[k].w + GAPX; h = Math.max(h, size[k].h);
      });
      rows[l].forEach(function (k) {
        if (virt[k]) vpos[k].h = h; else pos[k].y = y + (h - pos[k].h) / 2;
      });
      y += h + GAPY;
    }
    keys.forEach(function (k) { els[k].style.left = pos[k].x + "px"; els[k].style.top = pos[k].y + "px"; });
    drawEdges(edges, vpos, widest, y);
    markStep();
  }

  function drawEdges(edges, vpos, w, h) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("width", Math.max(w, 1));
    svg.setAttribute("height", Math.max(h, 1));
    var defs = document.createElementNS(SVGNS, "defs");
    defs.innerHTML = '<marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#868e96"/></marker>';
    svg.appendChild(defs);
    edges.forEach(function (e) {
      var a = pos[e[0]], b = pos[e[1]];
      // from the input's top to the user's bottom, straight up through each row between
      var x1 = a.x + a.w / 2, y1 = a.y, d = "M" + x1 + "," + y1;
      function to(x2, y2) {
        var my = (y1 + y2) / 2;
        d += " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," + y2;
      }
      e[2].forEach(function (v) {
        var q = vpos[v], vx = q.x + q.w / 2;
        to(vx, q.y + q.h);
        d += " L" + vx + "," + q.y;
        x1 = vx; y1 = q.y;
      });
      to(b.x + b.w / 2, b.y + b.h);
      var p = document.createElementNS(SVGNS, "path");
      p.setAttribute("d", d);
      p.setAttribute("marker-end", "url(#arr)");
      p.dataset.from = e[0]; p.dataset.to = e[1];
      svg.appendChild(p);
    });
  }

  // --- pan and zoom ------------------------------------------------------------------------
  function apply() { stage.style.transform = "translate(" + view.x + "px," + view.y + "px) scale(" + view.s + ")"; }
  function zoom(f, cx, cy) {
    var s = Math.min(4, Math.max(0.05, view.s * f));
    if (cx === undefined) { cx = viewEl.clientWidth / 2; cy = viewEl.clientHeight / 2; }
    view.x = cx - (cx - view.x) * s / view.s; view.y = cy - (cy - view.y) * s / view.s; view.s = s;
    apply();
  }
  function fit() {
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    Object.keys(pos).forEach(function (k) {
      if (els[k].style.display === "none") return;
      var p = pos[k];
      minx = Math.min(minx, p.x); miny = Math.min(miny, p.y); maxx = Math.max(maxx, p.x + p.w); maxy = Math.max(maxy, p.y + p.h);
    });
    if (minx === Infinity) return;
    var W = viewEl.clientWidth - 40, H = viewEl.clientHeight - 40;
    view.s = Math.min(1.5, Math.max(0.05, Math.min(W / (maxx - minx), H / (maxy - miny))));
    view.x = 20 - minx * view.s + (W - (maxx - minx) * view.s) / 2;
    view.y = 20 - miny * view.s;
    apply();
  }
  function center(k) {
    var p = pos[k]; if (!p) return;
    if (view.s < 0.6) view.s = 1;
    view.x = viewEl.clientWidth / 2 - (p.x + p.w / 2) * view.s;
    view.y = viewEl.clientHeight / 2 - (p.y + p.h / 2) * view.s;
    apply();
  }
  viewEl.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = viewEl.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  var drag = null;
  viewEl.addEventListener("mousedown", function (ev) {
    if (ev.target.closest && ev.target.closest(".node")) return;
    drag = { x: ev.clientX - view.x, y: ev.clientY - view.y }; viewEl.classList.add("panning");
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return; view.x = ev.clientX - drag.x; view.y = ev.clientY - drag.y; apply();
  });
  window.addEventListener("mouseup", function () { drag = null; viewEl.classList.remove("panning"); });

  // --- folding and search --------------------------------------------------------------------
  function fold(g, flag) { folded[g] = flag; layout(); if (!flag) center(rep(groups[g].top)); }
  function setAll(flag) { folded = folded.map(function () { return flag; }); layout(); fit(); }
  var found = [], foundAt = -1;
  function search(q, jump) {
    q = q.trim().toLowerCase();
    document.querySelectorAll(".node.found").forEach(function (e) { e.classList.remove("found"); });
    found = !q ? [] : nodes.filter(function (n) {
      return n.name.toLowerCase().indexOf(q) >= 0 || (n.grad_fn || "").toLowerCase() === q;
    }).map(function (n) { return n.id; });
    var res = document.getElementById("search-result");
    res.textContent = q ? (found.length ? found.length + " found" : "none found") : "";
    if (jump && found.length) {
      foundAt = (foundAt + 1) % found.length;
      var i = found[foundAt], g = groupOf[i];
      if (g !== null && folded[g]) { folded[g] = false; layout(); }
      els["n" + i].classList.add("found");
      center("n" + i);
      showNode(i);
      res.textContent = (foundAt + 1) + " of " + found.length;
    }
  }

  // --- the backward pass, step by step -------------------------------------------------------
  function ord(k) { var s = ["th", "st", "nd", "rd"], v = k % 100; return k + (s[(v - 20) % 10] || s[v] || s[0]); }
  function markStep() {
    var shown = {}, counts = {}, visited = {}, cur = null, recv = {};
    for (var k = 0; k < stepAt; k++) {
      var s = steps[k]; visited[s.node] = true;
      s.edges.forEach(function (e) { shown[e.input] = e.total; counts[e.input] = e; });
    }
    if (stepAt > 0) {
      cur = steps[stepAt - 1];
      cur.edges.forEach(function (e) { recv[e.input] = true; });
    }
    document.querySelectorAll(".node").forEach(function (d) { d.classList.remove("current", "receiving", "visited"); });
    nodes.forEach(function (n) {
      var d = els["n" + n.id], g = d.querySelector(".ngrad");
      if (!n.requires_grad) return;
      if (stepAt === 0 || !steps.length) { setGrad(g, n.grad, null, null); return; }
      var e = counts[n.id], cell = shown[n.id];
      if (cell === undefined && n.kind === "out") cell = steps[0].upstream;
      var acc = e && e.of > 1 ? e.count + " of " + e.of + " contributions" : null;
      setGrad(g, cell, cell === undefined ? "— not yet" : null, acc);
    });
    Object.keys(visited).forEach(function (i) { els[rep(+i)].classList.add("visited"); });
    Object.keys(recv).forEach(function (i) { els[rep(+i)].classList.add("receiving"); });
    if (cur) els[rep(cur.node)].classList.add("current");
    svg.querySelectorAll("path").forEach(function (p) {
      var flow = false;
      if (cur) cur.edges.forEach(function (e) { if (p.dataset.from === rep(e.input) && p.dataset.to === rep(cur.node)) flow = true; });
      p.classList.toggle("flow", flow);
    });
    document.body.dataset.step = stepAt;
    document.getElementById("bw-count").textContent = "step " + stepAt + " / " + steps.length;
    ["bw-back", "bw-reset"].forEach(function (id) { document.getElementById(id).disabled = stepAt === 0; });
    ["bw-step", "bw-end"].forEach(function (id) { document.getElementById(id).disabled = stepAt >= steps.length; });
    panelStep(cur);
  }

  function panelStep(s) {
    var p = document.getElementById("panel");
    p.textContent = "";
    if (!s) {
      p.appendChild(el("h3", "", DATA.title));
      p.appendChild(el("p", "hint", steps.length ? "Every node shows its value and the gradient that reached it. Press “backward ▶” to replay the backward pass the way ddx ran it: " + steps.length + " steps, one per grad_fn." : (DATA.backward ? "No backward steps to show." : "backward() has not run: values only.")));
      if (DATA.nonfinite) p.appendChild(el("p", "note", DATA.nonfinite));
      if (DATA.fresh && steps.length) p.appendChild(el("p", "hint", "The steps are a fresh backward pass from " + DATA.title + " in the engine's order; it changes no .grad (the leaves show their .grad)."));
      return;
    }
    var n = nodes[s.node];
    p.appendChild(el("h3", "", "step " + stepAt + " of " + steps.length + ": " + s.grad_fn + " at " + n.name));
    p.appendChild(el("div", "eq", "upstream gradient (d " + DATA.output + " / d " + n.name + ") = " + s.upstream.text));
    s.edges.forEach(function (e) {
      var to = nodes[e.input];
      var local = e.local === e.local_value.text ? e.local : e.local + " = " + e.local_value.text;
      var lines = "to " + to.name + " (input " + e.slot + "):\n  local derivative  d " + n.name + " / d " + to.name + " = " + local +
        "\n  × upstream " + s.upstream.text + "\n  = passed on " + e.passed.text;
      if (e.summed) lines += "  (" + e.summed + ")";
      if (e.of > 1) lines += "\n  " + to.name + " gets gradient from " + e.of + " uses: " + ord(e.count) + " arrives; " +
        (e.before ? e.before.text + " + " + e.passed.text + " = " + e.total.text : "so far " + e.total.text);
      else lines += "\n  " + to.name + "'s gradient: " + e.total.text;
      var d = el("div", "eq", lines);
      d.dataset.input = e.input;
      p.appendChild(d);
      if (e.kink) p.appendChild(el("div", "note", "kink: " + e.kink));
    });
  }

  function showNode(i) {
    if (stepAt) return;  // while stepping, the panel explains the step
    var n = nodes[i], p = document.getElementById("panel");
    p.textContent = "";
    p.appendChild(el("h3", "", n.name));
    p.appendChild(el("div", "eq", (n.grad_fn || n.kind) + "\nvalue " + (n.value ? n.value.text : "—") +
      "\ngrad  " + (n.requires_grad ? (n.grad ? n.grad.text : "None") : "requires_grad=False")));
  }

  function go(k) { stepAt = Math.max(0, Math.min(steps.length, k)); markStep(); }
  document.getElementById("bw-step").addEventListener("click", function () { go(stepAt + 1); });
  document.getElementById("bw-back").addEventListener("click", function () { go(stepAt - 1); });
  document.getElementById("bw-reset").addEventListener("click", function () { go(0); });
  document.getElementById("bw-end").addEventListener("click", function () { go(steps.length); });
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(1.25); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(1 / 1.25); });
  document.getElementById("fit").addEventListener("click", fit);
  document.getElementById("fold-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("unfold-all").addEventListener("click", function () { setAll(false); });
  var sbox = document.getElementById("search");
  sbox.addEventListener("input", function () { foundAt = -1; search(sbox.value, false); });
  sbox.addEventListener("keydown", function (ev) { if (ev.key === "Enter") search(sbox.value, true); });
  document.addEventListener("keydown", function (ev) {
    if (ev.target === sbox) return;
    if (ev.key === "ArrowRight") go(stepAt + 1);
    if (ev.key === "ArrowLeft") go(stepAt - 1);
  });
  ["fold-all", "unfold-all"].forEach(function (id) { document.getElementById(id).style.display = groups.length ? "" : "none"; });

  build();
  layout();
  fit();
  document.body.dataset.ready = "1";
})();
