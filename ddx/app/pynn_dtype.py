"""nn.Module's dtype and device conversions, as torch/nn/modules/module.py has them:
``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(dtype=...)``, ``to(tensor)`` (its
dtype), ``float()``, ``double()``, ``type(dst_type)``, ``cpu()``; ``half()``/``bfloat16()``
and other devices are ddx's errors (ddx has no float16, and runs on the CPU only). As
``_apply`` does: each parameter stays the same Parameter (``param.data = ...``: an optimizer
made before keeps working), its grad converted too; a buffer that changes dtype is a new
tensor; ``to``/``float``/``double`` convert only the floating-point ones (BatchNorm's
num_batches_tracked stays int64), ``type`` converts them all. And the factory kwargs
``device=None, dtype=None`` of the layers PyTorch gives them: the parameters and buffers made
in that dtype, from the same draws (the constructor runs with it as the default dtype)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError
from ..graph.create_args import require_cpu
from ..graph.tensor import Tensor
from ..graph.values import DType
from .pybuffers import own_buffers
from .pyerrors import PyException
from .pymodules import EXTRA
from .pynn import MORE_METHODS, named_modules, own
from .pyvalues import Instance, type_label
from .tensor_methods2 import m_to, m_type
from .values import Device

# the layers whose constructor takes PyTorch's factory kwargs (device=None, dtype=None)
FACTORY_KINDS = frozenset((
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "EmbeddingBag", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "PReLU", "RNN", "GRU", "LSTM",
    "RNNCell", "GRUCell", "LSTMCell"))

_SIGNATURES = (("device", "dtype", "non_blocking", "copy"), ("dtype", "non_blocking", "copy"),
               ("tensor", "non_blocking", "copy"))
_EXPECTED = "".join(
    f"\n * ({head}bool non_blocking = False, bool copy = False, *, torch.memory_format "
    "memory_format = None)" for head in (
        "torch.device device = None, torch.dtype dtype = None, ", "torch.dtype dtype, ",
        "Tensor tensor, ")) + "\n"
_NO_HALF = ("{}: ddx has no float16 or bfloat16 tensors (float32, float64, integer and bool "
            "only)")


def _plain(v: Any) -> Any:
    """A Python number given as ddx's weak tensor, as the number."""
    return v.value.item() if isinstance(v, Tensor) and v.weak else v


def _type_name(v: Any) -> str:
    v = _plain(v)
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, DType):
        return "torch.dtype"
    if isinstance(v, Device):
        return "torch.device"
    return type_label(v)


def _fits(name: str, v: Any, first: bool) -> bool:
    v = _plain(v)
    if name == "device":
        return v is None or isinstance(v, (str, Device)) or type(v) is int
    if name == "dtype":
        return isinstance(v, DType) or v is None and first
    if name == "tensor":
        return isinstance(v, Tensor)
    return type(v) is bool


def _invalid(args: list, kw: dict) -> Exception:
    kws = [f"{k}={_type_name(v)}" for k, (v, _) in reversed(list(kw.items()))]
    got = ", ".join([_type_name(a) for a in args] + kws) if args else \
        "".join(k + ", " for k in kws)
    return PyException.error("TypeError", "to() received an invalid combination of arguments"
                             f" - got ({got}), but expected one of:{_EXPECTED}")


def parse_to(args: list, kw: dict) -> dict:
    """torch._C._nn._parse_to's reading of to()'s arguments (its three signatures)."""
    if len(args) > 4:
        raise PyException.error("TypeError", "to() takes from 0 to 4 positional arguments "
                                f"but {len(args)} were given")
    for i, names in enumerate(_SIGNATURES):
        if len(args) > len(names):
            continue
        given = dict(zip(names, args))
        if not all(_fits(k, v, i == 0) for k, v in given.items()):
            continue
        extra = {k: v for k, (v, _) in kw.items()}
        memory = extra.pop("memory_format", None)
        if memory is not None or any(k not in names or k in given for k in extra) or \
                not all(_fits(k, v, i == 0) for k, v in extra.items()):
            continue
        given.update(extra)
        return {k: _plain(v) for k, v in given.items()}
    raise _invalid(args, kw)


def check_device(ev, node, device: Any) -> None:
    """The CPU (a name, torch.device or None); anything else is PyTorch's or ddx's error."""
    if device is None or isinstance(device, Device):
        require_cpu(device)
        return
    if type(device) is int:
        raise PyException.error("RuntimeError", "Cannot access accelerator device when none "
                                "is available.")
    require_cpu(EXTRA["torch"]["device"].fn(ev, node, [device], {}))  # (its words for others)


def _check_float(dt: np.dtype, what: str) -> None:
    if dt.kind == "f" and dt not in (np.float32, np.float64):
        raise DdxRuntimeError(_NO_HALF.format(what))


def convert(ev, node, m: Any, dt: np.dtype, floats_only: bool = True) -> Any:
    """module._apply(t.to(dt)): each module once; parameters (and their grads) changed in
    place, buffers replaced by the converted tensor; only floating-point tensors when
    ``floats_only``."""
    dt = np.dtype(dt)
    for _, mod in named_modules(m):
        params = own(mod)[0]
        if not floats_only:  # (type(): a Parameter that requires grad must stay a float)
            for _, p in params:
                if p.requires_grad and dt.kind != "f":
                    raise PyException.error("RuntimeError", "data set to a tensor that "
                                            "requires gradients must be floating point or "
                                            "complex dtype")
        for _, p in params:
            if p.value.dtype == dt or floats_only and p.value.dtype.kind != "f":
                continue
            if ev.journal is not None:
                ev.journal.keep(p, "value")
                ev.journal.keep(p, "grad")
            p.value = p.value.astype(dt)
            if p.grad is not None:
                p.grad = np.asarray(p.grad).astype(dt)
        attrs = mod.attrs if isinstance(mod, Instance) else mod.state
        for name, b in own_buffers(mod):
            if b.value.dtype == dt or floats_only and b.value.dtype.kind != "f":
                continue
            new = m_to(ev, node, b, [DType(dt)], {}) if b.requires_grad else \
                Tensor(b.value.astype(dt))
            if ev.journal is not None:
                ev.journal.bind(attrs, name, new)
            else:
                attrs[name] = new
    return m


def module_to(ev, node, m, args, kw):
    given = parse_to(list(args), kw)
    if given.get("copy"):
        raise PyException.error("RuntimeError", ".to() does not accept copy argument")
    tensor = given.get("tensor")
    dtype = given.get("dtype")
    dt = tensor.value.dtype if tensor is not None else None if dtype is None else dtype.np
    device = given.get("device")
    # to('meta') keeps the module as it is: the ensembling tutorial's base model, which is
    # used only through functional_call with stacked parameters
    if str(getattr(device, "kind", device)) != "meta":
        check_device(ev, node, device)
    if dt is None:
        return m
    if dt.kind not in "fc":
        raise PyException.error("TypeError", "nn.Module.to only accepts floating point or "
                                f"complex dtypes, but got desired dtype=torch.{dt.name}")
    _check_float(dt, "Module.to()")
    return convert(ev, node, m, dt)


def _no_args(name: str, args: list, kw: dict) -> None:
    if args:
        raise PyException.error("TypeError", f"Module.{name}() takes 1 positional argument "
                                f"but {len(args) + 1} were given")
    for k in kw:
        raise PyException.error("TypeError", f"Module.{name}() got an unexpected keyword "
                                f"argument '{k}'")


def _cast(name: str, dt):
    def method(ev, node, m, args, kw):
        _no_args(name, args, kw)
        if dt is None:
            raise DdxRuntimeError(_NO_HALF.format(f"Module.{name}()"))
        return convert(ev, node, m, dt)
    return method


def _cpu(ev, node, m, args, kw):
    _no_args("cpu", args, kw)
    return m


def _cuda(ev, node, m, args, kw):
    check_device(ev, node, "cuda")
    return m


def module_type(ev, node, m, args, kw):
    """m.type(dst_type): torch.float64, 'torch.DoubleTensor' or torch.DoubleTensor; every
    parameter and buffer, integer ones too."""
    for k in kw:
        if k != "dst_type":
            raise PyException.error("TypeError", "Module.type() got an unexpected keyword "
                                    f"argument '{k}'")
    if len(args) > 1:
        raise PyException.error("TypeError", "Module.type() takes 2 positional arguments but "
                                f"{len(args) + 1} were given")
    if len(args) + len(kw) != 1:
        raise PyException.error("TypeError", "Module.type() missing 1 required positional "
                                "argument: 'dst_type'" if not args else "Module.type() got "
                                "multiple values for argument 'dst_type'")
    given = args[0] if args else kw["dst_type"][0]
    if isinstance(given, str) and given.endswith(("HalfTensor", "BFloat16Tensor")):
        raise DdxRuntimeError(_NO_HALF.format("Module.type()"))
    dt = m_type(ev, node, Tensor(np.zeros(0, np.float32)), [given], {}).value.dtype
    _check_float(dt, "Module.type()")
    return convert(ev, node, m, dt, floats_only=False)


def _factory_dtype(args: list, kw: dict) -> Any:
    if "dtype" in kw:
        return kw["dtype"][0]
    return next((a for a in args if isinstance(a, DType)), None)


def factory(kind: str, fn):
    """A layer's constructor taking device= and dtype= as PyTorch's factory kwargs: it runs
    with the dtype as the default dtype, so its draws and fills are made in it."""
    if getattr(fn, "factory_kwargs", False):
        return fn
    if kind not in FACTORY_KINDS:
        def plain(ev, node, args, kw):  # (nn.ReLU(dtype=...): Python's TypeError)
            for k in ("device", "dtype"):
                if k in kw:
                    raise PyException.error("TypeError", f"{kind}.__init__() got an "
                                            f"unexpected keyword argument '{k}'")
            return fn(ev, node, args, kw)
        plain.factory_kwargs = True
        return plain

    def make(ev, node, args, kw):
        if "device" in kw:
            check_device(ev, node, _plain(kw["device"][0]))
        dtype = _factory_dtype(args, kw)
        if dtype is None:
            return fn(ev, node, args, kw)
        if not isinstance(dtype, DType):
            raise PyException.error("TypeError", "empty(): argument 'dtype' must be "
                                    f"torch.dtype, not {_type_name(dtype)}")
        if dtype.np.kind != "f":
            raise PyException.error("RuntimeError", "Only Tensors of floating point and "
                                    "complex dtype can require gradients")
        _check_float(dtype.np, f"nn.{kind}(dtype=...)")
        before = ev.dtype
        ev.dtype = dtype.np
        try:
            return fn(ev, node, args, kw)
        finally:
            ev.dtype = before

    make.factory_kwargs = True
    return make


MORE_METHODS.update({
    "to": module_to, "type": module_type, "float": _cast("float", np.float32),
    "double": _cast("double", np.float64), "half": _cast("half", None),
    "bfloat16": _cast("bfloat16", None), "cpu": _cpu, "cuda": _cuda,
})

__all__ = ["FACTORY_KINDS", "check_device", "convert", "factory", "module_to", "module_type",
           "parse_to"]
