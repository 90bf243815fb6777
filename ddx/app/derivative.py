"""Derivative formulas for a one-liner or ``ddx.derivative``: the calculator's forms read,
unbound variables found, the graph built at a sample point, the formulas derived from it
(engine/formula.py) and simplified (engine/algebra.py, SymPy), checked against the numbers.

``ddx "x^3"`` -> ``3*x^2``: a variable without a value is bound to a sample point only so
that the graph can be built; masks the rules take (relu's ``x > 0``) are reported as the
conditions under which the formula holds."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import DdxError, DdxNameError, DdxUsageError, DdxValueError

# sample points for variables without a value: distinct, in (0, 1), away from kinks
SAMPLES = (0.5772156649015329, 0.6931471805599453, 0.41421356237309503, 0.3183098861837907,
           0.7071067811865476, 0.2718281828459045, 0.36787944117144233, 0.6180339887498949)
MAX_UNBOUND = 256


def sample(k: int) -> float:
    return SAMPLES[k] if k < len(SAMPLES) else 0.1 + (k * 0.6180339887498949) % 0.8


def read(source: str, bindings: dict):
    """The calculator's rewrite of the text and of the bindings (``θ=−3`` is ``theta=-3``)."""
    from ..lang import calculator

    rw = calculator.rewrite(source)
    out = {}
    for name, value in bindings.items():
        key = calculator.ascii_name(name) if not name.isascii() else name
        if isinstance(value, str) and not value.isascii():
            value = calculator.rewrite(value).text
        if key in out:
            raise DdxUsageError(f"'{name}' and '{key}' are the same variable here",
                                hint="Greek letters are spelled out: θ is theta")
        out[key] = value
    return rw, out


def build(rw, text: str, bindings: dict, **options):
    """A Trace of ``text`` with a sample value for every variable that has none; returns
    (trace, {name: sample} of the unbound)."""
    from .api import Trace

    unbound: dict[str, float] = {}
    while True:
        try:
            return Trace(text, {**bindings, **unbound}, lean=False, **options), unbound
        except DdxNameError as exc:
            msg = exc.message
            if not msg.startswith("unknown name '") or len(unbound) >= MAX_UNBOUND:
                raise _product_hint(rw.place(exc) if text == rw.text else exc) from None
            name = msg.split("'")[1]
            if name in unbound or name in bindings:
                raise
            unbound[name] = sample(len(unbound))
        except DdxError as exc:
            if unbound and exc.exit_code == 1 and not exc.message.startswith("unknown"):
                names = ", ".join(unbound)
                exc.hint = (f"{exc.hint}; " if exc.hint else "") + f"{names} had no value and " \
                    "were taken as numbers: give vectors and matrices their values"
            raise _product_hint(rw.place(exc) if text == rw.text else exc) from None


class Derivatives:
    """The formulas asked for, the variables they are in, and (when every variable has a
    value) their numbers beside the automatic gradient's."""

    def __init__(self, source: str, bindings: dict | None = None, *,
                 order: list | None = None, dtype: str = "float64", swell: bool = False,
                 simplify: bool = True, rewrite=None,
                 **options) -> None:
        from . import formulas as dt

        bindings = dict(bindings or {})
        rw, bindings = (rewrite, bindings) if rewrite is not None else read(source, bindings)
        self.rewrite = rw
        self.source = source
        trace, unbound = build(rw, rw.text, bindings, dtype=dtype, **options)
        self.trace = trace
        self.unbound = list(unbound)
        self.variables = list(trace.leaves)
        self.chain = order or (rw.wrt if rw.derivative else None)
        want = [v for v, _ in self.chain] if self.chain else list(self.variables)
        self.wanted = want
        self.sympy = simplify and dt.sympy_ok()
        self.result = dt.derive(self, trace, bindings, unbound, want, dtype, swell)

    # --- results -----------------------------------------------------------------------
    @property
    def formulas(self) -> dict[str, str]:
        return self.result["formulas"]

    def to_dict(self) -> dict[str, Any]:
        return self.result


def derivative(source: str, wrt: str | None = None, n: int = 1, **bindings) -> Any:
    """``ddx.derivative("x^3", "x")`` -> ``'3*x^2'``: the derivative as ddx input.

    Without ``wrt``, a dict of every variable's partial derivative. ``n``: the n-th derivative.
    Keyword arguments bind values (they decide the masks: relu's slope is 1 where x > 0)."""
    from ..lang import calculator

    if not isinstance(n, int) or not 1 <= n <= calculator.MAX_ORDER:
        raise DdxUsageError(f"n must be a whole number from 1 to {calculator.MAX_ORDER}")
    rw, binds = read(source, bindings)
    if rw.derivative and wrt is None:
        d = Derivatives(source, binds, rewrite=rw)
        return _one_or_all(d)
    order = [(calculator.ascii_name(wrt), n)] if wrt is not None else None
    if order is None and n > 1:
        raise DdxUsageError("n > 1 needs wrt: the n-th derivative with respect to which "
                            "variable?")
    d = Derivatives(source, binds, rewrite=rw, order=order)
    return _one_or_all(d)


def _one_or_all(d: Derivatives):
    f = d.formulas
    return next(iter(f.values())) if d.chain is not None else f



_NEEDS = re.compile(r"[^\x00-\x7f]|\d\s*[A-Za-z_(]|[)\]]\s*[A-Za-z_(\d]|[A-Za-z_0-9]\s+[A-Za-z_\d(]"
                    r"|\b(?:diff|grad)\s*\(|\bd\s*(?:\^\s*\d+\s*)?/\s*d")


class OneLiner:
    """The one-liner's side of formulas: the calculator's forms read (only when the text
    has one: the plain path pays a regular-expression search), the trace built with errors
    pointed at the user's text, and the formulas shown when asked or when a variable has no
    value."""

    def __init__(self, expr: str, bindings: dict, wanted: bool, swell: bool = False) -> None:
        plain = not _NEEDS.search(expr) and all(
            k.isascii() and (not isinstance(v, str) or v.isascii()) for k, v in bindings.items())
        self.rewrite, self.bindings = (None, bindings) if plain else read(expr, bindings)
        self.text = expr if plain else self.rewrite.text
        self.wanted = wanted or swell or (self.rewrite is not None and self.rewrite.derivative)
        self.swell = swell
        self.derivatives: Derivatives | None = None
        self.error: DdxError | None = None

    def trace(self, **options):
        """The trace of the one-liner, or None when it is formulas alone (a variable without a
        value, or ``d/dx EXPR``)."""
        from .api import Trace

        if self.rewrite is not None and self.rewrite.derivative:
            return None
        try:
            return Trace(self.text, self.bindings, **options)
        except DdxNameError as exc:
            if exc.message.startswith("unknown name '"):
                return None
            raise _product_hint(self._place(exc)) from None
        except DdxError as exc:
            raise _product_hint(self._place(exc)) from None

    def _place(self, exc: DdxError) -> DdxError:
        return self.rewrite.place(exc) if self.rewrite is not None else exc

    def derive(self, dtype: str = "float64", **options) -> Derivatives | None:
        from ..lang import calculator

        rw = self.rewrite if self.rewrite is not None else calculator.Rewrite(
            self.text, self.text, list(range(len(self.text) + 1)))
        self.derivatives = Derivatives(self.text, self.bindings, rewrite=rw, dtype=dtype,
                                       swell=self.swell, **options)
        return self.derivatives

    def alone(self, *, as_json: bool, no_color: bool, dtype: str, numeric: dict | None = None,
              **options) -> None:
        """Formulas alone (no values to show): print them, or the JSON document. An option
        that needs numbers (``numeric``, given) is refused in words."""
        from ..out.formula_view import formulas_view
        from .cli_io import stdout_console, write_out

        d = self.derive(dtype, **options)
        asked = [k for k, v in (numeric or {}).items() if v]
        if asked and d.unbound:
            raise DdxUsageError(f"{asked[0]} needs numbers: {', '.join(d.unbound)} "
                                f"{'has' if len(d.unbound) == 1 else 'have'} no value",
                                hint=f"bind {'it' if len(d.unbound) == 1 else 'them'}, e.g. "
                                     f"{d.unbound[0]}=1, or drop {asked[0]} for the formulas")
        if asked:
            raise DdxUsageError(f"{asked[0]} is for an expression, not for a derivative form",
                                hint=f"write the expression itself: ddx \"{d.rewrite.text.strip()}"
                                     f"\" ... {asked[0]}")
        if as_json:
            write_out(json.dumps(_public(d.result)) + "\n")
            return
        console = stdout_console(no_color)
        show(console, formulas_view(d.result, unicode=_unicode(console)))
        console.file.flush()

    def beside(self, trace, *, dtype: str, **options) -> None:
        """Formulas beside a trace's numbers (--symbolic, --swell): computed, or the reason."""
        if not self.wanted:
            return
        try:
            self.derive(dtype, **options)
        except DdxError as exc:
            if not isinstance(exc, (DdxValueError, DdxUsageError)):
                raise
            self.error = exc

    def json(self, text: str) -> str:
        """The trace's JSON document with the formulas' keys."""
        if not self.wanted:
            return text
        extra = ({"formulas": None, "formula_error": self.error.message} if self.error else
                 {k: v for k, v in _public(self.derivatives.result).items() if k in _KEYS})
        return text[:-1] + "".join(f", {json.dumps(k)}: {json.dumps(v)}"
                                   for k, v in extra.items()) + "}"

    def show(self, console) -> None:
        """Print the formulas' view after the trace's (when asked)."""
        if self.wanted:
            show(console, self.view(console))

    def view(self, console):
        """The formulas' view to print after the trace's, or None."""
        if not self.wanted:
            return None
        from rich.text import Text

        from ..out.formula_view import formulas_view
        from ..textsafe import safe_text

        if self.error is not None:
            return Text(safe_text(f"formulas: {self.error.message}"), style="dim")
        return formulas_view(self.derivatives.result, unicode=_unicode(console))


class WithFormulas:
    """A batch job's trace with --symbolic / --swell: the trace, whose JSON document has the
    formulas' keys too."""

    def __init__(self, trace, one: OneLiner) -> None:
        self._trace, self._one = trace, one

    def __getattr__(self, name: str):
        return getattr(self._trace, name)

    def to_json(self) -> str:
        return self._one.json(self._trace.to_json())


def with_formulas(trace, expr: str, bindings: dict, opts: dict) -> WithFormulas:
    one = OneLiner(expr, bindings, bool(opts.get("symbolic")), bool(opts.get("swell")))
    one.beside(trace, dtype=opts.get("dtype", "float64"), wrt=opts.get("wrt"),
               no_grad=opts.get("no_grad"))
    return WithFormulas(trace, one)


_KEYS = ("formulas", "shared", "conditions", "simplified", "swell", "agrees")


def _public(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "single"}


def _product_hint(exc: DdxError) -> DdxError:
    """``x(x+1)``: a call of an unknown function x, which a user meant as a product."""
    msg = exc.message
    if msg.startswith("unknown function '") and exc.hint is None and "did you mean" not in msg:
        name = msg.split("'")[1]
        exc.hint = f"for a product write {name}*(...); ddx reads {name}(...) as a call"
    return exc


def show(console, renderable) -> None:
    """Print with soft wrap: a formula's line is never cut or broken (it is meant to be
    copied back in); when the output is not a terminal, without Rich's padding spaces."""
    if console.is_terminal:
        console.print(renderable, soft_wrap=True)
        return
    with console.capture() as captured:
        console.print(renderable, soft_wrap=True)
    console.file.write("\n".join(line.rstrip() for line in captured.get().split("\n")))


def _unicode(console) -> bool:
    """Superscripts where the terminal shows them: a colour terminal with a UTF encoding
    (--no-color, NO_COLOR and pipes get ASCII, which is also valid ddx input)."""
    return console.is_terminal and not console.no_color and \
        console.encoding.lower().startswith("utf")
