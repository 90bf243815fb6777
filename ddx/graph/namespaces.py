"""PyTorch's namespaces (torch, torch.nn, torch.nn.functional as F, torch.linalg,
torch.special) and the functions each one has, from the op table's ``spaces``; named
results (torch.return_types.max); and the calls ``torch.X(...)``, ``F.X(...)`` and
``x.X(...)`` that one-liners and the REPL share."""

from __future__ import annotations

import os
from typing import Any

from ..errors import DdxNameError, DdxTypeError
from ..lang.tree import Ast
from ..ops import CALLS
from . import functions
from .outarg import call_with_out
from .tensor import Tensor
from .values import DTYPES, DType, ReturnTypes


class Namespace:
    """A PyTorch module: ``torch``, ``torch.nn.functional``, ... ``space`` is the name the
    op table's rows use for it (Op.spaces); ``children`` its submodules."""

    __slots__ = ("path", "space", "children")

    def __init__(self, path: str, space: str | None) -> None:
        self.path = path
        self.space = space
        self.children: dict[str, Namespace] = {}

    def __repr__(self) -> str:
        return f"<module '{self.path}'>"


TORCH = Namespace("torch", "torch")
NN = Namespace("torch.nn", None)
FUNCTIONAL = Namespace("torch.nn.functional", "F")
LINALG = Namespace("torch.linalg", "linalg")
SPECIAL = Namespace("torch.special", "special")
TORCH.children.update(nn=NN, linalg=LINALG, special=SPECIAL)
NN.children["functional"] = FUNCTIONAL
# names that need no import: what tutorials call them (import statements are the REPL's)
MODULES = {"torch": TORCH, "F": FUNCTIONAL}


def spaces_of(name: str) -> tuple[str, ...]:
    row = CALLS.get(name)
    if row is not None:
        return row.spaces
    return functions.NAMED_SPACES.get(name, ("torch",))  # (the REPL's own: torch.tensor)


def member(ev, ns: Namespace, node: Ast):
    """The function ``ns.name`` (a caller), or an error in PyTorch's words."""
    name = node.value
    if ns.space is not None and name in ev.functions and ns.space in spaces_of(name):
        return ev.functions[name]
    raise missing(node, ns.path, [n for n in ev.functions if ns.space in spaces_of(n)])


_PYTORCH: dict[str, set[str]] | None = None


def pytorch_has(space: str, name: str) -> bool:
    """Whether PyTorch 2.13 has ``name`` there (ddx/ops/pytorch_names.txt), for the message
    "'X' is not supported by ddx" instead of a wrong "did you mean"."""
    global _PYTORCH
    if _PYTORCH is None:
        path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops", "pytorch_names.txt")
        _PYTORCH = {}
        try:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if not line.startswith("#") and ":" in line:
                        key, _, names = line.partition(":")
                        _PYTORCH[key] = set(names.split())
        except OSError:
            pass
    return name in _PYTORCH.get(space, ())


_SPACE_OF_PATH = {"torch": "torch", "torch.nn.functional": "F", "torch.linalg": "linalg",
                  "torch.special": "special", "'Tensor' object": "Tensor"}


def missing(node: Ast, where: str, choices, *, kind: str = "function") -> Exception:
    """No such member: PyTorch's wording, "not supported by ddx" for what PyTorch has, and a
    "did you mean" only for a close name of the same kind."""
    from ..errors import suggest  # (difflib: on errors only)

    name = node.value
    space = _SPACE_OF_PATH.get(where)
    end = node.pos + len(name)
    if space is not None and pytorch_has(space, name):
        shown = f"Tensor.{name}" if space == "Tensor" else f"{where}.{name}"
        return DdxNameError(f"'{shown}' is not supported by ddx", start=node.pos, end=end)
    close = close_name(name, choices, suggest)
    label = f"module '{where}'" if not where.startswith("'") else where
    return DdxTypeError(f"{label} has no attribute '{name}'" +
                        (f"; did you mean '{close}'?" if close else ""), start=node.pos, end=end)


def close_name(name: str, choices, suggest) -> str | None:
    """A "did you mean" within a small edit distance: at most 1 edit for short names, 2 for
    longer ones (softmax is not max, inv is not sin)."""
    close = suggest(name, choices)
    if close is None:
        return None
    return close if edits(name.lower(), close.lower()) <= (1 if len(name) <= 4 else 2) else None


def edits(a: str, b: str) -> int:
    """Levenshtein distance (two rows, no recursion)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def get_attr(ev, node: Ast, obj: Any) -> Any:
    """``obj.name`` for what one-liners have too: submodules and dtypes of a namespace, named
    results' fields, and the tensor attributes that are ops (``.T``, ``.mT``); else
    NotImplemented (the REPL's surface has the rest)."""
    name = node.value
    if isinstance(obj, Namespace):
        if name in obj.children:
            return obj.children[name]
        if obj is TORCH and name in DTYPES:
            return DType(DTYPES[name])
        if name in ev.functions and obj.space in spaces_of(name):
            raise DdxTypeError(f"{obj.path}.{name} is a function: call it as "
                               f"{obj.path}.{name}(...)", start=node.pos, end=node.end)
        choices = list(obj.children) + (list(DTYPES) if obj is TORCH else [])
        raise missing(node, obj.path, choices + [n for n in ev.functions
                                                 if obj.space in spaces_of(n)])
    if isinstance(obj, ReturnTypes) and name in obj.fields:
        return obj.field(name)
    if isinstance(obj, Tensor) and not obj.weak:
        attr = functions.NAMED.get(f"{name}_attr")  # .T, .mT: ops on the tensor
        if attr is not None:
            return attr(ev, node, [obj], {})
    return NotImplemented


def call_method(ev, node: Ast, obj: Any, args: list, kw: dict) -> Any:
    """``torch.X(...)``, ``F.X(...)`` and ``x.X(...)`` for the functions of the op table (and
    the functions that are not one row); else NotImplemented."""
    name = node.value
    if isinstance(obj, Namespace):
        fn = member(ev, obj, node)
        if "out" in kw and obj.space == "torch":  # (torch.mul(a, b, out=t): outarg.py)
            return call_with_out(ev, node, fn, args, kw)
        return fn(ev, node, args, kw)
    if isinstance(obj, Tensor) and not obj.weak and name in ev.functions and \
            "Tensor" in spaces_of(name):
        return ev.functions[name](ev, node, [obj, *args], kw)
    return NotImplemented
