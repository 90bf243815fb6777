"""Bindings: a NAME=VALUE's text or value made an array, and constant expressions evaluated."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..errors import DdxError, DdxUsageError
from ..graph.program import Evaluator
from ..graph.tensor import Tensor
from ..lang.syntax import parse

PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def constant(text: str, *, dtype=np.float64, what: str = "value") -> np.ndarray:
    """Evaluate a constant expression (``[2,4]``, ``pi/4``) to an array of ``dtype``."""
    bare = text.strip()
    hint = (f"a vector goes in brackets: {what.removeprefix('binding ')}[{bare}]"
            if "," in bare and not bare.startswith(("[", "(")) else None)
    try:
        program = parse(text)
        ev = Evaluator(program, {}, dtype=dtype)
        value = ev.run()
    except DdxError as exc:
        raise DdxUsageError(f"{what}{text}: {exc.message}", hint=hint or exc.hint) from None
    if not isinstance(value, Tensor) or not value.const:
        raise DdxUsageError(f"{what}{text} is not a constant (numbers, pi, e, [..] literals)",
                            hint=hint)
    return np.array(value.value, dtype=dtype)


def binding_array(name: str, value: Any, dtype: np.dtype) -> np.ndarray:
    """A binding's value: a number, an array, or a constant expression (``[2,4]``, ``pi/4``)."""
    if not name.isidentifier():
        raise DdxUsageError(f"bad binding name {name!r}")
    if isinstance(value, str):
        if not value.strip():
            raise DdxUsageError(f"binding {name}= has no value")
        if PLAIN_NUMBER.fullmatch(value):  # the common case, without a parse
            return np.asarray(float(value), dtype=dtype)
        return constant(value, dtype=dtype, what=f"binding {name}=")
    try:
        return np.asarray(value, dtype=dtype)  # no copy: ddx never writes to values
    except OverflowError:
        raise DdxUsageError(f"binding {name}: the number is too large for a float "
                            "(at most about 1.8e308)") from None
    except ValueError:
        raise DdxUsageError(f"binding {name}: a ragged list (its items have different "
                            "shapes)") from None
    except TypeError:
        raise DdxUsageError(f"binding {name}: expected a number, a list of numbers or an "
                            f"array, not {type(value).__name__}") from None


def name_list(spec: str | Iterable[str] | None) -> list[str] | None:
    """Names from ``"a,b"`` or an iterable; None stays None (every variable)."""
    if spec is None:
        return None
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return list(spec)


def freeze(names) -> tuple | None:
    """Names as a tuple, for a cache key."""
    got = name_list(names)
    return None if got is None else tuple(got)
