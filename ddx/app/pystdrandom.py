"""Python's ``random`` module as scripts use it beside torch (the "Control Flow + Weight
Sharing" example draws a polynomial's order with ``random.randint(4, 6)``): seed, random,
uniform, randint, randrange, choice, choices, shuffle, sample, gauss and normalvariate.

Each one is Python's own function of one private ``random.Random``, with the numbers and
containers of the REPL passed to it as Python values, so a seeded script draws the numbers
Python draws and a bad call gives Python's error; nothing else of the module (nor the
generator object itself) is reachable."""

from __future__ import annotations

import random as _random

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from .pyerrors import PyException
from .pymodules import MODULES, Native, PyModule
from .pyrange import RangeList
from .pyvalues import iterate, number_of, type_label
from .values import Str

_GENERATOR = _random.Random()  # (as the module's hidden instance, seeded from the system)


def _number(value, name: str):
    n = number_of(value)
    if n is None and isinstance(value, Tensor) and value.value.size == 1 and \
            value.value.dtype.kind in "iub":
        n = value.value.item()  # (an integer tensor is an index, as its __index__ gives)
    if n is None:
        raise DdxTypeError(f"{name}() needs a number, not '{type_label(value)}'")
    return n


def _python(value):
    """A REPL value as the Python value the generator's function takes."""
    if isinstance(value, Str):
        return str(value)
    n = number_of(value)
    return value if n is None else n


def _result(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return weak(value)


def _function(name: str, numbers: tuple[str, ...]):
    """random.NAME: the arguments named in ``numbers`` (by position or keyword) are numbers;
    the others (sequences, weights) are passed as they are."""
    fn = getattr(_GENERATOR, name)

    def call(ev, node, args, kw):
        given = [_number(a, name) if i < len(numbers) else _python(a)
                 for i, a in enumerate(args)]
        named = {k: _number(v, name) if k in numbers else _python(v) for k, (v, _) in kw.items()}
        try:
            return _result(fn(*given, **named))
        except (ValueError, TypeError, IndexError) as exc:
            raise PyException.error(type(exc).__name__, str(exc)) from None
    return Native(name, call)


def _sequence(ev, node, value, name: str) -> list:
    if isinstance(value, (set, dict)) or not isinstance(value, (list, tuple, str)):
        raise PyException.error(
            "TypeError", "Population must be a sequence.  For dicts or sets, use "
                         "sorted(d)." if name == "sample" else
            f"object of type '{type_label(value)}' has no len()")
    return list(iterate(ev, value, node))


def _choice(ev, node, args, kw):
    if len(args) != 1 or kw:
        raise DdxTypeError(f"choice() takes 1 positional argument but {len(args)} were given")
    items = _sequence(ev, node, args[0], "choice")
    if not items:
        raise PyException.error("IndexError", "Cannot choose from an empty sequence")
    return _GENERATOR.choice(items)


def _choices(ev, node, args, kw):
    items = _sequence(ev, node, args[0], "choices") if args else []
    weights = kw.pop("weights", (args[1] if len(args) > 1 else None,))[0]
    cum = kw.pop("cum_weights", (None,))[0]
    k = _number(kw.pop("k", (weak(1),))[0], "choices")
    if kw:
        raise DdxTypeError(f"choices() got an unexpected keyword argument '{next(iter(kw))}'")

    def as_numbers(w):
        return None if w is None else [_number(x, "choices") for x in iterate(ev, w, node)]
    try:
        return _GENERATOR.choices(items, as_numbers(weights), cum_weights=as_numbers(cum), k=k)
    except (ValueError, TypeError, IndexError) as exc:
        raise PyException.error(type(exc).__name__, str(exc)) from None


def _shuffle(ev, node, args, kw):
    if len(args) != 1 or kw:
        raise DdxTypeError(f"shuffle() takes 1 positional argument but {len(args)} were given")
    (x,) = args
    if isinstance(x, RangeList) or not isinstance(x, list):
        raise PyException.error("TypeError", f"'{type_label(x)}' object does not support item "
                                             "assignment")
    _GENERATOR.shuffle(x)
    return None


def _sample(ev, node, args, kw):
    items = _sequence(ev, node, args[0], "sample") if args else []
    k = _number(args[1] if len(args) > 1 else kw.pop("k", (None,))[0], "sample")
    try:
        return _GENERATOR.sample(items, k)
    except (ValueError, TypeError) as exc:
        raise PyException.error(type(exc).__name__, str(exc)) from None


def register() -> None:
    members = {name: _function(name, numbers) for name, numbers in (
        ("seed", ()), ("random", ()), ("uniform", ("a", "b")), ("randint", ("a", "b")),
        ("randrange", ("start", "stop", "step")), ("gauss", ("mu", "sigma")),
        ("normalvariate", ("mu", "sigma")), ("expovariate", ("lambd",)),
        ("triangular", ("low", "high", "mode")), ("betavariate", ("alpha", "beta")))}
    members.update(choice=Native("choice", _choice), choices=Native("choices", _choices),
                   shuffle=Native("shuffle", _shuffle), sample=Native("sample", _sample))
    MODULES.setdefault("random", PyModule("random", members))


register()

__all__: list[str] = []
