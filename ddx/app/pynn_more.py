"""torch.nn modules as their documentation examples build them: the losses with PyTorch's
constructor signatures (tensor ``weight``/``pos_weight``, ``ignore_index``, ...) printed as
PyTorch prints them (``BCEWithLogitsLoss()``: a loss shows no parameters), nn.Identity (any
arguments, its input returned as it is), the activations whose F.* rows ddx has (Hardtanh,
ReLU6, Hardsigmoid, Hardswish, Softsign, Tanhshrink, Softmin, Softmax2d) and the reprs of LeakyReLU,
Softmax, LogSoftmax and Flatten with their defaults."""

from __future__ import annotations

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pycompat import LEGACY_WARNING
from .pymodules import EXTRA, Native
from .pynn import Activation, Builtin

_LEGACY = ("size_average", "reduce")
_MEAN = (("size_average", None), ("reduce", None), ("reduction", "mean"))
# kind: (the F.* function, PyTorch's constructor parameters in order, with their defaults)
LOSSES = {
    "MSELoss": ("mse_loss", _MEAN),
    "L1Loss": ("l1_loss", _MEAN),
    "CrossEntropyLoss": ("cross_entropy", (("weight", None), ("size_average", None),
                                           ("ignore_index", -100), ("reduce", None),
                                           ("reduction", "mean"), ("label_smoothing", 0.0))),
    "NLLLoss": ("nll_loss", (("weight", None), ("size_average", None), ("ignore_index", -100),
                             ("reduce", None), ("reduction", "mean"))),
    "BCELoss": ("binary_cross_entropy", (("weight", None), *_MEAN)),
    "BCEWithLogitsLoss": ("binary_cross_entropy_with_logits",
                          (("weight", None), *_MEAN, ("pos_weight", None))),
    "SmoothL1Loss": ("smooth_l1_loss", (*_MEAN, ("beta", 1.0))),
    "HuberLoss": ("huber_loss", (("reduction", "mean"), ("delta", 1.0))),
}


def _bind(kind: str, params: tuple, args: list, kw: dict) -> dict:
    names = [name for name, _ in params]
    if len(args) > len(names):
        raise DdxTypeError(f"{kind}.__init__() takes from 1 to {len(names) + 1} positional "
                           f"arguments but {len(args) + 1} were given")
    given = dict(zip(names, args))
    for k, (v, _) in kw.items():
        if k not in names and k != "inplace":
            raise DdxTypeError(f"{kind}.__init__() got an unexpected keyword argument '{k}'")
        if k in given:
            raise DdxTypeError(f"{kind}.__init__() got multiple values for argument '{k}'")
        given[k] = v
    return given


def _flag(v) -> bool:
    return bool(v.value.item()) if isinstance(v, Tensor) else bool(v)


def _reduction(ev, given: dict) -> str:
    """PyTorch's legacy size_average/reduce, as _Reduction.legacy_get_string reads them, with
    its warning."""
    size_average, reduce = given.get("size_average"), given.get("reduce")
    if size_average is None and reduce is None:
        return given.get("reduction", "mean")
    size_average = True if size_average is None else _flag(size_average)
    reduce = True if reduce is None else _flag(reduce)
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    ev.warnings.append(LEGACY_WARNING.format(reduction))
    return reduction


class Loss(Builtin):
    """A loss module: F.<fn>(input, target, **its parameters); shown as ``Kind()``."""

    def __init__(self, kind: str, fn: str, kw: dict) -> None:
        super().__init__()
        self.kind, self.fn, self.kw = kind, fn, kw

    def forward(self, ev, node, args, kw):
        if kw or len(args) != 2:
            raise DdxTypeError(f"{self.kind}.forward() takes 3 positional arguments but "
                               f"{len(args) + 1} were given")
        return ev.functions[self.fn](ev, node, list(args), dict(self.kw))


def _loss(kind: str, fn: str, params: tuple):
    def make(ev, node, args, kw):
        given = _bind(kind, params, list(args), kw)
        passed = {name: (value, node.pos) for name, value in given.items()
                  if name not in _LEGACY and name != "inplace" and value is not None}
        reduction = _reduction(ev, given)
        if reduction != "mean":
            passed["reduction"] = (reduction, node.pos)
        else:
            passed.pop("reduction", None)
        return Loss(kind, fn, passed)
    return Native(kind, make)


class Identity(Builtin):
    """nn.Identity(*args, **kwargs): forward returns its input itself."""

    kind = "Identity"

    def forward(self, ev, node, args, kw):
        if kw or len(args) != 1:
            raise DdxTypeError(f"Identity.forward() takes 2 positional arguments but "
                               f"{len(args) + 1} were given")
        return args[0]


def _inplace(given: dict) -> str:
    return ", inplace=True" if given.get("inplace") else ""


def _number(v) -> str:
    return repr(v.value.item() if isinstance(v, Tensor) else v)


_IN = ("inplace", False)
# kind: (the F.* function, parameters with defaults, the repr's text from the bound values)
ACTIVATIONS = {
    "Hardtanh": ("hardtanh", (("min_val", -1.0), ("max_val", 1.0), _IN),
                 lambda g: f"min_val={_number(g['min_val'])}, max_val={_number(g['max_val'])}"
                 + _inplace(g)),
    "ReLU6": ("relu6", (_IN,), lambda g: _inplace(g)[2:]),
    "Hardsigmoid": ("hardsigmoid", (_IN,), lambda g: ""),
    "Hardswish": ("hardswish", (_IN,), lambda g: ""),
    "Softsign": ("softsign", (), lambda g: ""),
    "Tanhshrink": ("tanhshrink", (), lambda g: ""),
    "LeakyReLU": ("leaky_relu", (("negative_slope", 0.01), _IN),
                  lambda g: f"negative_slope={_number(g['negative_slope'])}" + _inplace(g)),
    "Softmax": ("softmax", (("dim", None),), lambda g: f"dim={_number(g['dim'])}"),
    "LogSoftmax": ("log_softmax", (("dim", None),), lambda g: f"dim={_number(g['dim'])}"),
    "Softmin": ("softmin", (("dim", None),), lambda g: f"dim={_number(g['dim'])}"),
    "Softmax2d": ("softmax", (), lambda g: ""),
    "Flatten": ("flatten", (("start_dim", 1), ("end_dim", -1)),
                lambda g: f"start_dim={_number(g['start_dim'])}, end_dim={_number(g['end_dim'])}"),
}


def _activation(kind: str, fn: str, params: tuple, shown):
    def make(ev, node, args, kw):
        given = {**dict(params), **_bind(kind, params, list(args), kw)}
        inplace = given.pop("inplace", False)
        # (a default is a plain number; the F.* rows take numbers as Python's wrapped scalars)
        passed = {k: (weak(v) if type(v) in (int, float) else v, node.pos)
                  for k, v in given.items() if v is not None}
        if inplace and fn in ("hardtanh", "relu6", "leaky_relu"):
            passed["inplace"] = (inplace, node.pos)
        if kind == "Softmax2d":  # softmax over the channels: dim -3
            passed["dim"] = (weak(-3), node.pos)
        made = Softmin if fn == "softmin" else Activation
        return made(kind, fn, passed, shown({**given, "inplace": inplace}))
    return Native(kind, make)


def fn_softmin(ev, node, args, kw):
    """F.softmin(input, dim): PyTorch's (-input).softmax(dim)."""
    if not args or not isinstance(args[0], Tensor):
        raise DdxTypeError("softmin(): argument 'input' must be Tensor")
    rest = dict(kw)
    if len(args) > 1:
        rest["dim"] = (args[1], node.pos)
    if len(args) > 2:
        raise DdxRuntimeError("softmin's _stacklevel and dtype arguments are not supported by "
                              "ddx", start=node.pos, end=node.end)
    negated = ev.functions["neg"](ev, node, [args[0]], {})
    return ev.functions["softmax"](ev, node, [negated], rest)


class Softmin(Activation):
    def forward(self, ev, node, args, kw):
        return fn_softmin(ev, node, list(args), dict(self.kw))


def register() -> None:
    nn = EXTRA["torch.nn"]
    for kind, (fn, params) in LOSSES.items():
        nn[kind] = _loss(kind, fn, params)
    for kind, (fn, params, shown) in ACTIVATIONS.items():
        nn[kind] = _activation(kind, fn, params, shown)
    nn["Identity"] = Native("Identity", lambda ev, node, args, kw: Identity())
    EXTRA["torch.nn.functional"]["softmin"] = Native("softmin", fn_softmin)


register()

__all__ = ["LOSSES", "Loss"]
