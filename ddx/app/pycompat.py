"""What older and newer editions of the tutorials call, as PyTorch 2.13 on a CPU answers it:
``torch.accelerator`` (no accelerator: ``is_available()`` is False), ``torch.autograd.Variable``
(a tensor, as since PyTorch 0.4), ``torch.FloatTensor([...])`` / ``DoubleTensor`` /
``LongTensor``, the losses' legacy ``size_average=``/``reduce=`` (PyTorch's deprecation warning,
then the reduction they mean) and ``nn.DataParallel`` (on a CPU it calls the module it wraps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import DType
from .methods import detach
from .pymodules import EXTRA, Native, PyModule
from .pynn import LOSSES, Builtin, is_module
from .values import Size

LEGACY_WARNING = ("size_average and reduce args will be deprecated, please use "
                  "reduction='{}' instead.")

ACCELERATOR = PyModule("torch.accelerator", {
    "is_available": Native("is_available", lambda ev, node, args, kw: False),
    "current_accelerator": Native("current_accelerator", lambda ev, node, args, kw: None),
    "device_count": Native("device_count",
                           lambda ev, node, args, kw: Tensor(np.asarray(0), weak=True)),
})


def _variable(ev, node, args: list, kw: dict) -> Any:
    """Variable(t, requires_grad=False): the tensor itself, or a new leaf on its values."""
    if len(args) != 1 or not isinstance(args[0], Tensor) or args[0].weak:
        raise DdxTypeError("Variable data has to be a tensor", start=node.pos, end=node.end)
    wanted = kw.get("requires_grad", (False,))[0]
    t = args[0]
    if not wanted:
        return t
    out = detach(ev, node, t)
    out.set_requires_grad(flag(wanted))
    return out


def _typed_tensor(dtype) -> Native:
    """torch.FloatTensor([0.1, 1.0]): tensor(data, dtype=...); torch.FloatTensor(2, 3) (or a
    torch.Size): zeros of that shape, where PyTorch's is uninitialised memory."""

    def make(ev, node, args: list, kw: dict) -> Any:
        sizes = [int(a.value.item()) for a in args if isinstance(a, Tensor) and a.weak and
                 a.value.dtype.kind in "iu"]
        if len(args) == 1 and isinstance(args[0], Size):
            sizes = list(args[0])
        elif len(sizes) != len(args):
            sizes = None
        if sizes is not None and not kw:  # (FloatTensor(2, 3): PyTorch's is uninitialised)
            return ev.functions["zeros"](ev, node, [tuple(sizes) if args else (0,)],
                                         {"dtype": (DType(dtype), node.pos)})
        if len(args) != 1 or kw or not isinstance(args[0], (list, tuple, Tensor)) or \
                isinstance(args[0], Tensor) and args[0].weak:
            raise DdxTypeError("ddx's legacy tensor constructors take data or sizes: "
                               "torch.FloatTensor([1.0, 2.0]), torch.FloatTensor(2, 3)",
                               start=node.pos, end=node.end)
        return ev.functions["tensor"](ev, node, [args[0]], {"dtype": (DType(dtype), node.pos)})

    made = Native(f"{np.dtype(dtype).name}_tensor", make)
    made.legacy_dtype = np.dtype(dtype)
    return made


class TensorType(Native):
    """torch.Tensor: the class isinstance checks against (a tensor, not a Python number), and
    the legacy constructor torch.Tensor([...]) of the default dtype."""

    def __init__(self) -> None:
        def make(ev, node, args: list, kw: dict) -> Any:
            return _typed_tensor(ev.dtype).fn(ev, node, args, kw)
        super().__init__("Tensor", make)

    def __repr__(self) -> str:
        return "<class 'torch.Tensor'>"

    def is_instance(self, value: Any) -> bool:
        return isinstance(value, Tensor) and not value.weak


class SizeType(Native):
    """torch.Size: torch.Size([2, 3]) from a list or tuple of ints; isinstance checks."""

    def __init__(self) -> None:
        def make(ev, node, args: list, kw: dict) -> Any:
            items = args[0] if args else ()
            if isinstance(items, Tensor) and not items.weak and items.value.ndim == 1:
                items = items.value.tolist()  # (a list literal an argument makes a tensor of)
            if kw or len(args) > 1 or not isinstance(items, (list, tuple)):
                raise DdxTypeError("torch.Size() takes an iterable of 'int'",
                                   start=node.pos, end=node.end)
            dims = []
            for d in items:
                v = d.value.item() if isinstance(d, Tensor) and d.value.size == 1 else d
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise DdxTypeError(f"torch.Size() takes an iterable of 'int' (item 0 is "
                                       f"'{type(v).__name__}')", start=node.pos, end=node.end)
                dims.append(int(v))
            return Size(dims)
        super().__init__("Size", make)

    def __repr__(self) -> str:
        return "<class 'torch.Size'>"

    def is_instance(self, value: Any) -> bool:
        return isinstance(value, Size)


def _legacy_loss(make: Native) -> Native:
    """nn.MSELoss(size_average=False): reduction 'sum', with PyTorch's warning."""

    def loss(ev, node, args: list, kw: dict) -> Any:
        if "size_average" in kw or "reduce" in kw:
            kw = dict(kw)
            size_average = kw.pop("size_average", (None,))[0]
            reduce = kw.pop("reduce", (None,))[0]
            size_average = True if size_average is None else flag(size_average)
            reduce = True if reduce is None else flag(reduce)
            reduction = "none" if not reduce else "mean" if size_average else "sum"
            ev.warnings.append(LEGACY_WARNING.format(reduction))
            kw = {**kw, "reduction": (reduction, node.pos)}
        return make.fn(ev, node, args, kw)

    return Native(make.name, loss)


def flag(v: Any) -> bool:
    """A flag argument: a Python bool, or a number or 0-d tensor of one."""
    return bool(v.value.item()) if isinstance(v, Tensor) else bool(v)


class DataParallel(Builtin):
    """nn.DataParallel(module) with no GPU: forward is the module's own."""

    kind = "DataParallel"

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.state["module"] = module

    def forward(self, ev, node, args, kw):
        from .pycalls import call_value

        return call_value(ev, node, self.state["module"], list(args),
                          {k: v for k, v in kw.items()})


def _data_parallel(ev, node, args: list, kw: dict) -> Any:
    if not args or not is_module(args[0]):
        raise DdxTypeError("DataParallel wraps a Module: nn.DataParallel(model)", start=node.pos,
                           end=node.end)
    return DataParallel(args[0])


def register() -> None:
    EXTRA["torch"].setdefault("accelerator", ACCELERATOR)
    EXTRA["torch"].setdefault("Tensor", TensorType())
    EXTRA["torch"].setdefault("Size", SizeType())
    for name, dtype in (("FloatTensor", np.float32), ("DoubleTensor", np.float64),
                        ("LongTensor", np.int64)):
        EXTRA["torch"].setdefault(name, _typed_tensor(dtype))
    EXTRA["torch.autograd"].setdefault("Variable", Native("Variable", _variable))
    nn = EXTRA["torch.nn"]
    for kind in LOSSES:
        nn[kind] = _legacy_loss(nn[kind])
    nn.setdefault("DataParallel", Native("DataParallel", _data_parallel))


register()

__all__ = ["ACCELERATOR", "DataParallel", "flag"]
