"""``with`` blocks over contexts other than grad modes, and the saved-tensor hooks:

- ``torch.autograd.profiler.profile(...)`` / ``torch.profiler.profile(...)``: the block runs;
  ``prof.key_averages().table()`` lists the ops the block ran (as ``aten::`` names) with
  their number of calls, most called first. ddx measures no per-op times, so the table has
  no time columns (PyTorch's times differ from run to run anyway).
- ``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)``: the block runs, and
  at its end ``pack_hook`` is called on every tensor the nodes made in it save (in the order
  the nodes were made), and ``unpack_hook`` on what it returned when the backward reaches
  that node. ddx's nodes keep their own inputs, so what ``unpack_hook`` returns is not used.
- ``torch.autograd.graph.save_on_cpu(pin_memory=...)``: the block runs (ddx's tensors are all
  on the CPU: packing them there and back changes nothing).
- ``grad_fn._raw_saved_self`` (and the other ``_raw_saved_*``): a SavedTensor whose
  ``register_hooks(pack_hook, unpack_hook)`` calls ``pack_hook`` on it at once, as PyTorch
  does, and ``unpack_hook`` when the backward runs the node."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import DdxTypeError
from ..graph.tensor import Function, Tensor
from ..ops import OPS
from . import pynodehooks, pysaved
from .pymodules import EXTRA, Native, PyModule
from .pyvalues import bind_name


def run_with(ev, stmt, ctx: Any) -> Any:
    """``with ctx [as name]:`` for a context with py_enter/py_exit."""
    value = ctx.py_enter(ev)
    name = (stmt.extra or {}).get("as")
    if name:
        bind_name(ev, name, value)
    try:
        result = None
        for inner in stmt.body:
            result = ev.run_inner(inner)
        return result
    finally:
        ctx.py_exit(ev)


def _call(ev, node, fn: Any, args: list) -> Any:
    from .pycalls import call_value

    return call_value(ev, node, fn, args, {})


class Profile:
    """What profile(...) gives: a context that notes the ops run inside it."""

    def __init__(self, node) -> None:
        self.node, self.start, self.ops = node, None, Counter()

    def __repr__(self) -> str:
        return "<torch.autograd.profiler.profile object>"

    def py_enter(self, ev) -> Profile:
        self.start = len(ev.nodes)
        return self

    def py_exit(self, ev) -> None:
        self.ops = Counter(_aten(t.op) for t in ev.nodes[self.start:] if t.op not in
                           ("leaf", "const"))

    def py_method(self, ev, node, name, args, kw):
        if name == "key_averages":
            return KeyAverages(self.ops)
        raise DdxTypeError(f"'profile' object has no attribute '{name}'", start=node.pos,
                           end=node.end)


def _aten(op: str) -> str:
    row = OPS.get(op)
    return "aten::" + (row.shown if row is not None and getattr(row, "shown", None) else op)


class KeyAverages:
    def __init__(self, ops: Counter) -> None:
        self.ops = ops

    def py_method(self, ev, node, name, args, kw):
        if name != "table":
            raise DdxTypeError(f"'EventList' object has no attribute '{name}'", start=node.pos,
                               end=node.end)
        from .values import Str

        rows = self.ops.most_common()
        width = max([len("Name")] + [len(n) for n, _ in rows]) + 2
        rule = "-" * width + "  " + "-" * 12
        lines = [rule, f"{'Name':>{width}}  {'# of Calls':>12}", rule]
        lines += [f"{n:>{width}}  {c:>12}" for n, c in rows]
        lines += [rule, "(ddx measures no per-op times)"]
        return Str("\n".join(lines))


def _profile(ev, node, args: list, kw: dict) -> Profile:
    return Profile(node)


class SavedTensorsHooks:
    def __init__(self, node, pack: Any, unpack: Any) -> None:
        self.node, self.pack, self.unpack, self.start = node, pack, unpack, 0

    def __repr__(self) -> str:
        return "<torch.autograd.graph.saved_tensors_hooks object>"

    def py_enter(self, ev) -> None:
        self.start = len(ev.nodes)

    def py_exit(self, ev) -> None:
        seen = set()
        for t in list(ev.nodes[self.start:]):
            fn = t.grad_fn
            if not isinstance(fn, Function) or id(fn) in seen:
                continue
            seen.add(id(fn))
            packed = []
            for name in pysaved.names(fn):
                value = pysaved.saved(fn, name)
                if isinstance(value, Tensor):
                    packed.append(_call(ev, self.node, self.pack, [value]))
            if packed:
                unpack_when_run(ev, self.node, fn, self.unpack, packed)


def unpack_when_run(ev, node, fn: Function, unpack: Any, packed: list) -> None:
    """unpack_hook on each packed value when the backward runs ``fn`` (after its pre-hooks,
    as PyTorch's unpacks its saved tensors); the node computes with its own saved values
    still, so what unpack_hook returns is not used."""
    from .pyhooks import current

    def hook() -> None:
        for value in packed:
            _call(current(ev), node, unpack, [value])
    pynodehooks.add_node_hook(ev, fn, "unpack", hook)


class SaveOnCpu:
    """save_on_cpu(pin_memory=False, device_type='cuda'): saved tensors packed to the CPU and
    back; every ddx tensor is on the CPU already, so the block just runs."""

    def __repr__(self) -> str:
        return "<torch.autograd.graph.save_on_cpu object>"

    def py_enter(self, ev) -> None:
        return None

    def py_exit(self, ev) -> None:
        return None


def _save_on_cpu(ev, node, args: list, kw: dict) -> SaveOnCpu:
    for name in kw:
        if name not in ("pin_memory", "device_type"):
            raise DdxTypeError(f"save_on_cpu.__init__() got an unexpected keyword argument "
                               f"'{name}'", start=node.pos, end=node.end)
    if len(args) > 2:
        raise DdxTypeError("save_on_cpu() takes pin_memory and device_type",
                           start=node.pos, end=node.end)
    return SaveOnCpu()


def _saved_tensors_hooks(ev, node, args: list, kw: dict) -> SavedTensorsHooks:
    given = list(args) + [kw[k][0] for k in ("pack_hook", "unpack_hook") if k in kw]
    if len(given) != 2:
        raise DdxTypeError("saved_tensors_hooks() takes pack_hook and unpack_hook",
                           start=node.pos, end=node.end)
    return SavedTensorsHooks(node, *given)


class SavedTensor:
    """grad_fn._raw_saved_<attr>."""

    def __init__(self, fn: Function, name: str) -> None:
        self.fn, self.name = fn, name

    def __repr__(self) -> str:
        return "<torch._C._autograd.SavedTensor object>"

    def py_method(self, ev, node, name, args, kw):
        if name != "register_hooks":
            raise DdxTypeError(f"'torch._C._autograd.SavedTensor' object has no attribute "
                               f"'{name}'", start=node.pos, end=node.end)
        if len(args) != 2:
            raise DdxTypeError("register_hooks() takes pack_hook and unpack_hook",
                               start=node.pos, end=node.end)
        value = pysaved.saved(self.fn, self.name)
        if isinstance(value, Tensor):  # (PyTorch hands pack_hook the saved data, detached)
            packed = _call(ev, node, args[0], [Tensor(value.value)])
            unpack_when_run(ev, node, self.fn, args[1], [packed])
        return None


def raw_saved(fn: Function, name: str) -> Any:
    """grad_fn._raw_saved_self: a SavedTensor, or NotImplemented where there is no such
    saved tensor."""
    saved_name = "_saved_" + name[len("_raw_saved_"):]
    if saved_name not in pysaved.names(fn):
        return NotImplemented
    return SavedTensor(fn, saved_name)


PROFILER = PyModule("torch.autograd.profiler", {"profile": Native("profile", _profile)})
GRAPH = PyModule("torch.autograd.graph", {
    "saved_tensors_hooks": Native("saved_tensors_hooks", _saved_tensors_hooks),
    "save_on_cpu": Native("save_on_cpu", _save_on_cpu),
    "register_multi_grad_hook": Native("register_multi_grad_hook",
                                       pynodehooks.multi_grad_hook)})


def register() -> None:
    EXTRA["torch.autograd"].setdefault("profiler", PROFILER)
    EXTRA["torch.autograd"].setdefault("graph", GRAPH)
    EXTRA["torch"].setdefault("profiler", PyModule("torch.profiler", {
        "profile": Native("profile", _profile)}))


register()

__all__ = ["Profile", "SavedTensor", "raw_saved", "run_with"]
