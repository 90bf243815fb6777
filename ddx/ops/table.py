"""The op table's machinery: the row (Op), registering one (op()), and the indexes every mode
reads: OPS by name, CALLS by every name a user calls an op by, UFUNCS by numpy ufunc.
The rows themselves are in ddx/ops/rows.py; see ddx/ops/__init__.py."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class Op:
    """One primitive. VJPs take ``(g, out, *inputs, **kw)``; the engine undoes broadcasting.

    (A plain class: a dataclass costs a few milliseconds of every one-liner's start-up.)"""

    __slots__ = ("name", "grad_fn", "fn", "vjp", "jvp", "saves", "elementwise", "reads", "into",
                 "vjp_into", "call", "names", "variants", "shown", "symbol", "text", "prec",
                 "emit", "hint", "kink", "domain", "dtype", "example", "method", "params",
                 "spaces", "differentiable", "of_sum", "chain")

    def __init__(self, name: str, grad_fn: str, fn: Callable, vjp: tuple[Callable, ...],
                 jvp: Callable | None = None, saves: bool = True, elementwise: bool = True,
                 reads: str = "io", into: Callable | None = None,
                 vjp_into: tuple | None = None) -> None:
        self.name = name
        self.grad_fn = grad_fn
        self.fn = fn
        self.vjp = vjp
        # (tangents, out, *inputs, **kw); None: elementwise, the VJP rule applied to t
        self.jvp = jvp
        self.saves = saves  # keeps inputs for backward, so a second backward through it fails
        self.elementwise = elementwise
        # What the VJPs read besides g: "i" the inputs' values, "o" the output's value (the
        # shapes they may always read). A value no VJP reads can be overwritten once the
        # forward pass is past it (Template).
        self.reads = reads
        self.into = into  # fn(*inputs, **kw, out=buffer): the same numbers, into an array
        # per input, vjp(g, out, *inputs, **kw, buffer=...) that may write into ``buffer``
        self.vjp_into = vjp_into
        self.call = None  # "unary" | "binary" | "reduction": called by name; None: by syntax
        self.names: tuple[str, ...] = ()  # every name it is called by (the row's own first)
        self.method = True  # also x.name(...) in the REPL
        self.variants: dict[str, str] = {}  # keyword argument present -> grad_fn name
        self.shown = name  # what the JSON and the pictures call it
        self.symbol = name  # its short form in pictures
        self.text = None  # its form in ddx's language, "{0} + {1}"; None: name(args)
        self.prec = 9  # the binding strength of ``text`` (see symbolic.PREC)
        self.emit: dict = {}  # "torch"/"jax" -> a str.format template or a function
        self.hint: str | None = None  # what to do where its value or gradient is nan/inf
        self.kink: tuple | None = None  # (where(*inputs) -> bool mask, what PyTorch takes)
        self.domain: tuple = (-2.0, 2.0)  # where it is smooth: random points for tests
        self.dtype = "same"  # result dtype: "same" (the inputs' float dtype) or a numpy name
        self.example: tuple = ("", {})  # (source using x, y, shapes) for the table's tests
        # keyword parameters after the tensor(s), in PyTorch's order, with their defaults:
        # passed to the forward and the rules as keyword arguments (leaky_relu's negative_slope)
        self.params: dict[str, float] = {}
        # where PyTorch has it besides the bare name: "torch" (torch.X), "Tensor" (x.X()),
        # "F" (torch.nn.functional.X), "linalg" (torch.linalg.X), "special" (torch.special.X)
        self.spaces: tuple[str, ...] = ("torch", "Tensor")
        # False: its result never requires grad (comparisons, argmax): nothing to record
        self.differentiable = True
        # a whole reduction made from its input's whole sum (sum, mean): of_sum(total, count)
        # gives its value from that sum, in PyTorch's order, and the element count
        self.of_sum: Callable | None = None
        # how ddx/replay/chain.py's C loop computes it: formulas (forward, one VJP per input)
        # in its inputs a, b, output o, gradient g and keyword arguments, with the same IEEE
        # operations in the same order as fn and vjp; or a function (spread, **kw) giving
        # them or None; None: the loop cannot run it
        self.chain: tuple[str, ...] | Callable | None = None

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    @property
    def arity(self) -> int:
        return len(self.vjp)

    def tangent(self, ts: list, out, *args, **kw):
        """Forward mode for this row: its JVP, or for an elementwise row (a diagonal Jacobian)
        its VJP rules applied to each input's tangent, summed. None: no input has one."""
        if all(t is None for t in ts):
            return None
        if self.jvp is not None:
            return self.jvp(ts, out, *args, **kw)
        total = None
        for i, t in enumerate(ts):
            if t is not None:
                part = self.vjp[i](t, out, *args, **kw)
                total = part if total is None else total + part
        return total

    def grad_fn_for(self, kw: dict | None) -> str:
        """The grad_fn name PyTorch gives this op for these keyword arguments."""
        if kw and self.variants:
            for key, name in self.variants.items():
                if kw.get(key) is not None:
                    return name
        return self.grad_fn


OPS: dict[str, Op] = {}
CALLS: dict[str, Op] = {}  # every name a user may call an op by -> its row
UFUNCS: dict[np.ufunc, Op] = {}  # an elementwise row by its numpy ufunc (derivatives of rules)


def op(name: str, grad_fn: str, fn: Callable, *vjp: Callable, jvp: Callable | None = None,
       saves: bool = True, elementwise: bool = True, reads: str = "io",
       into: Callable | None = None, vjp_into: tuple | None = None, call: str | None = None,
       names: tuple[str, ...] = (), method: bool = True, variants: dict | None = None,
       shown: str | None = None, symbol: str | None = None, text: str | None = None,
       prec: int = 9, emit: dict | None = None, hint: str | None = None,
       kink: tuple | None = None, domain: tuple = (-2.0, 2.0), dtype: str = "same",
       example: tuple | None = None, params: dict | None = None,
       spaces: tuple[str, ...] | None = None, differentiable: bool = True,
       of_sum: Callable | None = None, chain: tuple | Callable | None = None) -> Op:
    """Register one row; a name is registered once (every fact about an op is in its one row:
    a second row of the name would silently replace the first's)."""
    if name in OPS:
        raise ValueError(f"op {name!r} has a row already")
    if into is None and isinstance(fn, np.ufunc):
        into = fn
    row = Op(name, grad_fn, fn, tuple(vjp), jvp, saves, elementwise, reads, into, vjp_into)
    row.call = call
    row.names = (name, *names) if call else ()
    row.method = method
    row.variants = variants or {}
    row.shown = shown or name
    row.symbol = symbol or (text.replace("{0}", "").replace("{1}", "").strip() if text
                            else row.shown)
    row.text = text
    row.prec = prec
    row.emit = emit or {}
    row.hint = hint
    row.kink = kink
    row.domain = domain
    row.dtype = dtype
    row.params = params or {}
    row.spaces = spaces if spaces is not None else ("torch", "Tensor") if method else ("torch",)
    row.differentiable = differentiable
    row.of_sum = of_sum
    row.chain = chain
    if example is None:
        arity = len(vjp)
        args = ", ".join("xy"[i] for i in range(arity))
        shapes = {"x": (4,)} if call == "reduction" else {}
        example = (text.format("x", "y") if text else f"{name}({args})", shapes)
    row.example = example
    OPS[name] = row
    for alias in row.names:
        CALLS[alias] = row
    if elementwise:
        for f in (into, fn):
            f = getattr(f, "ufunc", f)  # (a kernel that computes a ufunc another way names it)
            if isinstance(f, np.ufunc) and f.nout == 1 and f not in UFUNCS:
                UFUNCS[f] = row
    return row


def unregister(name: str) -> None:
    """Remove a row (tests register synthetic rows and take them out again)."""
    row = OPS.pop(name)
    for table in (CALLS, UFUNCS):
        for key in [k for k, v in table.items() if v is row]:
            del table[key]


def display_name(op_name: str) -> str:
    """What the JSON and the pictures call an op (pow_scalar is "pow")."""
    row = OPS.get(op_name)
    return row.shown if row is not None else op_name
