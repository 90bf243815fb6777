"""Python's exceptions in the REPL: RuntimeError, ValueError, ... as values that are raised,
caught by ``except`` (matched by Python's hierarchy) and bound by ``as e``; a ddx error is
the Python exception it stands for (PyTorch's own errors are RuntimeErrors)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import (
    DdxError,
    DdxNameError,
    DdxRuntimeError,
    DdxShapeError,
    DdxTypeError,
    DdxValueError,
)


class PyException:
    """An exception value: ``RuntimeError("...")``, or what ``except ... as e`` catches."""

    def __init__(self, kind: str, message: str, error: DdxError | None = None,
                 user_class: Any = None) -> None:
        self.kind, self.message, self.error = kind, message, error
        # a user's exception class (class MyError(ValueError): pass), or None
        self.user_class = user_class if user_class is not None else \
            getattr(error, "python_class", None)

    def __repr__(self) -> str:
        return f"{self.kind}({self.message!r})"

    @staticmethod
    def of(exc: DdxError) -> PyException:
        return PyException(python_kind(exc), python_message(exc), exc)

    @staticmethod
    def error(kind: str, message: str) -> DdxError:
        cls = {"TypeError": DdxTypeError, "ValueError": DdxValueError,
               "NameError": DdxNameError, "IndexError": DdxShapeError}.get(kind, DdxRuntimeError)
        exc = cls(message)
        exc.python_kind = kind
        return exc


class ExceptionType:
    """RuntimeError, ValueError, ... as names: called to make an exception, matched by except."""

    def __init__(self, name: str, parents: tuple[str, ...]) -> None:
        self.name, self.parents = name, parents

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


_PARENTS = {"Exception": (), "RuntimeError": ("Exception",), "ValueError": ("Exception",),
            "TypeError": ("Exception",), "NameError": ("Exception",),
            "IndexError": ("LookupError", "Exception"), "KeyError": ("LookupError", "Exception"),
            "LookupError": ("Exception",), "ZeroDivisionError": ("ArithmeticError", "Exception"),
            "ArithmeticError": ("Exception",), "AttributeError": ("Exception",),
            "AssertionError": ("Exception",), "NotImplementedError": ("RuntimeError",
                                                                      "Exception"),
            "StopIteration": ("Exception",), "RecursionError": ("RuntimeError", "Exception"),
            "ImportError": ("Exception",),
            "GradcheckError": ("RuntimeError", "Exception"),
            "ModuleNotFoundError": ("ImportError", "Exception")}
EXCEPTIONS = {name: ExceptionType(name, parents) for name, parents in _PARENTS.items()}
PARENTS = _PARENTS  # (isinstance of an exception value reads it)
EXCEPTIONS["BaseException"] = ExceptionType("BaseException", ())


def python_kind(exc: DdxError) -> str:
    """The Python exception a ddx error stands for (PyTorch's errors are RuntimeErrors)."""
    kind = getattr(exc, "python_kind", None)
    if kind:
        return kind
    if exc.message.startswith("Dimension out of range"):  # (PyTorch's IndexError)
        return "IndexError"
    if isinstance(exc, DdxNameError):
        return "NameError" if exc.message.startswith(("unknown name", "name ",
                                                      "unknown function")) else "AttributeError"
    if isinstance(exc, DdxTypeError):
        return "AttributeError" if "has no attribute" in exc.message else "TypeError"
    if isinstance(exc, DdxValueError):
        return "ValueError"
    if isinstance(exc, DdxShapeError) and "out of" in exc.message and "index" in exc.message:
        return "IndexError"
    return "RuntimeError"


_UNKNOWN = re.compile(r"unknown (?:name|function) '([^']*)'")


def python_message(exc: DdxError) -> str:
    """What ``str(e)`` gives in Python: ddx's "unknown name 'x'; did you mean ..." is
    Python's "name 'x' is not defined" (the suggestion stays in ddx's own report)."""
    if getattr(exc, "python_kind", None) == "KeyError" and exc.message.startswith("KeyError: "):
        return exc.message[len("KeyError: "):]  # (str(e) of a KeyError is the key's repr)
    found = _UNKNOWN.match(exc.message)
    if found and isinstance(exc, DdxNameError):
        return f"name '{found.group(1)}' is not defined"
    return exc.message


def user_chain(cls: Any) -> tuple[list, list[str]]:
    """A user's class's own classes (itself and its user bases) and the builtin exception
    names it derives from ([] when it is no exception class); explicit stack."""
    mine, builtin, stack = [], [], [cls]
    while stack:
        c = stack.pop()
        if isinstance(c, ExceptionType):
            builtin.extend(n for n in (c.name, *_PARENTS.get(c.name, ())) if n not in builtin)
        elif hasattr(c, "bases"):
            mine.append(c)
            stack.extend(reversed(c.bases))
    return mine, builtin


def exception_matches(exc: DdxError, wanted: Any) -> bool:
    if isinstance(wanted, tuple):
        return any(exception_matches(exc, w) for w in wanted)
    mine = getattr(exc, "python_class", None)
    if hasattr(wanted, "bases") and user_chain(wanted)[1]:  # except MyError:
        return mine is not None and any(c is wanted for c in user_chain(mine)[0])
    if not isinstance(wanted, ExceptionType):
        raise DdxTypeError("catching classes that do not inherit from BaseException is not "
                           "allowed")
    if mine is not None:
        return wanted.name in ("BaseException", *user_chain(mine)[1])
    kind = python_kind(exc)
    return wanted.name in (kind, "BaseException", *_PARENTS.get(kind, ()))


def as_error(value: Any) -> DdxError:
    if isinstance(value, ExceptionType):
        value = PyException(value.name, "")
    if hasattr(value, "bases") and user_chain(value)[1]:  # raise MyError: the class itself
        value = PyException(value.name, "", user_class=value)
    if isinstance(value, PyException):
        if value.error is not None:
            return value.error
        err = PyException.error(value.kind, value.message)
        if value.user_class is not None:
            err.python_class = value.user_class
        return err
    return DdxTypeError("exceptions must derive from BaseException")
