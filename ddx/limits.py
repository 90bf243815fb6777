"""Size limits on what one input may make ddx hold or compute; each is raised by an environment variable."""

from __future__ import annotations

import math
import os

from .errors import DdxUsageError, DdxValueError

# name -> (default, unit, what it limits); README's "Limits" paragraph and `ddx --help` list them
LIMITS: dict[str, tuple[int, str, str]] = {
    "DDX_MAX_ELEMENTS": (10_000_000, "elements", "elements in one tensor that a constructor "
                                                 "(zeros, ones, ...) or a [..] literal makes"),
    "DDX_MAX_MATRIX": (1_000_000, "entries", "entries in a --jacobian or --hessian result"),
    "DDX_MAX_DIRECTIONS": (10_000, "passes", "forward-mode passes (one per input element) of "
                                             "--forward, --jacobian and --hessian"),
}

MAX_DIMS = 64  # numpy's own limit on dimensions: not configurable

_VALUES: dict[str, int] = {}


def limit(name: str) -> int:
    """The limit's value: the environment variable when set (read once per process), else the
    default."""
    value = _VALUES.get(name)
    if value is None:
        default = LIMITS[name][0]
        text = os.environ.get(name, "").strip().replace("_", "")
        if not text:
            value = default
        else:
            try:
                value = int(float(text)) if "e" in text.lower() else int(text)
            except (ValueError, OverflowError):
                raise DdxUsageError(f"{name}={os.environ[name]!r} is not a whole number",
                                    hint=f"the default is {default}") from None
            if value < 1:
                raise DdxUsageError(f"{name} must be at least 1, got {value}")
        _VALUES[name] = value
    return value


def reset() -> None:
    """Read the environment again (tests that change it)."""
    _VALUES.clear()


def over(name: str, count: int, what: str) -> DdxValueError:
    """The error for ``what`` needing ``count`` where the limit ``name`` allows less."""
    value = limit(name)
    example = f" (e.g. {name}={count})" if count < 10 ** 12 else ""
    return DdxValueError(f"{what}: {_count(count)} {LIMITS[name][1]}, over the limit of "
                         f"{value:,} ({name})",
                         hint=f"set the environment variable {name} to raise the limit{example}")


def check_elements(count: int, what: str) -> None:
    if count > limit("DDX_MAX_ELEMENTS"):
        raise over("DDX_MAX_ELEMENTS", count, what)


def _count(n: int) -> str:
    return f"{n:,}" if n < 10 ** 15 else short_int(n)


def short_int(n: int) -> str:
    """An integer as an error message shows it: 1e+300, not its 301 digits."""
    if abs(n) < 10 ** 15:
        return str(n)
    e = int(math.log10(abs(n)))  # (exact enough for any size: float(n) overflows past 1e308)
    return f"{n / 10 ** e:.3g}e+{e}"
