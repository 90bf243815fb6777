"""Library use (SPEC §7): ``ddx.trace(text, **bindings)`` builds the graph; ``.backward()`` fills grads."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..engine import reverse
from ..errors import DdxError, DdxRuntimeError, DdxUsageError, suggest
from ..fmt import jsonable
from ..gcpause import paused
from ..graph import record
from ..graph.program import DTYPES, Evaluator
from ..graph.tensor import Tensor
from ..lang.syntax import parse
from ..ops import display_name
from ..replay.cache import TEMPLATES

TRACE_DTYPES = ("float64", "float32")  # what a trace (one-liner, job, library) computes in
OUTPUT_NAME = "out"
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def constant(text: str, *, dtype=np.float64, what: str = "value") -> np.ndarray:
    """Evaluate a constant expression (``[2,4]``, ``pi/4``) to an array of ``dtype``."""
    try:
        program = parse(text)
        ev = Evaluator(program, {}, dtype=dtype)
        value = ev.run()
    except DdxError as exc:
        raise DdxUsageError(f"{what}{text}: {exc.message}") from None
    if not isinstance(value, Tensor) or not value.const:
        raise DdxUsageError(f"{what}{text} is not a constant (numbers, pi, e, [..] literals)")
    return np.array(value.value, dtype=dtype)


def _matrix_limit(option: str, entries: int) -> None:
    """Refuse a --jacobian / --hessian result over DDX_MAX_MATRIX entries before computing it
    (the work and the memory grow with the entries, and so does the output)."""
    from ..limits import limit, over

    if entries > limit("DDX_MAX_MATRIX"):
        raise over("DDX_MAX_MATRIX", entries, option)


def _names(spec: str | Iterable[str] | None) -> list[str] | None:
    if spec is None:
        return None
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return list(spec)


class Trace:
    """One evaluated program: its graph, output, and (after ``backward``) every leaf's gradient."""

    def __init__(self, source: str, bindings: Mapping[str, Any] | None = None, *,
                 wrt: str | Iterable[str] | None = None,
                 no_grad: str | Iterable[str] | None = None,
                 dtype: str = "float64", retain_grad: bool = False, lean: bool = True) -> None:
        if dtype not in TRACE_DTYPES:
            raise DdxUsageError(f"--dtype must be float64 or float32, not {dtype!r}")
        self.source = source
        self.dtype = np.dtype(DTYPES[dtype])
        self.backward_done = False
        self._fast: _Replay | None = None
        self._key = None
        bindings = dict(bindings or {})
        if not retain_grad and bindings:
            # The same text, options and binding shapes as an earlier trace: replay its graph
            # (values only; the graph itself is built if anything asks for it).
            arrays = {n: binding_array(n, v, self.dtype) for n, v in bindings.items()}
            self._key = (source, tuple(arrays), tuple([a.shape for a in arrays.values()]),
                         self.dtype.str, None if wrt is None else _freeze(wrt),
                         None if no_grad is None else _freeze(no_grad))
            template = TEMPLATES.get(self._key)
            if template is None and lean and wrt is None and no_grad is None \
                    and record.GRAD_MODE.enabled:
                # a common program compiles straight to a template: no Tensor graph until asked
                from ..replay.lean import compile_source

                template = compile_source(source, list(arrays),
                                          [a.shape for a in arrays.values()], self.dtype)
                if template is not None:
                    TEMPLATES.keep(self._key, template)
            if template is not None:
                values = template.forward(list(arrays.values()), reuse=True)
                if values is not None:
                    self._fast = _Replay(template, values)
                    self._init_args = (bindings, wrt, no_grad, retain_grad)
                    self.warnings: list[str] = []  # a replay stops at any domain problem
                    return
            bindings = arrays
        self._build(bindings, wrt, no_grad, retain_grad)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes a replayed trace has not made yet: build the real graph.
        if name.startswith("_") or self.__dict__.get("_fast") is None:
            raise AttributeError(name)
        self._materialize()
        return getattr(self, name)

    def _materialize(self) -> None:
        fast, self._fast = self._fast, None
        bindings, wrt, no_grad, retain_grad = self._init_args
        self._build(bindings, wrt, no_grad, retain_grad)
        if fast.backward_args is not None:
            self.backward(*fast.backward_args)

    def _build(self, bindings: Mapping[str, Any], wrt, no_grad, retain_grad: bool) -> None:
        source = self.source
        self.wrt = _names(wrt)
        self.no_grad = set(_names(no_grad) or ())
        self.retain_grad = retain_grad
        self.program = parse(source)
        if not self.program.stmts:
            from ..errors import DdxSyntaxError

            raise DdxSyntaxError("empty expression", hint='try: ddx "(w*x+b)^2" w=3 x=2 b=1')
        wanted, excluded = self.wrt, self.no_grad

        def requires(name: str) -> bool:  # a closure, not a bound method: no Trace cycle
            return name not in excluded and (wanted is None or name in wanted)

        self.evaluator = Evaluator(self.program, {}, dtype=self.dtype, leaf_requires=requires)
        self.backward_done = False
        self.flow: dict = {}  # Function -> the gradient that reached its output
        self.grad_output: np.ndarray | None = None
        self.vjp_count = 0
        self.extras: dict = {}  # forward / check / jacobian / hessian / explain, when asked
        for name, value in bindings.items():
            self.bind(name, value)
        with record.fp_guard(), paused():
            result = self.evaluator.run()
        self.warnings = self.evaluator.warnings
        self._check_names()
        if not isinstance(result, Tensor):
            raise DdxRuntimeError("the last statement must give a tensor value")
        last = self.program.stmts[-1] if self.program.stmts else None
        self.output_name = (last.target.value if last is not None and last.kind == "assign"
                            and last.target.kind == "name" else OUTPUT_NAME)
        if result.label is None and last is not None:
            result.label = self.program.text(last.value)[:48]
        self.output = result
        if retain_grad:
            for t in self.evaluator.nodes:
                if t.grad_fn is not None:
                    t.retains_grad = True

    def bind(self, name: str, value: Any) -> None:
        arr = binding_array(name, value, self.dtype)
        self.evaluator.env[name] = self.evaluator.make_leaf(name, arr)

    def _check_names(self) -> None:
        known = set(self.evaluator.env)
        for flag, names in (("--wrt", self.wrt or ()), ("--no-grad", self.no_grad)):
            for n in names:
                if n not in known:
                    close = suggest(n, known)
                    raise DdxUsageError(f"{flag} names '{n}', which is not a variable" +
                                        (f"; did you mean '{close}'?" if close else ""),
                                        hint="variables: " + ", ".join(sorted(known)))

    # --- results ------------------------------------------------------------------------
    @property
    def leaves(self) -> dict[str, Tensor]:
        """Named leaves that require grad, in binding then assignment order."""
        return {name: t for name, t in self.evaluator.env.items()
                if isinstance(t, Tensor) and t.is_leaf and t.requires_grad}

    @property
    def nodes(self) -> list[Tensor]:
        return self.evaluator.nodes

    def backward(self, grad_output: Any = None, *, retain_graph: bool = True) -> Trace:
        fast = self._fast
        if fast is not None and fast.adj is not None:
            # a second backward accumulates into .grad: the real graph does that
            self._materialize()
            fast = None
        if fast is not None:
            out = fast.template
            if grad_output is None and out.one is not None:
                g0 = out.one  # a scalar output: backward() seeds it with 1
            else:
                value = np.asarray(fast.values[out.output])
                if isinstance(grad_output, str):
                    grad_output = (np.ones_like(value) if grad_output.strip() == "ones" else
                                   constant(grad_output, dtype=self.dtype, what="--grad-output "))
                g0 = reverse.initial_grad(Tensor(value), grad_output)
            adj = out.backward(fast.values, g0, reuse=True)  # values: only the output is read
            if adj is not None:
                fast.adj = adj
                fast.backward_args = (grad_output,)
                self.backward_done = True
                return self
            self._materialize()  # a floating-point event: the ordinary way, with its warnings
        if isinstance(grad_output, str):
            grad_output = (np.ones_like(self.output.value) if grad_output.strip() == "ones"
                           else constant(grad_output, dtype=self.dtype, what="--grad-output "))
        self.grad_output = reverse.initial_grad(self.output, grad_output) \
            if self.output.requires_grad else None
        counter: list[int] = []
        with record.fp_guard(), paused():
            reverse.backward(self.output, grad_output, retain_graph=retain_graph,
                              record=self.flow, counter=counter, shared=True)
        self.vjp_count = sum(counter)
        self.warnings.extend(msg for _, msg in record.WARNINGS)
        record.WARNINGS.clear()
        self.backward_done = True
        key = self._key
        if key is not None and key not in TEMPLATES and not self.warnings and not self.extras:
            from ..replay.template import Template

            TEMPLATES.keep(key, lambda: Template.from_trace(self, list(key[1])))
        return self

    # --- the other views of the same derivatives (issue: forward, check, explain) ----------
    def _seed(self) -> np.ndarray:
        if self.grad_output is not None:
            return self.grad_output
        return reverse.initial_grad(self.output, None)

    def forward_mode(self) -> dict:
        from ..engine.forward import compare, forward_gradients, op_count

        grads, cost = forward_gradients(self.output, self.leaves, self._seed())
        n = op_count(self.output)
        result = {"gradients": grads, "difference": compare(self.grads, grads),
                  "cost": {"reverse": {"passes": 2, "forward_ops": n, "vjps": self.vjp_count},
                           "forward": cost}}
        self.extras["forward"] = result
        return result

    def check(self) -> dict:
        from ..engine.forward import compare, finite_differences

        grads, step = finite_differences(self.output, self.leaves, self._seed())
        max_abs, max_rel = compare(self.grads, grads)
        f32 = self.dtype == np.float32
        rtol, atol = (2e-2, 1e-3) if f32 else (1e-5, 1e-7)
        ok = all(np.allclose(np.zeros_like(fd) if self.grads[n] is None else self.grads[n], fd,
                             rtol=rtol, atol=atol, equal_nan=True) for n, fd in grads.items())
        result = {"method": "central differences", "step": step,
                  "step_rule": f"h = {step:g} * max(1, |x|)", "gradients": grads,
                  "max_abs_error": max_abs, "max_rel_error": max_rel, "rtol": rtol,
                  "atol": atol, "ok": ok}
        if f32:
            result["warning"] = ("float32: finite differences are unreliable (about 3 digits); "
                                 f"used step {step:g}; run with --dtype float64 for a sharp check")
        self.extras["check"] = result
        return result

    def jacobian(self) -> dict:
        from ..engine.forward import jacobians

        n_in = sum(t.value.size for t in self.leaves.values())
        _matrix_limit("--jacobian", self.output.value.size * n_in)
        result = jacobians(self.output, self.leaves)
        self.extras["jacobian"] = result
        return result

    def hessian(self) -> dict:
        from ..engine.hessian import hessian

        if self.output.value.size == 1:  # (a vector output is hessian()'s own error)
            n_in = sum(t.value.size for t in self.leaves.values())
            _matrix_limit("--hessian", n_in * n_in)
        result = hessian(self)
        self.extras["hessian"] = result
        return result

    def explain(self) -> dict:
        from ..engine.explain import explain

        result = explain(self)
        self.extras["explain"] = result
        return result

    @property
    def requires_grad(self) -> bool:
        """Whether the output requires grad (a replayed trace always does)."""
        return True if self._fast is not None else self.output.requires_grad

    @property
    def value(self) -> np.ndarray:
        if self._fast is not None:
            return np.asarray(self._fast.values[self._fast.template.output])
        return self.output.value

    @property
    def grads(self) -> dict[str, np.ndarray | None]:
        fast = self._fast
        if fast is not None and fast.adj is not None:
            return fast.template.grads(fast.adj)
        return {name: t.grad for name, t in self.leaves.items()}

    def grad_of(self, t: Tensor) -> np.ndarray | None:
        """The gradient that reached ``t`` in the last backward (leaves: their .grad)."""
        if t.grad_fn is not None:
            return self.flow.get(t.grad_fn)
        return t.grad

    def node_ids(self) -> dict[int, int]:
        return {id(t): i for i, t in enumerate(self.nodes)}

    def to_json(self) -> dict:
        ids = self.node_ids()
        nodes = []
        flow = self.flow
        for i, t in enumerate(self.nodes):
            fn = t.grad_fn
            value = t.value
            op = t.op
            nodes.append({
                "id": i,
                "name": t.name or t.label or "?",
                "op": display_name(op),
                "grad_fn": fn.name if fn is not None else None,
                "inputs": [ids[id(s)] for s in t.inputs if id(s) in ids],
                "value": jsonable(value),
                "shape": list(value.shape),
                "requires_grad": t.requires_grad,
                "is_leaf": fn is None,
                "grad": jsonable(flow.get(fn) if fn is not None else t.grad),
            })
        out = self.output
        return {
            "output": self.output_name,
            "value": jsonable(out.value),
            "shape": list(out.value.shape),
            "dtype": str(out.value.dtype),
            "grad_fn": out.grad_fn.name if out.grad_fn is not None else None,
            "gradients": {n: (jsonable(g) if g is not None else None)
                          for n, g in self.grads.items()},
            "nodes": nodes,
            "warnings": list(self.warnings),
            **{key: extras_json(key, value) for key, value in self.extras.items()},
            **({"cost": _tree_json({k: v["cost"] for k, v in self.extras.items()
                                    if isinstance(v, dict) and "cost" in v})}
               if any(isinstance(v, dict) and "cost" in v for v in self.extras.values()) else {}),
        }


class _Replay:
    """A trace computed by replaying a template: its values, and gradients after backward."""

    __slots__ = ("template", "values", "adj", "backward_args")

    def __init__(self, template, values: list) -> None:
        self.template = template
        self.values = values
        self.adj: list | None = None
        self.backward_args: tuple | None = None


def _freeze(names) -> tuple | None:
    got = _names(names)
    return None if got is None else tuple(got)


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
    return np.asarray(value, dtype=dtype)  # no copy: ddx never writes to values


def _tree_json(value: Any) -> Any:
    """numpy arrays inside dicts/lists/tuples made JSON-ready (explicit stack)."""
    root: list = [None]
    stack = [(value, root, 0)]
    while stack:
        v, parent, key = stack.pop()
        if isinstance(v, np.ndarray) or isinstance(v, np.generic):
            parent[key] = jsonable(v)
        elif isinstance(v, dict):
            d: dict = {}
            parent[key] = d
            stack.extend((item, d, k) for k, item in v.items())
        elif isinstance(v, (list, tuple)):
            items: list = [None] * len(v)
            parent[key] = items
            stack.extend((item, items, i) for i, item in enumerate(v))
        elif isinstance(v, float) and not np.isfinite(v):
            parent[key] = jsonable(np.asarray(v))
        else:
            parent[key] = v
    return root[0]


def extras_json(key: str, value: dict) -> Any:
    """SPEC §4 / issue layouts: "forward" is shaped like "gradients"; the rest carry details."""
    if key == "forward":
        return _tree_json(value["gradients"])
    if key == "jacobian":
        return _tree_json(value["reverse"])
    if key == "hessian":
        return _tree_json(value["hessian"])
    if key == "check":
        return _tree_json({k: v for k, v in value.items()})
    return _tree_json(value)


def trace(source: str, bindings: Mapping[str, Any] | None = None, **kwargs: Any) -> Trace:
    """Parse and evaluate ``source``; keyword arguments that are not options are bindings.

    >>> g = trace("(w*x+b)^2", w=3, x=2, b=1); g.backward(); g.grads["w"]
    """
    options = {k: kwargs.pop(k) for k in ("wrt", "no_grad", "dtype", "retain_grad")
               if k in kwargs}
    merged = dict(bindings or {})
    merged.update(kwargs)
    return Trace(source, merged, **options)
