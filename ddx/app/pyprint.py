"""torch.set_printoptions / torch.get_printoptions in the REPL and `ddx run` (issue 15, item 3).

The options (a torchfmt.PrintOptions) live on the session, so each session has its own, and
they last, as PyTorch's do, until set again; show() passes them to tensor_repr."""

from __future__ import annotations

from ..errors import DdxTypeError
from ..graph.tensor import Tensor
from ..out.torchfmt import DEFAULT_OPTIONS, PrintOptions, set_printoptions
from .values import PyNumber, Str

NAMES = ("precision", "threshold", "edgeitems", "linewidth", "profile", "sci_mode")


def _holder(ev):
    """The session (an evaluator lives for one chunk of statements), else the evaluator."""
    session = getattr(ev, "session", None)
    return ev if session is None else session


def options_of(ev) -> PrintOptions:
    return getattr(_holder(ev), "print_options", DEFAULT_OPTIONS)


def _plain(value):
    """A REPL number (a weak 0-d tensor, an int, a bool, a string) as Python's."""
    if isinstance(value, Tensor):
        return value.value.item()
    return value


def fn_set_printoptions(ev, node, args, kw):
    if len(args) > len(NAMES):
        raise DdxTypeError(f"set_printoptions() takes from 0 to {len(NAMES)} positional "
                           f"arguments but {len(args)} were given")
    given = dict(zip(NAMES, args))
    for name, (value, _) in kw.items():  # (value, where it was written)
        if name not in NAMES:
            raise DdxTypeError(f"set_printoptions() got an unexpected keyword argument '{name}'")
        if name in given:
            raise DdxTypeError(f"set_printoptions() got multiple values for argument '{name}'")
        given[name] = value
    given = {k: _plain(v) for k, v in given.items()}
    for name in ("precision", "edgeitems", "linewidth"):
        if given.get(name) is not None and (isinstance(given[name], bool)
                                            or not isinstance(given[name], int)):
            raise DdxTypeError(f"set_printoptions(): {name} must be an integer")
    _holder(ev).print_options = set_printoptions(options_of(ev), **given)
    return None


def fn_get_printoptions(ev, node, args, kw):
    if args or kw:
        raise DdxTypeError("get_printoptions() takes 0 positional arguments")
    return {Str(k): PyNumber(v) if isinstance(v, float) else v
            for k, v in options_of(ev).as_dict().items()}


def register() -> None:
    from .pymodules import EXTRA, Native

    EXTRA["torch"].setdefault("set_printoptions", Native("set_printoptions",
                                                         fn_set_printoptions))
    EXTRA["torch"].setdefault("get_printoptions", Native("get_printoptions",
                                                         fn_get_printoptions))


register()
