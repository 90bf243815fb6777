"""The replay's JSON text: node fields as json.dumps writes them, numbers, the document."""

from __future__ import annotations

import json
import re
from math import isfinite

import numpy as np

from ..fmt import jsonable

_OP_JSON: dict[tuple, str] = {}  # (op, grad_fn) -> its two JSON fields
_MIDDLE_JSON: dict[tuple, str] = {}  # (shape, requires_grad, is_leaf) -> the JSON between


# printable ASCII but '"', '\\' and '%': what json.dumps writes as it is (and %-formats keep)
PLAIN_TEXT = re.compile(r'[ !#$&-\[\]-~]*').fullmatch


def _jstr(text: str) -> str:
    """json.dumps of a string; plain printable ASCII (names, labels) written directly."""
    return f'"{text}"' if PLAIN_TEXT(text) else json.dumps(text)


def op_fields(op: str, grad_fn: str | None) -> str:
    """A node's "op" and "grad_fn" fields, as json.dumps writes them."""
    text = _OP_JSON.get((op, grad_fn))
    if text is None:
        _OP_JSON[op, grad_fn] = text = (f'"op": {_jstr(op)}, "grad_fn": '
                                       f'{"null" if grad_fn is None else _jstr(grad_fn)}')
    return text


def middle_fields(shape: tuple, rg: bool, leaf: bool) -> str:
    """The fields between a node's value and its grad, and the grad's %s."""
    text = _MIDDLE_JSON.get((shape, rg, leaf))
    if text is None:
        if len(_MIDDLE_JSON) > 4096:
            _MIDDLE_JSON.clear()
        _MIDDLE_JSON[shape, rg, leaf] = text = (
            f', "shape": [{", ".join(map(str, shape))}], "requires_grad": '
            f'{"true" if rg else "false"}, "is_leaf": {"true" if leaf else "false"}, '
            '"grad": %s}')
    return text


def _fixed(text: str) -> str:
    """Text for a %-format that prints as itself."""
    return text.replace("%", "%%")


def node_format(i: int, name: str, kind: str, inputs: list[int], middle: str) -> str:
    """One node's JSON object as a %-format (its value's and grad's ``%s``), from the parts
    static_rows gives."""
    name = f'"{name}"' if PLAIN_TEXT(name) else _fixed(json.dumps(name))
    # (a list of ints prints as JSON does)
    return f'{{"id": {i}, "name": {name}, {kind}, "inputs": {inputs}, "value": %s{middle}'


# A JSON object already written out, without its opening brace: what ``json.dumps`` of the
# same dict would give after ``{``, so a caller can put ``"line": N, `` in front. (A plain
# str: a subclass would copy each document once more.)
JsonBody = str


def dump(value) -> str:
    """json.dumps(jsonable(value)), with the common scalar case written directly."""
    if value is None:
        return "null"
    if type(value) is np.float64 and isfinite(value):  # np.float64 is a float: no .item()
        return float.__repr__(value)
    if type(value) is np.float64 or (type(value) is np.ndarray and value.ndim == 0):
        x = value.item()
        if type(x) is float:
            if x - x == 0:  # finite
                return repr(x)
            return '"nan"' if x != x else ('"inf"' if x > 0 else '"-inf"')
        if type(x) is bool:
            return "true" if x else "false"
        if type(x) is int:
            return repr(x)
    return json.dumps(jsonable(value))


_NONFINITE = frozenset(("nan", "inf", "-inf"))


def texts(values: list) -> list[str]:
    """[dump(v) for v in values]; all finite float64 scalars (the common case) at C speed."""
    try:
        written = list(map(float.__repr__, values))  # (np.float64 is a float; None, arrays raise)
    except TypeError:
        return [dump(v) for v in values]
    return written if _NONFINITE.isdisjoint(written) else [dump(v) for v in values]


def document_format(head: dict, grad_names: list[str], nodes: str,
                    warnings: list[str] = ()) -> str:
    """THE document (SPEC section 4), after its opening brace, as a %-format: its fixed fields
    as json.dumps writes them and a ``%s`` for the output's value, then each gradient; the
    nodes' part ``nodes`` comes in written (node_format, or a template's own columns). Both
    the replayed documents and a built trace's (app/tracejson.py) are written here."""
    grads = ", ".join([f"{_fixed(_jstr(name))}: %s" for name in grad_names])
    grad_fn = "null" if head["grad_fn"] is None else _jstr(head["grad_fn"])
    notes = "[]" if not warnings else _fixed(json.dumps(list(warnings)))
    # (the shape is a list of ints, which prints as json.dumps writes it)
    return (f'"output": {_fixed(_jstr(head["output"]))}, "value": %s, "shape": '
            f'{head["shape"]}, "dtype": {_jstr(head["dtype"])}, "grad_fn": {grad_fn}, '
            f'"gradients": {{{grads}}}, "nodes": [{nodes}], "warnings": {notes}}}')


class JsonDocument:
    """Template's JSON document as one %-format (a mixin: it reads Template's ``statics``,
    ``fmt``, ``head`` and ``grads_at``)."""

    __slots__ = ()

    def static_rows(self) -> list[tuple]:
        """Per node, what its JSON says whatever the numbers: id, name, its "op" and "grad_fn"
        fields (op_fields), inputs, and the fields from "shape" to "grad" (middle_fields). A
        template compiled from the text works these out only when they are asked for."""
        if callable(self.statics):
            self.statics = self.statics()
        return self.statics

    def json_format(self) -> str:
        """The whole JSON document (after its opening brace) as one %-format, written once:
        every fixed field as json.dumps writes it, and a ``%s`` for each number that a replay
        fills in: the output's value, each gradient, then every node's value and grad.

        ``fmt`` starts as None (written from static_rows) or, for a template compiled from
        the text, a function that writes the nodes' part straight from its columns."""
        fmt = self.fmt
        if type(fmt) is not str:
            if fmt is None:
                nodes = ", ".join([node_format(i, name, kind, inputs, middle) for
                                   i, name, kind, inputs, middle in self.static_rows()])
            else:
                nodes = fmt()
            fmt = self.fmt = document_format(self.head, [name for name, _ in self.grads_at],
                                             nodes)
        return fmt
