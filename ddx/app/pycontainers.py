"""torch/nn/modules/container.py in the REPL's Python: Sequential from an OrderedDict (named
children) with append/insert/extend, ModuleList, ModuleDict, ParameterList and ParameterDict,
printed as PyTorch prints them (ModuleList folds a run of equal children into
``(0-2): 3 x Linear(...)``); and ``collections.OrderedDict`` to build them from."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..errors import DdxTypeError
from ..graph.create_args import torch_type
from ..graph.tensor import Tensor
from .pyerrors import PyException
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pynn import PARAMETERS, Builtin, Sequential, is_module, module_repr, own, parameter
from .values import Str


def _keep(ev, m: Builtin) -> None:
    """Before a container changes its children: the REPL's undo keeps the old ones."""
    if ev.journal is not None:
        ev.journal.keep(m, "state")
    m.state = dict(m.state)


def _index(key: Any, n: int, kind: str) -> int:
    i = key.value.item() if isinstance(key, Tensor) else key
    if isinstance(i, bool) or not isinstance(i, int):
        raise DdxTypeError(f"{kind} indices must be integers or slices, not {type(i).__name__}")
    if not -n <= i < n:
        raise PyException.error("IndexError", f"index {i} is out of range")
    return i + n if i < 0 else i


def _check_module(m: Any, kind: str) -> Any:
    if not is_module(m):
        raise DdxTypeError(f"{kind}: {type(m).__name__} is not a Module subclass")
    return m


def _items(given: Any) -> list:
    """The members of an iterable the user gives (a list, a tuple, a container)."""
    if hasattr(given, "py_iter"):
        return list(given.py_iter())
    if isinstance(given, (list, tuple)):
        return list(given)
    raise DdxTypeError(f"'{type(given).__name__}' object is not iterable")


def _pairs(given: Any) -> list:
    """A dict's items, or a list of [key, value] pairs, in order."""
    if isinstance(given, dict):
        return list(given.items())
    out = []
    for item in given:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise DdxTypeError("the elements of an iterable given to update() must be pairs")
        out.append((item[0], item[1]))
    return out


def _params_repr(kind: str, rows: list) -> str:
    """ParameterList's and ParameterDict's repr: their extra_repr's lines, inline when one."""
    lines = [f"  ({k}): Parameter containing: [{name} of size "
             f"{'x'.join(str(n) for n in p.value.shape)}]" for k, name, p in rows]
    if len(lines) == 1:
        return f"{kind}({lines[0]})"
    return "\n".join([f"{kind}(", *("  " + line for line in lines), ")"]) if lines else \
        f"{kind}()"


class Indexed(Builtin):
    """What ModuleList and ParameterList share: children named "0", "1", ... in order."""

    def items(self) -> list:
        return [v for k, v in self.state.items() if k != "training" and k.isdigit()]

    def renumber(self, items: list) -> None:
        for k in [k for k in self.state if k.isdigit()]:
            del self.state[k]
        for i, v in enumerate(items):
            self.state[str(i)] = v

    def py_len(self) -> int:
        return len(self.items())

    def py_iter(self):
        return iter(self.items())

    def py_getitem(self, key):
        items = self.items()
        if isinstance(key, slice):
            return type(self)(items[key])
        return items[_index(key, len(items), self.kind)]

    def py_setitem(self, ev, key, value) -> None:
        i = _index(key, len(self.items()), self.kind)
        _keep(ev, self)
        self.state[str(i)] = self.check(value)

    def py_method(self, ev, node, name, args, kw):
        items = self.items()
        if name in ("append", "extend", "insert", "pop"):
            _keep(ev, self)
        if name == "append":
            self.renumber(items + [self.check(args[0])])
            return self
        if name == "extend":
            self.renumber(items + [self.check(v) for v in _items(args[0])])
            return self
        if name == "insert":
            i = args[0].value.item() if isinstance(args[0], Tensor) else args[0]
            items.insert(i, self.check(args[1]))
            self.renumber(items)
            return None
        if name == "pop":
            i = _index(args[0] if args else -1, len(items), self.kind)
            got = items.pop(i)
            self.renumber(items)
            return got
        return super().py_method(ev, node, name, args, kw)


class ModuleList(Indexed):
    kind = "ModuleList"

    def __init__(self, mods: list) -> None:
        super().__init__()
        self.renumber([self.check(m) for m in mods])

    def check(self, m: Any) -> Any:
        return _check_module(m, "ModuleList")

    def own_repr(self) -> str:
        """ModuleList.__repr__: a run of children that print alike is one line."""
        kids = own(self)[1]
        if not kids:
            return "ModuleList()"
        lines, i = ["ModuleList("], 0
        while i < len(kids):
            text = module_repr(kids[i][1])
            j = i
            while j + 1 < len(kids) and module_repr(kids[j + 1][1]) == text:
                j += 1
            head = f"({i}): " if i == j else f"({i}-{j}): {j - i + 1} x "
            sub = text.split("\n")
            lines.append("  " + head + sub[0])
            lines.extend("  " + line for line in sub[1:])
            i = j + 1
        return "\n".join(lines + [")"])

    def forward(self, ev, node, args, kw):
        raise PyException.error("NotImplementedError", 'Module [ModuleList] is missing the '
                                'required "forward" function')


class ParameterList(Indexed):
    kind = "ParameterList"

    def __init__(self, params: list) -> None:
        super().__init__()
        self.renumber([self.check(p) for p in params])

    def check(self, p: Any) -> Any:
        if isinstance(p, Tensor) and p not in PARAMETERS:
            return parameter(None, None, [p], {})
        return p

    def own_repr(self) -> str:
        return _params_repr("ParameterList", [(str(i), f"torch.{p.value.dtype.name}", p)
                                              for i, p in enumerate(self.items())])


class Keyed(Builtin):
    """What ModuleDict and ParameterDict share: children by their string keys, in order."""

    def keys(self) -> list:
        return [k for k in self.state if k != "training"]

    def py_len(self) -> int:
        return len(self.keys())

    def py_iter(self):
        return iter([Str(k) for k in self.keys()])

    def py_contains(self, key) -> bool:
        return str(key) in self.keys()

    def py_getitem(self, key):
        if str(key) not in self.keys():
            raise PyException.error("KeyError", repr(str(key)))
        return self.state[str(key)]

    def py_setitem(self, ev, key, value) -> None:
        _keep(ev, self)
        self.state[str(key)] = self.check(value)

    def update(self, given: Any) -> None:
        for k, v in _pairs(given):
            self.state[str(k)] = self.check(v)

    def py_method(self, ev, node, name, args, kw):
        if name in ("update", "pop"):
            _keep(ev, self)
        if name == "keys":
            return [Str(k) for k in self.keys()]
        if name == "values":
            return [self.state[k] for k in self.keys()]
        if name == "items":
            return [(Str(k), self.state[k]) for k in self.keys()]
        if name == "update":
            self.update(args[0])
            return None
        if name == "pop":
            got = self.py_getitem(args[0])
            del self.state[str(args[0])]
            return got
        return super().py_method(ev, node, name, args, kw)


class ModuleDict(Keyed):
    kind = "ModuleDict"

    def __init__(self, given: Any) -> None:
        super().__init__()
        if given is not None:
            self.update(given)

    def check(self, m: Any) -> Any:
        return _check_module(m, "ModuleDict")

    def forward(self, ev, node, args, kw):
        raise PyException.error("NotImplementedError", 'Module [ModuleDict] is missing the '
                                'required "forward" function')


class ParameterDict(Keyed):
    kind = "ParameterDict"

    def __init__(self, given: Any) -> None:
        super().__init__()
        if given is not None:
            self.update(given)

    check = ParameterList.check

    def update(self, given: Any) -> None:
        """PyTorch's: a plain dict's items in the order of their keys (sorted), an
        OrderedDict's, a ParameterDict's or a list of pairs as given."""
        if isinstance(given, ParameterDict):
            given = [(k, given.state[k]) for k in given.keys()]
        elif isinstance(given, dict) and not isinstance(given, OrderedDict):
            given = sorted(given.items(), key=lambda kv: str(kv[0]))
        super().update(given)

    def own_repr(self) -> str:  # (torch.typename: torch.FloatTensor)
        return _params_repr("ParameterDict", [
            (k, f"torch.{torch_type(self.state[k].value.dtype)}Tensor", self.state[k])
            for k in self.keys()])


class Sequential5(Sequential):
    """nn.Sequential with PyTorch's append (returns the Sequential), insert and extend."""

    def py_getitem(self, key):
        if isinstance(key, slice):  # (a Sequential of those, their names kept)
            out = Sequential5([])
            out.state.update(own(self)[1][key])
            return out
        return super().py_getitem(key)

    def py_method(self, ev, node, name, args, kw):
        mods = [m for _, m in own(self)[1]]
        if name in ("append", "extend", "insert"):
            _keep(ev, self)
        if name in ("append", "extend"):  # (PyTorch's add_module(str(len(self)), m) each)
            for m in ([args[0]] if name == "append" else _items(args[0])):
                self.state[str(len(own(self)[1]))] = _check_module(m, "Sequential")
            return self
        if name == "insert":
            i = args[0].value.item() if isinstance(args[0], Tensor) else args[0]
            n = len(mods)
            if not -n <= i <= n:
                raise PyException.error("IndexError", f"Index out of range: {i}")
            mods.insert(i + n if i < 0 else i, _check_module(args[1], "Sequential"))
            for k, _ in own(self)[1]:
                del self.state[k]
            for j, m in enumerate(mods):
                self.state[str(j)] = m
            return self
        return super().py_method(ev, node, name, args, kw)


def _sequential(ev, node, args, kw):
    if len(args) == 1 and isinstance(args[0], dict):  # Sequential(OrderedDict([...]))
        seq = Sequential5([])
        for k, m in args[0].items():
            seq.state[str(k)] = _check_module(m, "Sequential")
        return seq
    for m in args:
        _check_module(m, "Sequential")
    return Sequential5(list(args))


def _one(args: list, kw: dict, name: str) -> Any:
    return args[0] if args else kw[name][0] if name in kw else None


def _ordered_dict(ev, node, args, kw):
    given = _one(args, {}, "")
    out = OrderedDict() if given is None else OrderedDict(_pairs(given))
    out.update({k: v for k, (v, _) in kw.items()})
    return out


def register() -> None:
    nn = EXTRA["torch.nn"]
    nn["Sequential"] = Native("Sequential", _sequential)
    nn["ModuleList"] = Native("ModuleList", lambda ev, node, args, kw: ModuleList(
        list(_one(args, kw, "modules") or [])))
    nn["ModuleDict"] = Native("ModuleDict", lambda ev, node, args, kw: ModuleDict(
        _one(args, kw, "modules")))
    nn["ParameterList"] = Native("ParameterList", lambda ev, node, args, kw: ParameterList(
        list(_one(args, kw, "values") or [])))
    nn["ParameterDict"] = Native("ParameterDict", lambda ev, node, args, kw: ParameterDict(
        _one(args, kw, "parameters")))
    MODULES["collections"] = PyModule("collections",
                                      {"OrderedDict": Native("OrderedDict", _ordered_dict)})


register()

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential5"]
