"""Binding names and attributes: assignment (a literal makes a leaf, SPEC §2), unpacking,
``x.requires_grad = ...`` and ``x.grad = ...`` as PyTorch checks them (an Evaluator mixin)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..lang.tree import Ast
from .compound import Literal, numeric
from .record import GRAD_MODE
from .tensor import Tensor
from .values import py_type, truth, type_name


def pair_targets(target: Ast, items: list) -> list:
    """The (target, value) pairs of unpacking ``items`` into a tuple or list target, one
    starred name taking the rest as a list (``first, *rest = xs``), with Python's errors."""
    kids = target.kids
    stars = [i for i, k in enumerate(kids) if k.kind == "star"]
    if len(stars) > 1:
        raise DdxTypeError("multiple starred expressions in assignment", start=target.start,
                           end=target.end)
    if not stars:
        if len(items) != len(kids):
            raise DdxValueError(
                f"not enough values to unpack (expected {len(kids)}, got {len(items)})"
                if len(items) < len(kids) else f"too many values to unpack (expected "
                f"{len(kids)})", start=target.start, end=target.end)
        return list(zip(kids, items))
    k = stars[0]
    after = len(kids) - k - 1
    if len(items) < len(kids) - 1:
        raise DdxValueError(f"not enough values to unpack (expected at least {len(kids) - 1}, "
                            f"got {len(items)})", start=target.start, end=target.end)
    rest = items[k:len(items) - after]
    return [*zip(kids[:k], items[:k]), (kids[k].kids[0], list(rest)),
            *zip(kids[k + 1:], items[len(items) - after:])]


class Binding:
    """The Evaluator's assignments (a mixin: the Evaluator gives env, journal, repl, nodes,
    dtype, evaluate, op and surface)."""

    def assign(self, target: Ast, value: Any) -> Any:
        if target.kind == "attr":
            return self.set_attr(target, value)
        if target.kind in ("tuple", "vec"):  # a, b = ...; [a, b] = ...
            return self.unpack(target, value)
        if target.kind == "index" and self.surface is not None:  # x[mask] = 0, d[k] = v
            return self.surface.assign_item(self, target, value)
        if target.kind != "name":
            raise DdxTypeError("can only assign to a name or an attribute (x.requires_grad = true)",
                               start=target.start, end=target.end)
        name = target.value
        journal = self.journal
        plain = self.python_values  # (a .py file: numbers and lists stay Python's)
        if type(value) is Literal and value and numeric(value) and not plain:
            value = self.literal_tensor(value)  # x = [1., 2.]: a leaf, as in ddx's expression
        if isinstance(value, Tensor):  # language (SPEC §2)
            if value.weak and self.repl and (plain or value.value.dtype.kind in "iub"):
                pass  # n = 10 in the REPL: a Python int (an int cannot require grad)
            elif value.const:
                value = self.make_leaf(name, value.value, start=target.start)
            elif value.name is None and not value.weak:
                if journal is not None:
                    journal.keep(value, "name")
                value.name = name
            elif value.weak:
                value = self.make_leaf(name, value.value, start=target.start)
        if journal is not None:
            journal.bind(self.env, name, value)
        else:
            self.env[name] = value
        return value

    def unpack(self, target: Ast, value: Any) -> Any:
        """``a, b = value``: a tuple, a list or a tensor's rows, one per name (explicit stack
        for nested targets)."""
        work = [(target, value)]
        while work:
            tgt, val = work.pop()
            if tgt.kind not in ("tuple", "vec"):
                self.assign(tgt, val)
                continue
            if isinstance(val, Tensor) and not val.weak and val.value.ndim:
                val = tuple(self.op("select", tgt, [val], {"key": (i,)},  # (iteration: unbind)
                                    grad_fn="UnbindBackward0")
                            for i in range(val.value.shape[0]))
            if not isinstance(val, (tuple, list)):
                raise DdxTypeError(f"cannot unpack non-iterable {py_type(val)} object",
                                   start=tgt.start, end=tgt.end)
            work.extend(reversed(pair_targets(tgt, list(val))))
        return value

    def make_leaf(self, name: str, raw, *, start: int | None = None, dtype=None) -> Tensor:
        """A named leaf (x = 2, or a binding): float, requiring grad unless told otherwise.

        In the REPL the value is a copy: a literal's array is cached with the parsed text, and
        an in-place op on the leaf (x.zero_()) must not change every later ``x = 2.0``."""
        arr = (np.array(raw, dtype=dtype or self.dtype) if self.repl
               else np.asarray(raw, dtype=dtype or self.dtype))
        t = Tensor(arr, False, name=name, span=(start, start) if start is not None else None)
        t.requires_grad = self.leaf_requires(name) and GRAD_MODE.enabled
        self.nodes.append(t)
        return t

    def set_attr(self, target: Ast, value: Any) -> Any:
        obj = self.evaluate(target.kids[0])
        if self.surface is not None and not isinstance(obj, Tensor) and \
                self.surface.set_attr(self, target, obj, target.value, value):
            return None  # an attribute of the user's object (self.w = ...)
        if not isinstance(obj, Tensor) or obj.weak:
            raise DdxTypeError(f"cannot set .{target.value} on {type_name(obj)}")
        journal = self.journal
        if target.value == "requires_grad":
            flag = truth(value)
            if journal is not None:
                journal.keep(obj, "requires_grad")
            obj.set_requires_grad(flag, via="attr")
        elif target.value == "grad":
            if value is None:
                grad = None
            elif isinstance(value, Tensor) and not value.weak:
                if value is obj:
                    raise DdxRuntimeError("can't assign Variable as its own grad")
                if value.value.dtype != obj.value.dtype:
                    raise DdxRuntimeError("assigned grad has data of a different type",
                                          hint=f"the tensor is {obj.value.dtype}, the grad "
                                               f"{value.value.dtype}")
                if value.value.shape != obj.value.shape:
                    raise DdxRuntimeError("assigned grad has data of a different size",
                                          hint=f"the tensor has shape {list(obj.value.shape)}, "
                                               f"the grad {list(value.value.shape)}")
                grad = np.array(value.value)  # (a copy: .grad never aliases another value)
            else:
                raise DdxTypeError("assigned grad expected to be a Tensor or None but got grad "
                                   f"of type {py_type(value)}")
            if journal is not None:
                journal.set(obj, "grad", grad)
            else:
                obj.grad = grad
        elif target.value == "data":  # (x.data = y: x holds y's values, as set_data does;
            if not isinstance(value, Tensor) or value.weak:  # its grad and node stay)
                raise DdxTypeError(f"Variable data has to be a tensor, but got "
                                   f"{py_type(value)}")
            if journal is not None:
                journal.set(obj, "value", value.value)
            else:
                obj.value = value.value
        else:
            raise DdxTypeError(f"cannot set attribute '{target.value}'")
        return None
