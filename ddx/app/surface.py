"""The REPL language's PyTorch surface: tensor(), .grad, .backward(), next_functions, no_grad."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import DdxTypeError, suggest
from ..graph import namespaces, record
from ..graph.dual import tangent_of
from ..graph.functions import FUNCTIONS, check_arity
from ..graph.namespaces import TORCH, Namespace
from ..graph.program import Evaluator
from ..graph.tensor import AccumulateGrad, Function, Tensor
from ..graph.values import NO_GRAD, DType, NamedTuple, PyBuiltinType, ReturnTypes, type_name
from ..lang.tree import Ast
from . import (
    pyanomaly,  # noqa: F401  (registers detect_anomaly, set_detect_anomaly)
    pyattrs,  # (registers setattr, delattr)
    pyautograd,  # (registers torch.autograd, torch.nn, torch.optim)
    pybackends,  # noqa: F401  (registers torch.backends, use_deterministic_algorithms)
    pybuiltins,
    pycalls,
    pycheckpoint,  # noqa: F401  (registers torch.utils.checkpoint)
    pyclip,  # noqa: F401  (registers torch.nn.utils)
    pycompat,  # noqa: F401  (registers torch.accelerator, Variable, FloatTensor, ...)
    pycontext,
    pycustom,  # noqa: F401  (registers torch.autograd.Function)
    pydata,  # noqa: F401  (registers torch.utils.data)
    pydropout,  # noqa: F401  (registers nn.Dropout)
    pydunder,
    pyexec,
    pyexpr,
    pyfns7,  # noqa: F401  (registers index_fill_, put_, ..., torch.broadcast_shapes)
    pyforward_ad,  # noqa: F401  (registers torch.autograd.forward_ad)
    pyfunc,  # noqa: F401  (registers torch.func)
    pyfunctional_graph,  # noqa: F401  (registers torch.autograd.functional's create_graph)
    pyfunctorch,  # noqa: F401  (registers functorch)
    pygradcheck,  # noqa: F401  (registers torch.autograd.gradcheck, torch.autograd.function)
    pygradfn,  # (registers y.grad_fn(g))
    pygradgrad,  # noqa: F401  (registers torch.autograd.gradgradcheck)
    pyhooks,  # noqa: F401  (registers register_hook)
    pyindexadd,  # noqa: F401  (registers index_add_, index_add)
    pyinference,  # (registers inference_mode, is_inference_mode_enabled)
    pyinfo,  # noqa: F401  (registers torch.finfo, torch.iinfo, torch.is_tensor)
    pyinit,  # noqa: F401  (registers torch.nn.init)
    pyinplace,  # noqa: F401  (registers add_, mul_, clamp_, cos_, copy_, ...)
    pymodhooks,  # noqa: F401  (registers register_forward_hook, register_forward_pre_hook)
    pymodules,
    pynn,  # (registers torch.nn)
    pynn_act,  # noqa: F401  (registers nn.SiLU, nn.GELU, nn.Softplus, ...)
    pynn_more,  # noqa: F401  (registers the losses' signatures, nn.Identity, nn.Hardtanh, ...)
    pynodehooks,  # (grad_fn.register_hook/register_prehook, register_multi_grad_hook)
    pyoptim,  # noqa: F401  (registers torch.optim)
    pyorder,
    pypaste5,  # noqa: F401  (registers the names of pypaste5.py's modules)
    pypaste6,  # noqa: F401  (registers the names of pypaste6.py's modules)
    pyposthooks,  # noqa: F401  (registers register_post_accumulate_grad_hook)
    pyprint,  # (registers torch.set_printoptions)
    pyrandom,  # noqa: F401  (registers torch.random)
    pysaved,
    pysched,  # noqa: F401  (registers torch.optim.lr_scheduler)
    pysetitem,
    pystdlib,  # noqa: F401  (registers time, timeit, matplotlib, __name__)
    pystdrandom,  # noqa: F401  (registers random)
    pystorage,  # noqa: F401  (registers storage_offset)
    pythreading,  # noqa: F401  (registers threading)
    pyvalues,
    pyvmaprules,
    tensor_methods2,  # noqa: F401  (registers tolist, numel, ...)
    tensor_methods3,  # noqa: F401  (registers element_size, data_ptr)
    tensor_methods4,  # noqa: F401  (registers unfold, quantile)
)
from .methods import TENSOR_ATTRS, TENSOR_METHODS, check_kw, detach
from .pyrange import RangeList
from .pyvmapstate import FRAMES, check_mask, check_method
from .values import NOTHING, DictView, PyNumber, Size, Str

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")


def fn_zero_grad(ev: Evaluator, node: Ast, args: list, kw: dict):
    check_arity(node, args, 0, kw)
    seen = set()
    journal = ev.journal
    for value in ev.env.values():
        if isinstance(value, Tensor) and value.is_leaf and id(value) not in seen:
            seen.add(id(value))
            if journal is not None:
                journal.keep(value, "grad")
            value.grad = None
    return NOTHING


def fn_print(ev: Evaluator, node: Ast, args: list, kw: dict):
    check_kw(node, kw, ())
    ev.printed.append(" ".join(a if isinstance(a, str) else show(ev, a) for a in args))
    return NOTHING


def fn_no_grad(ev: Evaluator, node: Ast, args: list, kw: dict):
    check_arity(node, args, 0, kw)
    return NO_GRAD


def fn_is_grad_enabled(ev: Evaluator, node: Ast, args: list, kw: dict):
    check_arity(node, args, 0, kw)
    return record.GRAD_MODE.enabled


REPL_FUNCTIONS = {
    "zero_grad": fn_zero_grad,
    "print": fn_print,
    "println": fn_print,
    "no_grad": fn_no_grad,
    "is_grad_enabled": fn_is_grad_enabled,
}
pyvmaprules.register(REPL_FUNCTIONS)  # (F.linear under vmap: the batch's rows)


# --- the REPL's Python (ddx/app/py*.py), handed to the Evaluator through this surface ------
run_stmt = pyexec.run_stmt
python_binary = pyorder.python_binary
compound = pyexpr.compound


def user_getitem(ev: Evaluator, node: Ast, obj: Any, key: Any) -> Any:
    """``obj[key]`` of a user's class with __getitem__ (NotImplemented for anything else);
    inside vmap, a mapped boolean mask is refused, as PyTorch's vmap refuses it."""
    if FRAMES and isinstance(obj, Tensor):
        check_mask(key)
    if pydunder.method(obj, "__getitem__") is None:
        return NotImplemented
    return pydunder.getitem(ev, node, obj, key)


def user_text(ev: Evaluator, obj: Any, kind: str) -> str | None:
    """str()/repr() of a user's object through its __str__/__repr__ (None: it has none)."""
    return pydunder.text(ev, Ast("name", "", (), (), 0, 0), obj, kind)


def call_value(ev: Evaluator, node: Ast, fn: Any, args: list, kw: dict) -> Any:
    """Call a value (pycalls.call_value); a grad_fn node computes its gradient (pygradfn)."""
    if isinstance(fn, (Function, AccumulateGrad)):
        return pygradfn.call_node(ev, node, fn, args, kw)
    user_call = pydunder.method(fn, "__call__")
    if user_call is not None:  # (a user's class with __call__)
        return pycalls.call_user(ev, node, user_call, [fn, *args], kw)
    return pycalls.call_value(ev, node, fn, args, kw)


assign_item = pysetitem.assign_item
run_with = pycontext.run_with


def builtin(name: str, functions) -> Any:
    """A Python builtin (len, range, RuntimeError, ...) by name, unless ``functions`` (ddx's
    own, looked up first) has it; print, sum, max, min, abs and round are always the
    builtins' (which send tensors on to the ops)."""
    if name in pybuiltins.OVERRIDES or name not in functions:
        return pybuiltins.BUILTINS.get(name)
    return None


def set_attr(ev: Evaluator, target: Ast, obj: Any, name: str, value: Any) -> bool:
    if isinstance(obj, pynn.Builtin):  # (model.weight = ..., a module ddx provides)
        pyattrs.set_module_attr(obj, name, value)
        return True
    return pyexpr.set_attr(ev, target, obj, name, value)


def _grad_tensor(ev: Evaluator, t: Tensor) -> Any:
    if not t.is_leaf and not t.retains_grad:
        ev.warnings.append(NONLEAF_GRAD_WARNING)
    if t.grad is None:
        return None
    if t in pyautograd.GRAD_GRAPHS:  # backward(create_graph=True)'s differentiable .grad
        got = pyautograd.grad_tensor(t)
        if got is not None:
            return got
    g = Tensor(t.grad)
    g.label = f"{t.display}.grad"
    g.name = None
    return g


def get_attr(ev: Evaluator, node: Ast, obj: Any) -> Any:
    name = node.value
    if isinstance(obj, Namespace) and name not in obj.children:
        return pymodules.member(ev, obj, name, start=node.pos, end=node.end)
    if not isinstance(obj, (Tensor, Function, AccumulateGrad)):
        got = pyexpr.get_attr(ev, node, obj, name)
        if got is not NotImplemented:
            return got
    if not (isinstance(obj, Tensor) and name in _TENSOR_ATTRS):
        got = namespaces.get_attr(ev, node, obj)  # (modules, named results, .T and .mT)
        if got is not NotImplemented:
            return got
    if isinstance(obj, Tensor) and not obj.weak:
        if name == "grad":
            return _grad_tensor(ev, obj)
        if name == "grad_fn":
            return obj.grad_fn
        if name == "requires_grad":
            return obj.requires_grad
        if name == "is_leaf":
            return obj.is_leaf
        if name == "retains_grad":
            return obj.retains_grad
        if name == "shape":
            return Size(obj.value.shape)
        if name == "dtype":
            return DType(obj.value.dtype)
        if name == "ndim":
            return int(obj.value.ndim)
        if name == "device":
            return pymodules.Device("cpu")
        if name == "is_cuda":
            return False
        if name == "data":
            return detach(ev, node, obj)
        if name == "T":
            return FUNCTIONS["transpose"](ev, node, [obj], {})
        if name == "_version":
            return pyinference.version(obj)
        raise _no_attr(node, "'Tensor' object", TENSOR_ATTRS + list(TENSOR_METHODS))
    if isinstance(obj, (Function, AccumulateGrad)):
        if name == "next_functions":
            return obj.next_functions
        if name == "metadata":
            return pygradfn.metadata(obj)
        if name == "variable" and isinstance(obj, AccumulateGrad):
            return obj.variable
        if name.startswith("_saved_") and isinstance(obj, Function):
            got = pysaved.saved(obj, name)
            if got is NotImplemented:
                got = pygradfn.saved_more(obj, name)
            if got is not NotImplemented:
                return got
        if name.startswith("_raw_saved_") and isinstance(obj, Function):
            got = pycontext.raw_saved(obj, name)
            if got is not NotImplemented:
                return got
        raise _no_attr(node, f"'{obj.name}' object", ["next_functions", "name"] +
                       (["variable"] if isinstance(obj, AccumulateGrad) else []))
    raise DdxTypeError(f"{type_name(obj)} has no attribute '{name}'", start=node.pos,
                       end=node.end)


_TENSOR_ATTRS = frozenset(("grad", "grad_fn", "requires_grad", "is_leaf", "shape", "dtype",
                           "ndim", "data", "device", "is_cuda", "_version"))


def _no_attr(node: Ast, what: str, choices: list) -> DdxTypeError:
    close = suggest(node.value, choices)
    return DdxTypeError(f"{what} has no attribute '{node.value}'" +
                        (f"; did you mean '{close}'?" if close else ""),
                        start=node.pos, end=node.pos + len(node.value))


def call_method(ev: Evaluator, node: Ast, obj: Any, args: list, kw: dict) -> Any:
    name = node.value
    if FRAMES and args:  # (what vmap refuses: .item(), nonzero, in place into the unmapped)
        check_method(name, obj if isinstance(obj, Tensor) else args[0],
                     args if isinstance(obj, Tensor) else args[1:])
    elif FRAMES and isinstance(obj, Tensor):
        check_method(name, obj, [])
    if isinstance(obj, Namespace):
        extra = pymodules.EXTRA.get(obj.path, {}).get(name)
        if extra is not None:
            return call_value(ev, node, extra, args, kw)
        return namespaces.call_method(ev, node, obj, args, kw)
    if not isinstance(obj, (Tensor, Function, AccumulateGrad, PyNumber)):
        got = pyexpr.call_method(ev, node, obj, name, args, kw)
        if got is not NotImplemented:
            return got
    if isinstance(obj, (Function, AccumulateGrad)):
        if name == "name":
            return Str(("torch::autograd::" + obj.name if obj.name == "CopySlices" else obj.name)
                       if isinstance(obj, Function) else "torch::autograd::AccumulateGrad")
        got = pynodehooks.register_node_hook(ev, node, obj, name, args, kw)
        if got is not NotImplemented:
            return got
        raise _no_attr(node, f"'{obj.name}' object", ["name", "register_hook",
                                                       "register_prehook"])
    if isinstance(obj, PyNumber):
        obj = Tensor(np.asarray(obj.raw))
    if isinstance(obj, Tensor) and not obj.weak:
        method = TENSOR_METHODS.get(name)
        if method is not None:
            return method(ev, node, obj, args, kw)
        got = namespaces.call_method(ev, node, obj, args, kw)  # x.sum(), x.exp(), x.pow(2)
        if got is not NotImplemented:
            return got
        raise namespaces.missing(node, "'Tensor' object", list(TENSOR_METHODS) + [
            n for n in ev.functions if "Tensor" in namespaces.spaces_of(n)])
    if obj is None or isinstance(obj, (bool, PyNumber)) or isinstance(obj, Tensor) and obj.weak:
        # (Python's AttributeError: x.grad.zero_() before any backward)
        raise DdxTypeError(f"'{pyvalues.type_label(obj)}' object has no attribute '{name}'",
                           start=node.pos, end=node.end)
    raise DdxTypeError(f"{type_name(obj)} has no method '{name}'", start=node.pos, end=node.end)


def show(ev: Evaluator, value: Any) -> str:
    """A value printed as Python and PyTorch print it."""
    from ..out.torchfmt import dtype_repr, size_repr, tensor_repr

    if value is None:
        return "None"
    if isinstance(value, pyvalues.Instance):
        got = user_text(ev, value, "repr")  # (the user's __repr__)
        if got is not None:
            return got
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, PyNumber):
        return repr(value.raw)
    if isinstance(value, Str):
        return repr(str(value))
    if isinstance(value, Size):
        return size_repr(value)
    if isinstance(value, DType):
        return repr(value) if isinstance(value, PyBuiltinType) else dtype_repr(value.np)
    if isinstance(value, Tensor):
        if value.weak:
            v = value.value.item()
            return repr(v)
        tangent = tangent_of(value)
        text = tensor_repr(value.value, requires_grad=value.requires_grad, default=ev.dtype,
                           options=pyprint.options_of(ev),
                           grad_fn=value.grad_fn.name if value.grad_fn is not None else None,
                           is_leaf=value.is_leaf,
                           tangent=None if tangent is None else str(tangent.value.item())
                           if tangent.value.ndim == 0 else show(ev, tangent))
        return "Parameter containing:\n" + text if value in pynn.PARAMETERS else text
    if isinstance(value, (Function, AccumulateGrad)):
        custom = isinstance(value, Function) and value.op.name.startswith("custom_")
        where = "torch.autograd.function." if custom else ""  # (a user's autograd.Function)
        return f"<{where}{value.name} object at {ev.addresses.of(value)}>"
    if isinstance(value, NamedTuple):
        parts = ", ".join(f"{f}={show(ev, v)}" for f, v in zip(value.fields, value))
        return f"{value.name}({parts})"
    if isinstance(value, ReturnTypes):  # torch.return_types.max(values=..., indices=...)
        parts = ",\n".join(f"{f}={show(ev, v)}" for f, v in zip(value.fields, value))
        return f"torch.return_types.{value.name}(\n{parts})"
    if isinstance(value, tuple):
        inner = ", ".join(show(ev, v) if not isinstance(v, int) or isinstance(v, bool)
                          else str(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, RangeList) and value.range_text is not None:
        return value.range_text
    if isinstance(value, list):
        text = "[" + ", ".join(show(ev, v) for v in value) + "]"
        return f"{value.kind}({text})" if isinstance(value, DictView) else text
    if isinstance(value, OrderedDict):  # (a module's state_dict())
        return "OrderedDict([" + ", ".join(f"({show(ev, k)}, {show(ev, v)})"
                                           for k, v in value.items()) + "])"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{show(ev, k)}: {show(ev, v)}" for k, v in value.items()) + "}"
    if isinstance(value, set):
        return "{" + ", ".join(show(ev, v) for v in value) + "}" if value else "set()"
    if value is NO_GRAD or value is TORCH:
        return repr(value)
    if pynn.is_module(value):
        return pynn.module_repr(value, ev)
    return repr(value)
