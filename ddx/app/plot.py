"""`ddx plot`: f and its derivatives sampled on a grid by ddx's own engine, with kinks and nan/inf found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DdxError, DdxUsageError
from ..out.plot import Plot
from ..out.plotdata import Series
from .api import Trace
from .bindings import constant

DEFAULT_POINTS = 801
MAX_POINTS = 100_001
_BISECT = 60  # halvings of a grid step: far below float64's resolution of the step


def parse_range(text: str, name: str) -> tuple[float, float]:
    """``A:B`` (each a constant expression, ``-pi:pi``) as two floats, A < B."""
    lo_text, colon, hi_text = text.partition(":")
    if not colon or ":" in hi_text:
        raise DdxUsageError(f"{name}={text}: a plot range is written A:B",
                            hint=f"for example {name}=-2:2 or {name}=-pi:pi")
    lo = constant(lo_text, what=f"{name}=").reshape(-1)
    hi = constant(hi_text, what=f"{name}=").reshape(-1)
    if lo.size != 1 or hi.size != 1:
        raise DdxUsageError(f"{name}={text}: the ends of a range are numbers")
    a, b = float(lo[0]), float(hi[0])
    if not (np.isfinite(a) and np.isfinite(b)) or not a < b:
        raise DdxUsageError(f"{name}={text}: the range needs finite ends with A < B")
    return a, b


def split_range(bindings: Mapping[str, Any]) -> tuple[str, tuple[float, float], dict]:
    """The one binding that is a range (``x=A:B`` or a 2-tuple) and the others."""
    ranged = [n for n, v in bindings.items()
              if (isinstance(v, str) and ":" in v) or isinstance(v, (tuple, range))]
    if len(ranged) != 1:
        raise DdxUsageError("plot needs exactly one variable with a range A:B" +
                            (f", got {len(ranged)}: {', '.join(ranged)}" if ranged else ""),
                            hint='for example: ddx plot "relu(x) + x^2" x=-2:2')
    name = ranged[0]
    v = bindings[name]
    if isinstance(v, str):
        span = parse_range(v, name)
    else:
        a, b = (float(v[0]), float(v[-1]))
        if not a < b:
            raise DdxUsageError(f"{name}: the range needs A < B")
        span = (a, b)
    return name, span, {n: w for n, w in bindings.items() if n != name}


class Sampler:
    """f, f' (and f'') of one variable, on many points at once when the program is elementwise
    (one vectorised trace, replayed from a template), else one point at a time."""

    def __init__(self, expr: str, var: str, bindings: Mapping[str, Any], *,
                 dtype: str = "float64") -> None:
        self.expr, self.var, self.dtype = expr, var, dtype
        self.bindings = dict(bindings)
        probe = Trace(expr, {**self.bindings, var: 0.5}, dtype=dtype, lean=False)
        from ..graph.record import ancestors

        leaf = probe.evaluator.env.get(var)
        if not any(t is leaf for t in ancestors(probe.output)):
            raise DdxUsageError(f"the expression does not use '{var}'",
                                hint="plot a variable the expression uses")
        if probe.output.value.size != 1:
            raise DdxUsageError(f"plot needs a function with one value: {expr} gives shape "
                                f"{tuple(probe.output.value.shape)}",
                                hint="reduce it (sum(...), mean(...)) or index one element")
        pair = Trace(expr, {**self.bindings, var: np.array([0.25, 0.75])}, dtype=dtype,
                     lean=False)
        from ..ops import OPS

        self.vectorised = pair.output.value.shape == (2,) and all(
            OPS[t.op].elementwise for t in pair.nodes if t.op not in ("leaf", "const"))

    def _trace(self, xs: np.ndarray, *, lean: bool = True) -> Trace:
        return Trace(self.expr, {**self.bindings, self.var: xs}, dtype=self.dtype, lean=lean)

    def values(self, xs: np.ndarray, order: int = 1) -> list[np.ndarray]:
        """[f, f', ...up to order] at every point of ``xs``."""
        xs = np.asarray(xs, dtype=np.float64)
        with np.errstate(all="ignore"):
            if self.vectorised:
                return self._vector(xs, order)
            cols = [np.full(xs.shape, np.nan) for _ in range(order + 1)]
            for i, x in enumerate(xs):
                got = self._vector(np.asarray(x), order)
                for c, v in zip(cols, got):
                    c[i] = float(np.asarray(v).reshape(-1)[0])
            return cols

    def _vector(self, xs: np.ndarray, order: int) -> list[np.ndarray]:
        trace = self._trace(xs, lean=order < 2)
        f = np.broadcast_to(np.asarray(trace.value, dtype=np.float64), xs.shape).copy()
        out = [f]
        if not trace.requires_grad:
            return out + [np.zeros(xs.shape) for _ in range(order)]
        trace.backward(np.ones(np.shape(trace.value)))
        g = trace.grads.get(self.var)
        out.append(np.zeros(xs.shape) if g is None else
                   np.broadcast_to(np.asarray(g, dtype=np.float64), xs.shape).copy())
        if order >= 2:
            out.append(self._second(trace, xs))
        return out

    def _second(self, trace: Trace, xs: np.ndarray) -> np.ndarray:
        """f'' by forward mode over the backward pass (the Hessian's dual numbers), whose
        diagonal is f'' at every point of an elementwise program."""
        from ..engine.hessian import Dual, NoDerivative, gradient_at
        from ..graph.record import ancestors

        leaf = trace.leaves.get(self.var)
        if leaf is None:
            return np.zeros(xs.shape)
        out = trace.output
        try:
            got = gradient_at(out, ancestors(out), {self.var: leaf},
                              {id(leaf): Dual(leaf.value, np.ones(leaf.value.shape))},
                              np.ones(out.value.shape, dtype=out.value.dtype))[id(leaf)]
        except (NoDerivative, DdxError):
            return np.full(xs.shape, np.nan)
        t = got.t if hasattr(got, "t") else np.zeros(xs.shape)
        return np.broadcast_to(np.asarray(t, dtype=np.float64), xs.shape).copy()

    def culprit(self, a: float, b: float) -> str | None:
        """Which op's kink lies between a and b: the kinked node whose local derivative differs
        on the two sides (or whose kink test holds at either), with the row's kink note."""
        from ..engine.explain import local_value
        from ..graph.record import ancestors
        from ..ops import OPS

        sides = []
        for x in (a, b, (a + b) / 2):
            t = self._trace(np.asarray(x), lean=False)
            sides.append([n for n in ancestors(t.output) if n.inputs and OPS[n.op].kink])
        for na, nb, nm in zip(*sides):
            row = OPS[na.op]
            where, note = row.kink
            with np.errstate(all="ignore"):
                hit = any(bool(np.asarray(where(*[s.value for s in n.inputs], **n.kw)).any())
                          for n in (na, nb, nm))
                moved = any(not np.array_equal(local_value(na, i), local_value(nb, i),
                                               equal_nan=True)
                            for i in range(len(na.inputs)) if na.inputs[i].requires_grad)
            if hit or moved:
                return f"{na.display}: {note}"
        return None


def _jumps(xs: np.ndarray, ys: np.ndarray, slope: np.ndarray | None) -> list[int]:
    """Grid steps i (xs[i] to xs[i+1]) where ys changes far more than its neighbours do (or, for
    f, than its slope says): candidates for a jump, refined by bisection afterwards."""
    with np.errstate(all="ignore"):
        d = np.diff(ys)
        if slope is not None:  # what the slope does not account for
            d = d - np.diff(xs) * (slope[1:] + slope[:-1]) / 2
        d = np.abs(d)
        ok = np.isfinite(d)
        if ok.sum() < 3:
            return []
        scale = np.nanmax(np.abs(ys[np.isfinite(ys)])) if np.isfinite(ys).any() else 1.0
        typical = np.median(d[ok])
        cut = max(20 * typical, 1e-6 * max(scale, 1e-300))
        return [int(i) for i in np.nonzero(ok & (d > cut))[0]]


def _refine(sampler: Sampler, a: float, b: float, k: int) -> tuple[float, float, float, float] | None:
    """Halve [a, b] keeping the half where component k changes most; a jump keeps its size as
    the interval shrinks, a steep smooth change does not. (a, b, left, right) or None."""
    va, vb = (float(c) for c in sampler.values(np.array([a, b]), k)[k])
    size = abs(vb - va)
    if not np.isfinite(size) or size == 0:
        return None
    for _ in range(_BISECT):
        m = (a + b) / 2
        if m in (a, b):
            break
        vm = float(sampler.values(np.array([m]), k)[k][0])
        if not np.isfinite(vm):
            return None
        if abs(vm - va) >= abs(vb - vm):
            b, vb = m, vm
        else:
            a, va = m, vm
    if abs(vb - va) < 0.25 * size or abs(vb - va) < 1e-9 * max(1.0, abs(va), abs(vb)):
        return None
    return a, b, va, vb


def nonfinite_runs(xs: np.ndarray, ys: np.ndarray) -> list[tuple[float, float, str]]:
    """Runs of grid points where ys is nan or inf: (first x, last x, what)."""
    runs: list[tuple[float, float, str]] = []
    bad = ~np.isfinite(ys)
    i, n = 0, len(xs)
    while i < n:
        if not bad[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and bad[j + 1]:
            j += 1
        vals = ys[i:j + 1]
        kinds = sorted({"nan" if v != v else ("inf" if v > 0 else "-inf") for v in vals})
        runs.append((float(xs[i]), float(xs[j]), "/".join(kinds)))
        i = j + 1
    return runs


def sample(expr: str, bindings: Mapping[str, Any], *, order: int = 1, at: float | None = None,
           points: int = DEFAULT_POINTS, dtype: str = "float64") -> Plot:
    """Sample f and its derivatives over the range of the one ranged binding."""
    if order not in (1, 2):
        raise DdxUsageError(f"--order is 1 or 2, not {order}")
    if not 3 <= points <= MAX_POINTS:
        raise DdxUsageError(f"--points must be between 3 and {MAX_POINTS:,}, not {points}")
    var, (lo, hi), rest = split_range(bindings)
    sampler = Sampler(expr, var, rest, dtype=dtype)
    xs = np.linspace(lo, hi, points)
    cols = sampler.values(xs, order)
    names = ["f", "f′", "f″"][: order + 1]
    series = [Series(n, f"{n}({var})", c) for n, c in zip(names, cols)]
    kinks: list[tuple[float, str]] = []
    jumps: list[tuple[float, str]] = []
    for k, slope in ((1, None), (0, cols[1])):
        for i in _jumps(xs, cols[k], slope):
            if any(xs[i] <= x <= xs[i + 1] for x, _ in kinks + jumps):
                continue
            got = _refine(sampler, float(xs[i]), float(xs[i + 1]), k)
            if got is None:
                continue
            a, b, va, vb = got
            h = 1e-6 * (hi - lo)  # the one-sided limits: extrapolated from just beside the jump
            l1, l2, r1, r2 = (float(v) for v in sampler.values(
                np.array([a - h, a - 2 * h, b + h, b + 2 * h]), k)[k])
            left, right = 2 * l1 - l2, 2 * r1 - r2
            x, special = min((a, b), key=lambda c: len(repr(c))), None
            for c, vc in ((a, va), (b, vb)):  # a point where PyTorch takes neither side
                if not (np.isclose(vc, left, rtol=1e-6, atol=1e-9) or
                        np.isclose(vc, right, rtol=1e-6, atol=1e-9)):
                    x, special = c, vc
            note = sampler.culprit(a, b)
            what = "f′" if k == 1 else "f"
            big = 1e8 * (1.0 + float(np.nanmedian(np.abs(cols[k][np.isfinite(cols[k])]))))
            text = (f"{what} is unbounded here (a pole)" if max(abs(va), abs(vb)) > big else
                    f"{what} jumps from {left:.6g} to {right:.6g}" +
                    (f", and is {special:.6g} at the point itself" if special is not None
                     else "")) + (f" ({note})" if note else "")
            (kinks if k == 1 else jumps).append((x, text))
    tangent = None
    if at is not None:
        f0, d0 = (float(c[0]) for c in sampler.values(np.array([at]), 1))
        tangent = (float(at), f0, d0)
    return Plot(expr=expr, var=var, xs=xs, series=series, kinks=sorted(kinks),
                jumps=sorted(jumps), nonfinite=nonfinite_runs(xs, cols[1]),
                undefined=nonfinite_runs(xs, cols[0]),
                tangent=tangent, vectorised=sampler.vectorised)


def plot(expr: str, bindings: Mapping[str, Any] | None = None, **kwargs: Any) -> Plot:
    """The library's plot: ``ddx.plot("relu(x) + x^2", x="-2:2", at=1)``; keywords that are not
    options are bindings. The result renders in a terminal or notebook, and ``.save(path)``
    writes a .png/.svg/.pdf (matplotlib)."""
    options = {k: kwargs.pop(k) for k in ("order", "at", "points", "dtype") if k in kwargs}
    merged = dict(bindings or {})
    merged.update(kwargs)
    return sample(expr, merged, **options)


def parse_at(text: str | None, var: str) -> float | None:
    """``--at x=1`` (or ``--at 1``): the tangent point."""
    if text is None:
        return None
    name, eq, value = text.rpartition("=")
    if eq and name.strip() != var:
        raise DdxUsageError(f"--at {text}: the plotted variable is '{var}'",
                            hint=f"write --at {var}=VALUE")
    got = constant(value, what="--at ").reshape(-1)
    if got.size != 1 or not np.isfinite(got[0]):
        raise DdxUsageError(f"--at {text}: the tangent point is one finite number")
    return float(got[0])


def plot_command(expr: str, bindings: dict[str, str], *, order: int, at: str | None,
                 output: str | None, points: int | None, width: int | None, height: int,
                 color: bool, as_json: bool, dtype: str, console) -> None:
    """What ``ddx plot`` does: sample, then draw in the terminal, or write the file / JSON."""
    if output is not None:
        from ..out.outfile import check
        from ..out.plotfile import check_format

        check_format(output)  # (refused before any work)
        check(output, option="-o")
    var, _, _ = split_range(bindings)
    data = sample(expr, bindings, order=order, at=parse_at(at, var), dtype=dtype,
                  points=points or DEFAULT_POINTS)
    if as_json:
        import json

        from ..fmt import jsonable

        ascii_keys = {"f′": "df", "f″": "d2f"}  # (plain keys for scripts)
        doc = {"expr": expr, "variable": var,
               "samples": {ascii_keys.get(k, k): jsonable(np.asarray(v))
                           for k, v in data.table().items()},
               "kinks": [{"x": x, "note": n} for x, n in data.kinks],
               "jumps": [{"x": x, "note": n} for x, n in data.jumps],
               "nonfinite": [{"from": a, "to": b, "what": w} for a, b, w in data.nonfinite],
               "f_nonfinite": [{"from": a, "to": b, "what": w} for a, b, w in data.undefined],
               "tangent": None if data.tangent is None else dict(zip(("x", "f", "slope"),
                                                                     data.tangent)),
               "vectorised": data.vectorised}
        console.file.write(json.dumps(doc) + "\n")
    if output is not None:
        data.save(output)
        if not as_json:
            console.print(f"wrote {output}", soft_wrap=True)
        return
    if not as_json:
        from ..out.plot import render

        console.print(render(data, width=width or console.width, height=height, color=color))


def repl_plot(words: list[str], env: Mapping[str, Any], console, *, color: bool) -> str | None:
    """``:plot EXPR x=A:B [NAME=VALUE ...] [--order 2] [--at x=V] [-o FILE]`` in the REPL; the
    session's tensors bind the other names the expression uses. Returns the file written."""
    from ..graph.tensor import Tensor
    from ..lang.syntax import parse
    from .data import free_names

    if not words:
        raise DdxUsageError("usage: :plot EXPR x=A:B [NAME=VALUE ...] [--order 2] [--at x=V] "
                            "[-o FILE]")
    opts: dict[str, str] = {}
    rest: list[str] = []
    it = iter(words[1:])
    for w in it:
        if w in ("--order", "--at", "-o", "--points"):
            value = next(it, None)
            if value is None:
                raise DdxUsageError(f":plot: {w} needs a value")
            opts[w] = value
        else:
            rest.append(w)
    expr = words[0]
    bindings: dict[str, Any] = {}
    for item in rest:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise DdxUsageError(f":plot: {item!r} is not NAME=VALUE")
        bindings[name] = value
    for n in free_names(parse(expr)):
        t = env.get(n)
        if n not in bindings and isinstance(t, Tensor):
            bindings[n] = np.array(t.value, dtype=np.float64)
    try:
        order = int(opts.get("--order", "1"))
        points = int(opts.get("--points", str(DEFAULT_POINTS)))
    except ValueError:
        raise DdxUsageError(":plot: --order and --points take whole numbers") from None
    var, _, _ = split_range(bindings)
    out = opts.get("-o")
    if out is not None:
        from ..out.plotfile import check_format

        check_format(out, ":plot -o")
    data = sample(expr, bindings, order=order, at=parse_at(opts.get("--at"), var),
                  points=points)
    if out is not None:
        from ..out.plotfile import write_plot

        write_plot(data, out, option=":plot -o")
        return out
    from ..out.plot import render

    console.print(render(data, width=console.width, color=color))
    return None
