"""Item assignment, ``target[key] = value``, as Python and PyTorch do it: a dict's key, a list's
item or slice, and a tensor's elements (``grad_h[h < 0] = 0``, ``x[0] = 1``, ``x[:, 1] = y``)
written in place, cast to the tensor's dtype. Every change goes into the statement's undo
log, so a failing statement changes nothing. A tensor write that autograd would record (grad
mode on and the tensor or the value requires grad) is refused on a leaf with PyTorch's
words; elsewhere it is recorded as PyTorch's CopySlices or IndexPutBackward0 node
(pycopyslices)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxShapeError, DdxTypeError
from ..graph import record
from ..graph.tensor import Tensor, changed_in_place
from ..graph.values import py_type
from .methods import check_in_place
from .pycopyslices import record_item


def _restore(lst: list, old: list, _: Any) -> None:
    lst[:] = old


def _python_key(value: Any) -> Any:
    return value.value.item() if isinstance(value, Tensor) and value.weak else value


def _sub_values(ev, target) -> list:
    values = []
    for sub in target.value:
        if isinstance(sub, tuple):  # ("slice", start, stop, step): the parts given
            values.append(slice(*[None if p is None else ev.evaluate(p) for p in sub[1:]]))
        else:
            values.append(ev.evaluate(sub))
    return values


def assign_item(ev, target, value: Any) -> Any:
    """``target[key] = value`` (target is an index node); the value assigned is returned."""
    base = ev.evaluate(target.kids[0])
    keys = _sub_values(ev, target)
    if isinstance(base, dict) and len(keys) == 1:
        key = _python_key(keys[0])
        if ev.journal is not None:
            ev.journal.bind(base, key, value)
        else:
            base[key] = value
        return value
    own = getattr(base, "py_set_items", None)  # (a numpy array: a[1, 1] = 23)
    if own is not None:
        own(ev, keys, value)
        return value
    if hasattr(base, "py_setitem") and len(keys) == 1:  # (nn.ModuleDict, nn.ModuleList)
        base.py_setitem(ev, keys[0], value)
        return value
    if isinstance(base, list) and len(keys) == 1:
        _list_item(ev, target, base, keys[0], value)
        return value
    if isinstance(base, Tensor) and not base.weak:
        if len(keys) == 1 and type(keys[0]) is tuple:  # (idx = (1, 2); x[idx] = v)
            keys = list(keys[0])
        _tensor_item(ev, target, base, keys, value)
        return value
    raise DdxTypeError(f"'{py_type(base)}' object does not support item assignment",
                       start=target.start, end=target.end)


def _int(ev, value: Any, target) -> int | None:
    return None if value is None else ev.int_arg(value, target)


def _list_item(ev, target, lst: list, key: Any, value: Any) -> None:
    if ev.journal is not None:
        ev.journal.undo.append((_restore, lst, list(lst), None))
    if isinstance(key, slice):
        from .pyvalues import iterate

        lst[slice(_int(ev, key.start, target), _int(ev, key.stop, target),
                  _int(ev, key.step, target))] = list(iterate(ev, value, target))
        return
    i = ev.int_arg(key, target)
    if not -len(lst) <= i < len(lst):
        exc = DdxShapeError("list assignment index out of range", start=target.start,
                            end=target.end)
        exc.python_kind = "IndexError"
        raise exc
    lst[i] = value


def _restore_dict(d: dict, old: dict, _: Any) -> None:
    d.clear()
    d.update(old)


def delete_item(ev, target) -> None:
    """``del lst[i]``, ``del lst[a:b]``, ``del d[key]``, as Python does them (undone with the
    statement if it fails)."""
    base = ev.evaluate(target.kids[0])
    keys = _sub_values(ev, target)
    where = {"start": target.start, "end": target.end}
    if isinstance(base, dict) and len(keys) == 1:
        key = _python_key(keys[0])
        if key not in base:
            from .pyerrors import PyException
            raise PyException.error("KeyError", repr(key))
        if ev.journal is not None:
            ev.journal.undo.append((_restore_dict, base, dict(base), None))
        del base[key]
        return
    if isinstance(base, list) and len(keys) == 1:
        key = keys[0]
        if ev.journal is not None:
            ev.journal.undo.append((_restore, base, list(base), None))
        if isinstance(key, slice):
            del base[slice(_int(ev, key.start, target), _int(ev, key.stop, target),
                           _int(ev, key.step, target))]
            return
        i = ev.int_arg(key, target)
        if not -len(base) <= i < len(base):
            exc = DdxShapeError("list assignment index out of range", **where)
            exc.python_kind = "IndexError"
            raise exc
        del base[i]
        return
    raise DdxTypeError(f"'{py_type(base)}' object doesn't support item deletion", **where)


def _numpy_key(ev, target, keys: list) -> tuple:
    out = []
    for k in keys:
        if isinstance(k, slice):
            out.append(slice(_int(ev, k.start, target), _int(ev, k.stop, target),
                             _int(ev, k.step, target)))
        elif k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, Tensor) and (k.weak or k.value.ndim == 0 and
                                        k.value.dtype.kind in "iu"):
            out.append(ev.int_arg(k, target))
        elif isinstance(k, Tensor) or isinstance(k, (list, tuple)):
            arr = k.value if isinstance(k, Tensor) else np.asarray(
                [x.value.item() if isinstance(x, Tensor) else x for x in k])
            if arr.dtype != np.bool_ and arr.dtype.kind not in "iu":
                raise DdxTypeError("tensors used as indices must be long, int, byte or bool "
                                   "tensors", start=target.start, end=target.end)
            out.append(arr)
        else:
            raise DdxTypeError(f"indices must be integers, slices, None, ..., lists or tensors, "
                               f"not {py_type(k)}", start=target.start, end=target.end)
    return tuple(out)


def _tensor_item(ev, target, t: Tensor, keys: list, value: Any) -> None:
    src = value.value if isinstance(value, Tensor) else np.asarray(
        [v.value.item() if isinstance(v, Tensor) else v for v in value]
        if isinstance(value, (list, tuple)) else value)
    if record.GRAD_MODE.enabled and (t.requires_grad or isinstance(value, Tensor) and
                                     value.requires_grad):
        if t.is_leaf and t.requires_grad:  # x[0] = v is a copy_ into a view; x[mask] = v not
            view = "" if any(isinstance(k, (Tensor, list, tuple)) and not _is_int(k)
                             for k in keys) else "view of a "
            raise DdxRuntimeError(f"a {view}leaf Variable that requires grad is being used in "
                                  "an in-place operation.")
        check_in_place(t)
        recorded = True
    else:
        recorded = False
    key = _numpy_key(ev, target, keys)
    arr = t.value
    try:
        if recorded:  # (a node of the graph: CopySlices, IndexPutBackward0)
            record_item(ev, target, t, key, value, src)
            return
        if ev.journal is not None:
            ev.journal.overwrite(arr)
        if not arr.flags.writeable:
            t.value = arr = np.array(arr)
        with np.errstate(invalid="ignore"):
            arr[key] = src
        changed_in_place(ev.journal, t)
    except IndexError as exc:
        text = str(exc).replace(" axis ", " dimension ")
        err = DdxShapeError(text, start=target.start, end=target.end)
        err.python_kind = "IndexError"
        raise err from None
    except ValueError:
        got = list(np.shape(arr[key]))
        advanced = any(isinstance(k, np.ndarray) for k in key)
        raise DdxRuntimeError(_mismatch(list(np.shape(src)), got, advanced),
                              start=target.start, end=target.end) from None


def _is_int(k: Any) -> bool:
    return isinstance(k, Tensor) and (k.weak or k.value.ndim == 0 and k.value.dtype.kind in "iu")


def _mismatch(src: list, got: list, advanced: bool) -> str:
    """PyTorch's words: index_put_'s for an advanced key, else copy_'s expand."""
    if advanced:
        return (f"shape mismatch: value tensor of shape {src} cannot be broadcast to indexing "
                f"result of shape {got}")
    if len(src) > len(got):
        return (f"expand(torch.FloatTensor{{{src}}}, size={got}): the number of sizes provided "
                f"({len(got)}) must be greater or equal to the number of dimensions in the "
                f"tensor ({len(src)})")
    lead = len(got) - len(src)
    for i, n in enumerate(src):
        if n != 1 and n != got[lead + i]:
            return (f"The expanded size of the tensor ({got[lead + i]}) must match the existing "
                    f"size ({n}) at non-singleton dimension {lead + i}.  Target sizes: {got}.  "
                    f"Tensor sizes: {src}")
    return f"shape mismatch: value tensor of shape {src} cannot be broadcast to {got}"


__all__ = ["assign_item"]
