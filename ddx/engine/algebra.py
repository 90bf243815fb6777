"""The algebra of derivative formulas, with SymPy (the optional extra ``ddx[symbolic]``).

ddx derives the formulas itself (ddx/engine/formula.py: the op table's rules on symbolic
values); SymPy only rewrites them. ``simplify`` runs a few bounded passes and keeps the
shortest result: SymPy's own construction (numbers folded, ``x*x`` as ``x**2``, like terms
collected), ``factor_terms`` (common factors pulled out), and, below a size bound,
``cancel``, ``together``, ``factor`` and ``expand`` (each followed by ``factor_terms``) and
``trigsimp`` (smaller still), ``powsimp`` too; numbers ddx folded from ``pi`` and ``e`` are
named again where exactly so (``nsimplify``);
never ``simplify`` itself, which can run for minutes (sympy#17985). ``cse`` names shared
subexpressions. ``text`` prints a SymPy expression as ddx input. Imported only when a formula
is asked for, so the numeric one-liner never loads SymPy."""

from __future__ import annotations

import math
import time
from fractions import Fraction

from ..errors import DdxUsageError
from ..ops import OPS
from ..ops.rows import LN2, LN10, TWO_OVER_SQRT_PI
from .symbolic import Sym, Unsupported

FULL_PASSES_BELOW = 120  # operations: cancel / together / factor / expand only below this
TRIG_BELOW = 40  # and trigsimp only below this (it is the slowest)
FACTOR_TERMS_BELOW = 1500  # factor_terms only below this (about 1 ms per operation)
BUDGET_S = 2.0  # wall-clock seconds for the passes of one formula: later passes are skipped


def sympy_module():
    """SymPy, or a worded error saying how to get it."""
    try:
        import sympy
    except ImportError:
        raise DdxUsageError("derivative formulas need SymPy, which is not installed",
                            hint="pip install 'ddx[symbolic]' (or: pip install sympy)") from None
    return sympy


def available() -> bool:
    try:
        import sympy  # noqa: F401
    except ImportError:
        return False
    return True


def _number(sp, v: float):
    if v == int(v) and abs(v) < 1e15:
        return sp.Integer(int(v))
    for known, expr in ((math.pi, sp.pi), (math.e, sp.E), (LN2, sp.log(2)), (LN10, sp.log(10)),
                        (TWO_OVER_SQRT_PI, 2 / sp.sqrt(sp.pi))):
        if v == known:
            return expr
    short = repr(v)
    if len(short) <= 8 and "e" not in short:  # 0.5, 0.01, 1.75: exact decimals as fractions
        return sp.Rational(Fraction(short))
    simple = Fraction(v).limit_denominator(1000)  # 1/3 and 2/3 (mean's 1/n) as written
    if float(simple) == v:
        return sp.Rational(simple.numerator, simple.denominator)
    return sp.Float(v, 17)


def _apply(sp, op: str, a: list, kw: dict, funcs: dict):
    """Row ``op`` on SymPy arguments: arithmetic as SymPy's, functions by their names."""
    n = lambda v: _number(sp, float(v))  # noqa: E731
    simple = {
        "add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
        "div": lambda: a[0] / a[1], "neg": lambda: -a[0], "reciprocal": lambda: 1 / a[0],
        "rsub": lambda: n(kw["other"]) - a[0], "pow": lambda: a[0] ** a[1],
        "pow_scalar": lambda: a[0] ** n(kw["exponent"]),
        "rpow_scalar": lambda: n(kw["base"]) ** a[0], "square": lambda: a[0] ** 2,
        "sqrt": lambda: sp.sqrt(a[0]), "rsqrt": lambda: 1 / sp.sqrt(a[0]),
        "exp": lambda: sp.exp(a[0]), "expm1": lambda: sp.exp(a[0]) - 1,
        "exp2": lambda: 2 ** a[0], "log": lambda: sp.log(a[0]),
        "log1p": lambda: sp.log(1 + a[0]), "log2": lambda: sp.log(a[0]) / sp.log(2),
        "log10": lambda: sp.log(a[0]) / sp.log(10), "abs": lambda: sp.Abs(a[0]),
        "maximum": lambda: sp.Max(*a), "minimum": lambda: sp.Min(*a),
    }
    if op in simple:
        return simple[op]()
    if op in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf",
              "erfc", "sign", "atan2"):
        return getattr(sp, op)(*a)
    row = OPS[op]
    if set(kw) - set(row.params):
        raise Unsupported(f"{op}'s arguments")
    extra = [n(kw.get(p, d)) for p, d in row.params.items()] if kw else []
    if op not in funcs:
        funcs[op] = sp.Function(op)
    return funcs[op](*a, *extra)


def to_sympy(roots: list[Sym], env: dict | None = None) -> list:
    """SymPy expressions for formulas (a DAG: each node converted once, explicit stack)."""
    sp = sympy_module()
    from .formula import nodes

    env = {} if env is None else env  # name -> Symbol (and "__funcs__")
    funcs = env.setdefault("__funcs__", {})
    done: dict[int, object] = {}
    for e in nodes(roots):
        if isinstance(e, float):
            done[id(e)] = _number(sp, e)
        elif isinstance(e, str):
            if e not in env:
                env[e] = sp.Symbol(e, real=True)
            done[id(e)] = env[e]
        else:
            done[id(e)] = _apply(sp, e[0], [done[id(k.e)] for k in e[1]], e[2], funcs)
    return [done[id(r.e)] for r in roots]


def ops(expr) -> int:
    """SymPy's count_ops: the size every column of --swell is measured in."""
    return int(sympy_module().count_ops(expr))


def _key(expr):
    return ops(expr), len(str(expr))


def simplify(expr, budget: float = BUDGET_S):
    """The shortest of a few bounded rewrites of ``expr`` (see the module's docstring)."""
    sp = sympy_module()
    start = time.perf_counter()
    expr = _constants(sp, expr)
    size = ops(expr)
    best, best_key = expr, (size, len(str(expr))) if size < FACTOR_TERMS_BELOW else (size, 0)
    if size >= FACTOR_TERMS_BELOW:
        return expr
    passes = [sp.factor_terms]
    if size < FULL_PASSES_BELOW:
        passes += [lambda e: sp.factor_terms(sp.cancel(e)),
                   lambda e: sp.factor_terms(sp.together(e)), sp.factor,
                   lambda e: sp.factor_terms(sp.expand(e)),
                   lambda e: sp.factor_terms(sp.powsimp(e))]
        if size < TRIG_BELOW and expr.has(sp.sin, sp.cos, sp.tan, sp.sinh, sp.cosh, sp.tanh):
            passes.append(sp.trigsimp)
    for rewrite in passes:
        if time.perf_counter() - start > budget:
            break
        try:
            got = rewrite(expr)
        except (ValueError, TypeError, NotImplementedError, sp.PolynomialError):
            continue
        if got.has(sp.zoo, sp.nan, sp.I, sp.oo) and not expr.has(sp.zoo, sp.nan, sp.oo):
            continue
        k = _key(got)
        if k < best_key:
            best, best_key = got, k
    return best


def _constants(sp, expr):
    """Numbers that ddx folded from constants, named again where exactly so
    (0.3989422804014327 is 1/sqrt(2*pi))."""
    floats = [f for f in expr.atoms(sp.Float)][:20]
    if not floats:
        return expr
    named = {}
    for f in floats:
        guess = sp.nsimplify(abs(f), [sp.pi, sp.E], tolerance=0, rational=False)
        if not guess.has(sp.Float) and ops(guess) <= 6 and float(guess) == abs(float(f)):
            named[f] = guess if f > 0 else -guess
    return expr.xreplace(named) if named else expr


def cse(exprs: list, avoid: set[str], prefix: str = "t") -> tuple[list, list]:
    """SymPy's cse with names ``t1, t2, ...`` that are none of ``avoid``."""
    sp = sympy_module()
    while any(f"{prefix}{i}" in avoid for i in range(1, 50)):
        prefix += "_"
    names = (sp.Symbol(f"{prefix}{i}", real=True) for i in range(1, 10**9))
    return sp.cse(exprs, symbols=names, optimizations=None)


def text(expr, names: frozenset = frozenset()) -> str:
    """``expr`` as ddx input (``^`` for powers, ddx's function names); ``names`` are the
    variables, so that a variable called ``e`` or ``pi`` is not mistaken for the constant."""
    sp = sympy_module()
    for bad in (sp.zoo, sp.nan, sp.oo, sp.I):
        if expr.has(bad):
            raise Unsupported(f"the formula has {bad}")
    return _printer(sp, names).doprint(expr)


_PRINTERS: dict = {}


def _printer(sp, names: frozenset):
    if "class" not in _PRINTERS:
        _PRINTERS["class"] = _printer_class(sp)
    return _PRINTERS["class"](names)


def _printer_class(sp):
    from sympy.printing.str import StrPrinter

    class DdxPrinter(StrPrinter):
        """SymPy's str form, in ddx's spelling."""

        def __init__(self, names) -> None:
            super().__init__({"order": None})
            self.names = names

        def _print_Pow(self, expr, rational=False):
            e = expr.exp
            if e.is_Rational and e.is_negative and e != -1 and e != sp.Rational(-1, 2):
                return "1/" + self._print(sp.Pow(expr.base, -e))  # 1/cos(x)^2, not ^(-2)
            return super()._print_Pow(expr, rational).replace("**", "^")

        def _print_Abs(self, expr):
            return f"abs({self._print(expr.args[0])})"

        def _print_Exp1(self, expr):
            return "exp(1)" if "e" in self.names else "e"

        def _print_Pi(self, expr):
            return repr(float(sp.pi)) if "pi" in self.names else "pi"

        def _print_Float(self, expr):
            return repr(float(expr))

        def _print_MinMaxBase(self, expr):
            name = "maximum" if isinstance(expr, sp.Max) else "minimum"
            out = self._print(expr.args[-1])
            for a in reversed(expr.args[:-1]):
                out = f"{name}({self._print(a)}, {out})"
            return out

        _print_Max = _print_Min = _print_MinMaxBase

        def _print_exp(self, expr):
            return f"exp({self._print(expr.args[0])})"

    return DdxPrinter
