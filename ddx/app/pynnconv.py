"""torch.nn's Conv1d/2d/3d, ConvTranspose1d/2d/3d, MaxPool1d/2d/3d and AvgPool1d/2d/3d over the F.* callers of
ddx/graph/calls_conv.py, printed as PyTorch prints them (_ConvNd.extra_repr and the pools'),
their parameters made as _ConvNd.reset_parameters makes them: the weight by
kaiming_uniform_(a=sqrt(5)), then the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn
from the seeded generator in that order. A padding_mode other than 'zeros' pads with F.pad
first (_reversed_padding_repeated_twice), then convolves unpadded, as PyTorch's forward."""

from __future__ import annotations

import math
from typing import Any

from ..graph.values import weak
from .pyerrors import PyException
from .pyfunc6 import FUNCTIONS as F6
from .pyfunc6 import REQUIRED, bind, call, num
from .pymodules import EXTRA, Native
from .pynn import Builtin, new_parameter, uniform
from .pynnclass import FILES

_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(v: Any, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(int(num(i)) for i in v)
    return (int(num(v)),) * n


def _value_error(text: str):
    return PyException.error("ValueError", text)


class Conv(Builtin):
    def __init__(self, ev, n: int, g: dict, transposed: bool = False) -> None:
        super().__init__()
        self.kind, self.n = f"ConvTranspose{n}d" if transposed else f"Conv{n}d", n
        c_in, c_out = int(num(g["in_channels"])), int(num(g["out_channels"]))
        groups = int(num(g["groups"]))
        if groups <= 0:
            raise _value_error("groups must be a positive integer")
        if c_in % groups:
            raise _value_error("in_channels must be divisible by groups")
        if c_out % groups:
            raise _value_error("out_channels must be divisible by groups")
        k = _tuple(g["kernel_size"], n)
        stride = _tuple(g["stride"], n)
        dilation = _tuple(g["dilation"], n)
        padding = g["padding"]
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise _value_error(f"Invalid padding string {padding!r}, should be one of "
                                   "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise _value_error("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n)
        mode = g["padding_mode"]
        if transposed and mode != "zeros":
            raise _value_error(f'Only "zeros" padding mode is supported for {self.kind}')
        if mode not in _MODES:
            raise _value_error("padding_mode must be one of {'reflect', 'circular', "
                               f"'replicate', 'zeros'}}, but got padding_mode={mode!r}")
        s = self.state
        s["in_channels"], s["out_channels"], s["kernel_size"] = c_in, c_out, k
        s["stride"], s["padding"], s["dilation"] = stride, padding, dilation
        output_padding = _tuple(g.get("output_padding", 0), n)
        s["transposed"], s["output_padding"], s["groups"] = transposed, output_padding, groups
        s["padding_mode"] = mode
        s["_reversed_padding_repeated_twice"] = self._reversed()
        shape = (c_in, c_out // groups, *k) if transposed else (c_out, c_in // groups, *k)
        fan_in = shape[1] * math.prod(k)  # (init._calculate_fan_in_and_fan_out of the weight)
        gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
        std = gain / math.sqrt(fan_in) if fan_in else 0.0
        s["weight"] = new_parameter(uniform(ev, shape, math.sqrt(3.0) * std))
        if bool(num(g["bias"])):
            bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
            s["bias"] = new_parameter(uniform(ev, (c_out,), bound))
        else:
            s["bias"] = None

    def _reversed(self) -> tuple:
        s = self.state
        out: list[int] = []
        for i in reversed(range(self.n)):
            if s["padding"] == "same":
                total = s["dilation"][i] * (s["kernel_size"][i] - 1)
                out += [total // 2, total - total // 2]
            elif s["padding"] == "valid":
                out += [0, 0]
            else:
                out += [s["padding"][i]] * 2
        return tuple(out)

    def extra(self) -> str:
        s = self.state
        text = (f"{s['in_channels']}, {s['out_channels']}, kernel_size={s['kernel_size']}, "
                f"stride={s['stride']}")
        if s["padding"] != (0,) * self.n:
            text += f", padding={s['padding']}"
        if s["dilation"] != (1,) * self.n:
            text += f", dilation={s['dilation']}"
        if s["output_padding"] != (0,) * self.n:
            text += f", output_padding={s['output_padding']}"
        if s["groups"] != 1:
            text += f", groups={s['groups']}"
        if s["bias"] is None:
            text += ", bias=False"
        if s["padding_mode"] != "zeros":
            text += f", padding_mode={s['padding_mode']}"
        return text

    def forward(self, ev, node, args, kw):
        s = self.state
        if s["transposed"]:
            return self._transposed(ev, node, args, kw)
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", f"{self.kind}.forward() takes 2 positional "
                                    f"arguments but {len(args) + 1} were given")
        (x,) = args
        padding = s["padding"]
        if s["padding_mode"] != "zeros":
            x = F6["pad"](ev, node, [x, s["_reversed_padding_repeated_twice"]],
                          {"mode": (s["padding_mode"], node.pos)})
            padding = (0,) * self.n
        return call(ev, node, f"conv{self.n}d", x, s["weight"], s["bias"], stride=s["stride"],
                    padding=padding, dilation=s["dilation"], groups=s["groups"])


    def _transposed(self, ev, node, args, kw):
        """ConvTranspose's forward(input, output_size=None): output_size picks the
        output_padding (_output_padding's arithmetic)."""
        g = bind(f"{self.kind}.forward", (("input", REQUIRED), ("output_size", None)),
                 list(args), kw)
        s = self.state
        output_padding = s["output_padding"]
        if g["output_size"] is not None:
            size = [int(num(v)) for v in g["output_size"]][-self.n:]
            x = g["input"]
            output_padding = tuple(
                size[i] - ((x.shape[-self.n + i] - 1) * s["stride"][i] - 2 * s["padding"][i] +
                           s["dilation"][i] * (s["kernel_size"][i] - 1) + 1)
                for i in range(self.n))
        return call(ev, node, f"conv_transpose{self.n}d", g["input"], s["weight"], s["bias"],
                    stride=s["stride"], padding=s["padding"], output_padding=output_padding,
                    groups=s["groups"], dilation=s["dilation"])


def _conv(n: int, transposed: bool = False):
    kind = f"ConvTranspose{n}d" if transposed else f"Conv{n}d"
    params = (("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
              ("stride", 1), ("padding", 0)) + \
        ((("output_padding", 0), ("groups", 1), ("bias", True), ("dilation", 1))
         if transposed else (("dilation", 1), ("groups", 1), ("bias", True))) + \
        (("padding_mode", "zeros"), ("device", None), ("dtype", None))

    def make(ev, node, args, kw):
        return Conv(ev, n, bind(f"{kind}.__init__", params, list(args), kw), transposed)
    return Native(kind, make)


def _shown(v: Any) -> str:
    return repr(tuple(v)) if isinstance(v, (list, tuple)) else repr(num(v))


class Pool(Builtin):
    def __init__(self, kind: str, n: int, g: dict) -> None:
        super().__init__()
        self.kind, self.n, self.fn = f"{kind}Pool{n}d", n, f"{kind.lower()}_pool{n}d"
        keys = [k for k in g if k not in ("device", "dtype")]
        for k in keys:
            v = g[k]
            self.state[k] = tuple(num(i) for i in v) if isinstance(v, (list, tuple)) else num(v)
        if self.state.get("stride") is None:
            self.state["stride"] = self.state["kernel_size"]
        if kind == "Avg" and n == 1:  # (AvgPool1d keeps _single(...) of each)
            for k in ("kernel_size", "stride", "padding"):
                self.state[k] = _tuple(self.state[k], 1)
        self.shown = ("kernel_size", "stride", "padding") + \
            (("dilation", "ceil_mode") if kind == "Max" else ())
        self.keys = keys

    def extra(self) -> str:
        return ", ".join(f"{k}={_shown(self.state[k])}" for k in self.shown)

    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", f"{self.kind}.forward() takes 2 positional "
                                    f"arguments but {len(args) + 1} were given")
        given = {k: self.state[k] for k in self.keys if k != "kernel_size"}
        return call(ev, node, self.fn, args[0], self.state["kernel_size"], **given)


def _pool(kind: str, n: int):
    if kind == "Max":
        params = (("kernel_size", REQUIRED), ("stride", None), ("padding", 0), ("dilation", 1),
                  ("return_indices", False), ("ceil_mode", False))
    else:
        params = (("kernel_size", REQUIRED), ("stride", None), ("padding", 0),
                  ("ceil_mode", False), ("count_include_pad", True), ("divisor_override", None))

    def make(ev, node, args, kw):
        return Pool(kind, n, bind(f"{kind}Pool{n}d.__init__", params, list(args), kw))
    return Native(f"{kind}Pool{n}d", make)


class AdaptiveAvgPool2d(Builtin):
    """nn.AdaptiveAvgPool2d(output_size): F.adaptive_avg_pool2d with it."""

    def __init__(self, g: dict) -> None:
        super().__init__()
        v = g["output_size"]
        self.state["output_size"] = tuple(num(i) for i in v) if isinstance(v, (list, tuple)) \
            else num(v)
        self.kind = "AdaptiveAvgPool2d"

    def extra(self) -> str:
        return f"output_size={_shown(self.state['output_size'])}"

    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", "AdaptiveAvgPool2d.forward() takes 2 "
                                    f"positional arguments but {len(args) + 1} were given")
        return call(ev, node, "adaptive_avg_pool2d", args[0], self.state["output_size"])


def _adaptive(ev, node, args, kw):
    return AdaptiveAvgPool2d(bind("AdaptiveAvgPool2d.__init__", (("output_size", REQUIRED),),
                                  list(args), kw))


class Upsample(Builtin):
    """nn.Upsample(size, scale_factor, mode) and nn.UpsamplingNearest2d: F.interpolate."""

    def __init__(self, kind: str, g: dict) -> None:
        super().__init__()
        self.kind = kind
        scale = g.get("scale_factor")
        if scale is not None and not isinstance(scale, (list, tuple)):
            scale = float(num(scale)) if num(scale) else None
        elif scale is not None:
            scale = tuple(float(num(f)) for f in scale)
        size = g.get("size")
        if isinstance(size, (list, tuple)):
            size = tuple(int(num(v)) for v in size)
        elif size is not None:
            size = int(num(size))
        self.state.update(size=size, scale_factor=scale, mode=g.get("mode", "nearest"),
                          align_corners=g.get("align_corners"),
                          recompute_scale_factor=g.get("recompute_scale_factor"))

    def extra(self) -> str:
        s = self.state
        info = f"scale_factor={s['scale_factor']!r}" if s["scale_factor"] is not None else \
            f"size={s['size']!r}"
        return info + f", mode={s['mode']!r}"

    def forward(self, ev, node, args, kw):
        if len(args) != 1 or kw:
            raise PyException.error("TypeError", f"{self.kind}.forward() takes 2 positional "
                                    f"arguments but {len(args) + 1} were given")
        s = self.state
        extra = {k: (v if not isinstance(v, float) else weak(v), node.pos)
                 for k, v in (("size", s["size"]), ("scale_factor", s["scale_factor"]),
                              ("mode", s["mode"])) if v is not None}
        for key in ("align_corners", "recompute_scale_factor"):
            if s[key] is not None:
                extra[key] = (s[key], node.pos)
        return ev.functions["interpolate"](ev, node, [args[0]], extra)


def _upsample(kind: str, params: tuple):
    def make(ev, node, args, kw):
        g = bind(f"{kind}.__init__", params, list(args), kw)
        if kind == "UpsamplingNearest2d":
            g["mode"] = "nearest"
        return Upsample(kind, g)
    return Native(kind, make)


def register() -> None:
    nn = EXTRA["torch.nn"]
    nn["Upsample"] = _upsample("Upsample", (("size", None), ("scale_factor", None),
                                            ("mode", "nearest"), ("align_corners", None),
                                            ("recompute_scale_factor", None)))
    nn["UpsamplingNearest2d"] = _upsample("UpsamplingNearest2d", (("size", None),
                                                                  ("scale_factor", None)))
    FILES["upsampling"] = ("Upsample", "UpsamplingNearest2d")
    for n in (1, 2, 3):
        nn[f"Conv{n}d"] = _conv(n)
        nn[f"ConvTranspose{n}d"] = _conv(n, True)
        nn[f"MaxPool{n}d"] = _pool("Max", n)
        nn[f"AvgPool{n}d"] = _pool("Avg", n)
    nn["AdaptiveAvgPool2d"] = Native("AdaptiveAvgPool2d", _adaptive)
    FILES["conv"] = tuple(f"Conv{k}{n}d" for k in ("", "Transpose") for n in (1, 2, 3))
    FILES["pooling"] = tuple(f"{k}Pool{n}d" for k in ("Max", "Avg") for n in (1, 2, 3)) + \
        ("AdaptiveAvgPool2d",)


register()

__all__ = ["AdaptiveAvgPool2d", "Conv", "Pool"]
