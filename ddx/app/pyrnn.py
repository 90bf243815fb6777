"""nn.RNN and nn.GRU (layers, bias, batch_first, dropout between layers, bidirectional) and
nn.RNNCell, nn.GRUCell and nn.LSTMCell, as ATen's CPU path runs them (aten/src/ATen/native/RNN.cpp): a
layer's input projection ``linear(inputs, w_ih, b_ih)`` made once for every step, then per
step ``linear(h, w_hh, b_hh) + projection[t]`` through tanh or relu (RNN) or the GRU cell's
gates, the steps stacked (the reverse direction from the last step, its outputs put back
in order and concatenated after the forward direction's), the final hiddens stacked. Built
of ddx's ops, so the values and gradients are PyTorch's bit for bit (tests against torch).
The weights are drawn as reset_parameters draws them: uniform(-1/sqrt(hidden), ...) for each
parameter in order. nn.LSTM is refused: PyTorch runs it on a CPU through oneDNN's kernel."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pyerrors import PyException
from .pyfunc6 import REQUIRED, bind, call, num
from .pymodules import EXTRA, Native
from .pynn import new_parameter, uniform
from .pynn6 import Module6

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _cell(ev, node, mode: str, pre_input: Tensor, h: Tensor, w_hh, b_hh) -> Tensor:
    """One step from the input's projection: RNN_TANH, RNN_RELU or GRU."""
    hidden = call(ev, node, "linear", h, w_hh, b_hh)
    if mode != "GRU":
        pre = call(ev, node, "add", hidden, pre_input)
        return call(ev, node, "tanh" if mode == "RNN_TANH" else "relu", pre)
    ig = call(ev, node, "chunk", pre_input, weak(3), weak(1))
    hg = call(ev, node, "chunk", hidden, weak(3), weak(1))
    reset = call(ev, node, "sigmoid", call(ev, node, "add", hg[0], ig[0]))
    update = call(ev, node, "sigmoid", call(ev, node, "add", hg[1], ig[1]))
    new = call(ev, node, "tanh", call(ev, node, "add", ig[2], call(ev, node, "mul", hg[2],
                                                                        reset)))
    return call(ev, node, "add", call(ev, node, "mul", call(ev, node, "sub", h, new), update),
                new)


def _row(ev, node, t: Tensor, i: int) -> Tensor:
    """t[i] (ATen's unbind(0) of the projections and of hx)."""
    return ev.op("select", node, [t], {"key": (i,)}, grad_fn="UnbindBackward0")


def _direction(ev, node, mode, inputs: Tensor, h: Tensor, params: list, reverse: bool):
    """(the stacked outputs, the final hidden) of one direction of one layer."""
    w_ih, w_hh, b_ih, b_hh = params
    projected = call(ev, node, "linear", inputs, w_ih, b_ih)
    steps = range(inputs.shape[0] - 1, -1, -1) if reverse else range(inputs.shape[0])
    outs = []
    for t in steps:
        row = _row(ev, node, projected, t)
        h = _cell(ev, node, mode, row, h, w_hh, b_hh)
        outs.append(h)
    if reverse:
        outs.reverse()
    return call(ev, node, "stack", outs, weak(0)), h


class Recurrent(Module6):
    """nn.RNN / nn.GRU."""

    def forward(self, ev, node, args, kw):
        g = bind(f"{self.kind}.forward", (("input", REQUIRED), ("hx", None)), list(args), kw)
        x, hx = g["input"], g["hx"]
        s = self.state
        if not isinstance(x, Tensor) or x.weak:
            raise PyException.error("TypeError", f"{self.kind}.forward() expects a tensor")
        if x.value.ndim not in (2, 3):
            raise PyException.error("ValueError", f"{self.kind}: Expected input to be 2D or "
                                    f"3D, got {x.value.ndim}D tensor instead")
        first, dirs, layers = s["batch_first"], 2 if s["bidirectional"] else 1, s["num_layers"]
        batched = x.value.ndim == 3
        if not batched:
            x = call(ev, node, "unsqueeze", x, weak(0 if first else 1))
            if hx is not None:
                if hx.value.ndim != 2:
                    raise DdxRuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                          f"got {hx.value.ndim}-D tensor")
                hx = call(ev, node, "unsqueeze", hx, weak(1))
        elif hx is not None and hx.value.ndim != 3:
            raise DdxRuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                  f"{hx.value.ndim}-D tensor")
        if x.shape[-1] != s["input_size"]:
            raise DdxRuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                                  f"{s['input_size']}, got {x.shape[-1]}")
        batch = x.shape[0] if first else x.shape[1]
        want = (layers * dirs, batch, s["hidden_size"])
        if hx is None:
            hx = Tensor(np.zeros(want, x.value.dtype))
        elif tuple(hx.shape) != want:
            raise DdxRuntimeError(f"Expected hidden size {want}, got {list(hx.shape)}")
        if first:
            x = call(ev, node, "transpose", x, weak(0), weak(1))
        mode = s["mode"]
        finals, layer_in = [], x
        for layer in range(layers):
            outs = []
            for d in range(dirs):
                h0 = _row(ev, node, hx, layer * dirs + d)
                out, h = _direction(ev, node, mode, layer_in, h0, self.params(layer, d), d == 1)
                outs.append(out)
                finals.append(h)
            layer_in = outs[0] if dirs == 1 else call(ev, node, "cat", outs, weak(2))
            if s["dropout"] and s["training"] and layer < layers - 1:
                layer_in = ev.functions["dropout"](ev, node, [layer_in], {
                    "p": (s["dropout"], node.pos), "training": (True, node.pos)})
        output = call(ev, node, "transpose", layer_in, weak(0), weak(1)) if first else layer_in
        hidden = call(ev, node, "stack", finals, weak(0))
        if not batched:
            output = call(ev, node, "squeeze", output, weak(0 if first else 1))
            hidden = call(ev, node, "squeeze", hidden, weak(1))
        return (output, hidden)

    def params(self, layer: int, d: int) -> list:
        tail = f"_l{layer}" + ("_reverse" if d else "")
        return [self.state.get(f"{k}{tail}") for k in ("weight_ih", "weight_hh", "bias_ih",
                                                       "bias_hh")]


class Cell(Module6):
    """nn.RNNCell / nn.GRUCell: one step, the input projected at each call."""

    def forward(self, ev, node, args, kw):
        g = bind(f"{self.kind}.forward", (("input", REQUIRED), ("hx", None)), list(args), kw)
        x, hx = g["input"], g["hx"]
        s = self.state
        if not isinstance(x, Tensor) or x.weak or x.value.ndim not in (1, 2):
            dims = x.value.ndim if isinstance(x, Tensor) else 0
            raise PyException.error("ValueError", f"{self.kind}: Expected input to be 1D or "
                                    f"2D, got {dims}D instead")
        batched = x.value.ndim == 2
        if not batched:
            x = call(ev, node, "unsqueeze", x, weak(0))
        if s["mode"] == "LSTM":
            return self._lstm(ev, node, x, hx, batched)
        if hx is None:
            hx = Tensor(np.zeros((x.shape[0], s["hidden_size"]), x.value.dtype))
        elif not batched:
            hx = call(ev, node, "unsqueeze", hx, weak(0))
        pre = call(ev, node, "linear", x, s["weight_ih"], s["bias_ih"])
        h = _cell(ev, node, s["mode"], pre, hx, s["weight_hh"], s["bias_hh"])
        return h if batched else call(ev, node, "squeeze", h, weak(0))

    def _lstm(self, ev, node, x, hx, batched: bool) -> tuple:
        """LSTMCell: gates = linear(h, w_hh, b_hh) + linear(x, w_ih, b_ih); c' = f * c + i *
        g; h' = o * tanh(c')."""
        s = self.state
        if hx is None:
            zeros = np.zeros((x.shape[0], s["hidden_size"]), x.value.dtype)
            h, c = Tensor(zeros), Tensor(zeros.copy())
        else:
            h, c = hx
            if not batched:
                h = call(ev, node, "unsqueeze", h, weak(0))
                c = call(ev, node, "unsqueeze", c, weak(0))
        gates = call(ev, node, "add", call(ev, node, "linear", h, s["weight_hh"], s["bias_hh"]),
                     call(ev, node, "linear", x, s["weight_ih"], s["bias_ih"]))
        i, f, g, o = call(ev, node, "chunk", gates, weak(4), weak(1))
        i, f, o = (call(ev, node, "sigmoid", v) for v in (i, f, o))
        g = call(ev, node, "tanh", g)
        c = call(ev, node, "add", call(ev, node, "mul", f, c), call(ev, node, "mul", i, g))
        h = call(ev, node, "mul", o, call(ev, node, "tanh", c))
        if not batched:
            h, c = (call(ev, node, "squeeze", v, weak(0)) for v in (h, c))
        return (h, c)


def _extra(g, size: int, hidden: int, cell: bool, relu: bool) -> str:
    parts = [f"{size}, {hidden}"]
    if not cell and int(num(g["num_layers"])) != 1:
        parts.append(f"num_layers={int(num(g['num_layers']))}")
    if not bool(num(g["bias"])):
        parts.append("bias=False")
    if cell:
        if relu:
            parts.append("nonlinearity=relu")
        return ", ".join(parts)
    if bool(num(g["batch_first"])):
        parts.append("batch_first=True")
    if float(num(g["dropout"])):
        parts.append(f"dropout={num(g['dropout'])!r}")
    if bool(num(g["bidirectional"])):
        parts.append("bidirectional=True")
    return ", ".join(parts)


def _build(kind: str, cell: bool):
    base = kind.replace("Cell", "")

    def build(ev, g):
        size, hidden = int(num(g["input_size"])), int(num(g["hidden_size"]))
        relu = base == "RNN" and g.get("nonlinearity", "tanh") == "relu"
        if base == "RNN" and g.get("nonlinearity", "tanh") not in ("tanh", "relu"):
            raise PyException.error("ValueError", f"Unknown nonlinearity "
                                    f"'{g['nonlinearity']}'. Select from 'tanh' or 'relu'.")
        mode = base if base in ("GRU", "LSTM") else "RNN_RELU" if relu else "RNN_TANH"
        m = (Cell if cell else Recurrent)(kind, None, {}, _extra(g, size, hidden, cell, relu))
        m.state.update(mode=mode, input_size=size, hidden_size=hidden)
        bias = bool(num(g["bias"]))
        gates = _GATES[base] * hidden
        shapes = []
        if cell:
            shapes = [("weight_ih", (gates, size)), ("weight_hh", (gates, hidden))]
            shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))] if bias else []
        else:
            layers, dirs = int(num(g["num_layers"])), 2 if bool(num(g["bidirectional"])) else 1
            dropout = float(num(g["dropout"]))
            if not 0 <= dropout <= 1:
                raise PyException.error("ValueError", "dropout should be a number in range "
                                        "[0, 1] representing the probability of an element "
                                        "being zeroed")
            m.state.update(num_layers=layers, batch_first=bool(num(g["batch_first"])),
                           bidirectional=dirs == 2, dropout=dropout)
            for layer in range(layers):
                width = size if layer == 0 else hidden * dirs
                for d in range(dirs):
                    tail = f"_l{layer}" + ("_reverse" if d else "")
                    shapes += [("weight_ih" + tail, (gates, width)),
                               ("weight_hh" + tail, (gates, hidden))]
                    shapes += [("bias_ih" + tail, (gates,)), ("bias_hh" + tail, (gates,))] \
                        if bias else []
        stdv = 1.0 / math.sqrt(hidden) if hidden > 0 else 0
        for name, shape in shapes:  # (reset_parameters: every parameter in order)
            m.state[name] = new_parameter(uniform(ev, shape, stdv))
        for name in ("bias_ih", "bias_hh"):
            if cell and not bias:
                m.state[name] = None
        return m
    return build


_DEV = (("device", None), ("dtype", None))
_RNN = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", 1),
        ("nonlinearity", "tanh"), ("bias", True), ("batch_first", False), ("dropout", 0.0),
        ("bidirectional", False), *_DEV)
_GRU = tuple(p for p in _RNN if p[0] != "nonlinearity")
_RNN_CELL = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("bias", True),
             ("nonlinearity", "tanh"), *_DEV)
_GRU_CELL = tuple(p for p in _RNN_CELL if p[0] != "nonlinearity")
CLASSES = {"RNN": (_RNN, False), "GRU": (_GRU, False), "RNNCell": (_RNN_CELL, True),
           "GRUCell": (_GRU_CELL, True), "LSTMCell": (_GRU_CELL, True)}


def _lstm(ev, node, args, kw):
    raise DdxRuntimeError("nn.LSTM is not supported by ddx: PyTorch runs it on a CPU through "
                          "oneDNN's LSTM kernel, whose arithmetic ddx does not reproduce "
                          "(nn.RNN, nn.GRU and nn.LSTMCell are there)")


def register() -> None:
    nn = EXTRA["torch.nn"]
    for kind, (params, cell) in CLASSES.items():
        build = _build(kind, cell)
        nn[kind] = Native(kind, lambda ev, node, args, kw, _k=kind, _p=params, _b=build: _b(
            ev, bind(f"{_k}.__init__", _p, list(args), kw)))
    nn.setdefault("LSTM", Native("LSTM", _lstm))


register()
