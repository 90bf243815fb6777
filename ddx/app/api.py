"""Library use (SPEC §7): ``ddx.trace(text, **bindings)`` builds the graph; ``.backward()`` fills grads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..engine import reverse
from ..errors import DdxRuntimeError, DdxUsageError, suggest
from ..gcpause import paused
from ..graph import record
from ..graph.program import Evaluator
from ..graph.tensor import Tensor
from ..graph.values import DTYPES
from ..lang.syntax import parse
from ..replay.cache import TEMPLATES, replay_plain
from .bindings import binding_array, constant, freeze, name_list
from .modes import TraceModes
from .tracejson import trace_json
from .tracerepr import TraceDisplay

TRACE_DTYPES = ("float64", "float32")  # what a trace (one-liner, job, library) computes in
OUTPUT_NAME = "out"


class Trace(TraceModes, TraceDisplay):
    """One evaluated program: its graph, output, and (after ``backward``) every leaf's gradient.

    ``Trace(source, bindings, *, wrt=None, no_grad=None, dtype="float64", retain_grad=False)``:

    - ``source``: the program (statements separated by ``;`` or newlines; the last is the output);
    - ``bindings``: a mapping of variable names to values (numbers, nested lists, numpy arrays,
      or constant expressions as text such as ``"[2,4]"`` or ``"pi/4"``); each is a leaf;
    - ``wrt``: only these variables require grad (``"a,b"`` or a list of names);
    - ``no_grad``: these variables are data (``requires_grad=False``);
    - ``dtype``: ``"float64"`` (default) or ``"float32"``;
    - ``retain_grad``: keep the gradients of intermediate nodes too (``--retain-grad``).

    Then ``backward(gradient=None, retain_graph=True)``, ``.value``, ``.grads``, the views
    ``forward_mode()``, ``check()``, ``jacobian()``, ``hessian()``, ``explain()``, and
    ``to_json()`` (the ``--json`` text) / ``to_dict()``. In a notebook a trace shows the
    one-liner's view; ``repr()`` names the expression, its value and its gradients."""

    def __init__(self, source: str, bindings: Mapping[str, Any] | None = None, *,
                 wrt: str | Iterable[str] | None = None,
                 no_grad: str | Iterable[str] | None = None,
                 dtype: str = "float64", retain_grad: bool = False, lean: bool = True) -> None:
        if lean and dtype == "float64" and not retain_grad and wrt is None and no_grad is None \
                and bindings and type(source) is str:
            found = replay_plain(source, bindings)  # plain numbers, a kept template: replayed
            if found is not None:
                self._key, template, values = found
                self.source, self.dtype, self.backward_done = source, template.shapes[0][1], False
                self._fast = _Replay(template, values)
                self._init_args = (dict(bindings), None, None, False)
                self.warnings = []
                return
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
                         self.dtype.str, None if wrt is None else freeze(wrt),
                         None if no_grad is None else freeze(no_grad))
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
        self.wrt = name_list(wrt)
        self.no_grad = set(name_list(no_grad) or ())
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
        self._checkname_list()
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

    def _checkname_list(self) -> None:
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

    def backward(self, gradient: Any = None, retain_graph: bool = True, *,
                 grad_output: Any = None) -> Trace:
        """Run reverse mode from the output, as PyTorch's ``Tensor.backward``.

        ``gradient``: the output's gradient (PyTorch's ``gradient=``; ``"ones"``, a number, an
        array or a constant expression as text); needed when the output is not a scalar.
        ``grad_output`` is the same, under the CLI's name. ``retain_graph`` (default True,
        unlike PyTorch: the other views reuse the graph): False frees the graph's buffers, so
        a second ``backward()`` fails as PyTorch's does. A second call accumulates into the
        gradients, as ``.grad`` does. Returns the trace."""
        if grad_output is not None:
            if gradient is not None:
                raise DdxUsageError("backward() takes gradient= or grad_output=, not both")
            gradient = grad_output
        return self._backward(gradient, retain_graph)

    def _backward(self, grad_output: Any, retain_graph: bool) -> Trace:
        fast = self._fast
        if fast is not None and fast.adj is not None:
            # a second backward accumulates into .grad: the real graph does that
            self._materialize()
            fast = None
        if fast is not None and not retain_graph:  # (a replay keeps no graph to free)
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
        if key is not None and key not in TEMPLATES and not self.warnings and not self.extras \
                and not getattr(vars(self).get("evaluator"), "drew_random", False):  # (rand)
            TEMPLATES.keep_trace(key, self, key[1])
        return self

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

    to_json = trace_json  # the JSON text (a method: no call layer between a writer and it)

    def to_dict(self) -> dict:
        """The JSON document as a dict (nan and inf as the strings JSON carries them as)."""
        return json.loads(self.to_json())


class _Replay:
    """A trace computed by replaying a template: its values, and gradients after backward."""

    __slots__ = ("template", "values", "adj", "backward_args")

    def __init__(self, template, values: list) -> None:
        self.template = template
        self.values = values
        self.adj: list | None = None
        self.backward_args: tuple | None = None


OPTIONS = ("wrt", "no_grad", "dtype", "retain_grad")


def _is_option(name: str, value: Any) -> bool:
    """Whether a keyword named like an option is that option: only values an option takes
    (names for wrt/no_grad, a dtype's name, True/False) are; a number or an array is a binding
    of a variable that happens to have that name (``trace("wrt*2", wrt=3)``)."""
    if name in ("wrt", "no_grad"):
        return value is None or isinstance(value, str) or (
            isinstance(value, (list, tuple, set, frozenset))
            and all(isinstance(v, str) for v in value))
    if name == "dtype":
        return isinstance(value, (str, type, np.dtype))
    return isinstance(value, bool)


def trace(source: str, bindings: Mapping[str, Any] | None = None, /, *,
          wrt: str | Iterable[str] | None = None, no_grad: str | Iterable[str] | None = None,
          dtype: str = "float64", retain_grad: bool = False, **more: Any) -> Trace:
    """Parse and evaluate ``source`` with ``bindings``; returns a ``Trace``.

    ``bindings``: a mapping of names to values (numbers, nested lists, numpy arrays, or text
    such as ``"[2,4]"``, ``"pi/4"``); more bindings may come as keywords (``w=3``).
    Options, keyword-only: ``wrt`` (only these variables require grad: ``"a,b"`` or a list),
    ``no_grad`` (these are data), ``dtype`` (``"float64"``, the default, or ``"float32"``),
    ``retain_grad`` (keep intermediate nodes' gradients). A variable named like an option goes
    in the mapping (``trace("wrt*2", {"wrt": 3})``); as a keyword it is a binding when its
    value is no option's (``trace("wrt*2", wrt=3)``).

    >>> g = trace("(w*x+b)^2", {"w": 3, "x": 2, "b": 1}); g.backward(); g.grads["w"]
    array(28.)
    """
    if wrt is None and no_grad is None and dtype == "float64" and retain_grad is False \
            and "bindings" not in more:  # no options (the call that repeats): straight on
        if bindings is None:
            return Trace(source, more)
        if not more:
            return Trace(source, bindings)
    if bindings is None and isinstance(more.get("bindings"), Mapping):
        bindings = more.pop("bindings")  # (the keyword form of earlier versions)
    merged = dict(bindings or {})
    options = {"wrt": wrt, "no_grad": no_grad, "dtype": dtype, "retain_grad": retain_grad}
    defaults = {"wrt": None, "no_grad": None, "dtype": "float64", "retain_grad": False}
    for name, value in options.items():
        if value is not defaults[name] and not _is_option(name, value):
            merged[name] = value  # a variable with an option's name
            options[name] = defaults[name]
    merged.update(more)
    return Trace(source, merged, **options)
