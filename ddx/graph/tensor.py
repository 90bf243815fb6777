"""The graph: tensors holding numpy values, and the Function nodes (grad_fn) that made them."""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import DdxRuntimeError
from ..ops import Op

FLOAT_KINDS = "f"


LABEL_MAX = 48  # a node's label: its source text, cut to 45 characters and "..." past this


def label_of(source: str, start: int, end: int) -> str:
    """A node's label: the source text it was made from, cut when long (the one rule)."""
    if end - start <= LABEL_MAX:
        return source[start:end]
    return source[start:start + LABEL_MAX - 3] + "..."


# PyTorch's version counters, for the tensors changed in place (x.add_(1), x[0] = 5, ...):
# a backward that needs a tensor as it was saved, and finds it changed since, refuses
VERSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# a tensor a recorded in-place op changed -> the node that goes on as that tensor
SUCCESSORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
CHANGED: list[bool] = []  # (non-empty once anything was changed in place: a cheap test)


def changed_in_place(journal, t: Tensor, new: Tensor | None = None) -> int:
    """``t`` was changed in place (its values written, or, recorded, continued by the node
    ``new``): its version goes up by one, and ``new`` goes on with that version; ``new``'s
    own grad_fn keeps ``t`` as it was (ddx computes out of place). The statement's journal
    can undo it all."""
    def put(table, key, value) -> None:
        if journal is not None:
            journal.bind(table, key, value)
        else:
            table[key] = value
    v = VERSIONS.get(t, 0) + 1
    CHANGED[:] = [True]
    put(VERSIONS, t, v)
    if new is not None:
        put(VERSIONS, new, v)
        put(SUCCESSORS, t, new)
        fn = new.grad_fn
        if fn is not None:  # (its own inputs as they were: PyTorch saves a copy of the
            # original for an in-place op's formula; its output as it is now)
            ins = tuple(v if x is t else VERSIONS.get(x, 0) for x in fn.inputs)
            if journal is not None:
                journal.set(fn, "versions", (ins, v))
            else:
                fn.versions = (ins, v)
    return v


class Tensor:
    """A value in the graph. ``weak`` marks a Python-number constant (PyTorch's wrapped scalar)."""

    __slots__ = ("value", "requires_grad", "grad", "grad_fn", "name", "_label", "span", "src",
                 "retains_grad", "weak", "const", "op", "inputs", "kw", "_acc", "hooks",
                 "tangent", "__weakref__")  # tangent: set only inside forward AD (graph/dual.py)
    hooked = 0  # how many hooks were ever registered: backward looks for leaf hooks if any

    def __init__(self, value: np.ndarray, requires_grad: bool = False, *, name: str | None = None,
                 label: str | None = None, span: tuple[int, int] | None = None,
                 weak: bool = False, src: str | None = None) -> None:
        self.value = value
        self.requires_grad = requires_grad
        self.grad: np.ndarray | None = None
        self.grad_fn: Function | None = None
        self.name = name
        self._label = label
        self.span = span
        self.src = src  # the source text ``span`` points into: the label is cut out on demand
        self.retains_grad = False
        self.weak = weak
        self.const = weak  # built from number literals only (x = 2 makes a leaf of it)
        self.op: str = "leaf"  # the op that made it, for display even when no graph is recorded
        self.inputs: tuple[Tensor, ...] = ()
        self.kw: dict = {}
        self._acc: AccumulateGrad | None = None
        self.hooks: dict | None = None  # register_hook's: {key: fn(grad) -> grad or None}

    @property
    def label(self) -> str | None:
        if self._label is None and self.src is not None and self.span is not None:
            self._label = label_of(self.src, *self.span)
        return self._label

    @label.setter
    def label(self, text: str | None) -> None:
        self._label = text

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    @property
    def display(self) -> str:
        """What to call this tensor in output: its name, else its source text."""
        return self.name or self.label or "?"

    def accumulate_node(self) -> AccumulateGrad:
        if self._acc is None:
            self._acc = AccumulateGrad(self)
        return self._acc

    def acc_hooks(self) -> NodeHooks | None:
        """The hooks registered on this leaf's AccumulateGrad node, if any."""
        return self._acc.node_hooks if self._acc is not None else None

    def edge(self):
        """This tensor's slot in a consumer's next_functions (PyTorch's (node, 0) pair)."""
        if self.grad_fn is not None:
            return self.grad_fn
        if self.requires_grad:
            return self.accumulate_node()
        return None

    def set_requires_grad(self, flag: bool, *, via: str = "init") -> None:
        if flag and self.value.dtype.kind not in FLOAT_KINDS:
            texts = {
                "init": "Only Tensors of floating point and complex dtype can require gradients",
                "attr": "only Tensors of floating point and complex dtype can require gradients",
                "method": "only Tensors of floating point dtype can require gradients",
            }
            raise DdxRuntimeError(texts[via])
        if not self.is_leaf and not flag:
            raise DdxRuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        self.requires_grad = flag

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise DdxRuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if not self.is_leaf:
            self.retains_grad = True

    def item(self) -> float:
        if self.value.size != 1:
            raise DdxRuntimeError(
                f"a Tensor with {self.value.size} elements cannot be converted to Scalar")
        return self.value.item()

    def __repr__(self) -> str:  # for debugging; users see render.torch_repr
        return f"Tensor({self.display}, {self.value!r}, requires_grad={self.requires_grad})"


class NodeHooks:
    """A grad_fn node's hooks, as PyTorch's Node keeps them: ``pre`` {key: fn(grad_outputs)
    -> new grad_outputs or None}, run before the node's VJPs; ``post`` {key: fn(grad_inputs,
    grad_outputs) -> new grad_inputs or None}, run after (tuples of arrays, None where an
    input takes no gradient); ``unpack`` {key: fn()}, its saved tensors' unpack hooks, run as
    the node's backward unpacks them (engine/nodehooks.py runs them)."""

    __slots__ = ("pre", "post", "unpack")

    def __init__(self, old: NodeHooks | None = None) -> None:
        self.pre: dict = dict(old.pre) if old is not None else {}
        self.post: dict = dict(old.post) if old is not None else {}
        self.unpack: dict = dict(old.unpack) if old is not None else {}

    def __bool__(self) -> bool:
        return bool(self.pre or self.post or self.unpack)


class Function:
    """A recorded op application: PyTorch's grad_fn node."""

    __slots__ = ("op", "name", "inputs", "kw", "value", "_output", "freed", "versions",
                 "node_hooks", "__weakref__")

    def __init__(self, op: Op, name: str, inputs: tuple[Tensor, ...], kw: dict,
                 output: Tensor) -> None:
        self.op = op
        self.name = name
        self.inputs = inputs
        self.kw = kw
        self.value = output.value  # the forward result, which backward formulas reuse
        # A weak link back: tensor -> grad_fn -> tensor would be a cycle, and cycles keep
        # large arrays alive until the garbage collector runs.
        self._output = weakref.ref(output)
        self.freed = False
        self.node_hooks: NodeHooks | None = None  # register_prehook's and register_hook's
        # the inputs' and the output's versions when saved, once anything was ever changed in
        # place (VERSIONS); None before: every version is 0
        self.versions = None if not CHANGED else (
            tuple(VERSIONS.get(t, 0) for t in inputs), VERSIONS.get(output, 0))

    @property
    def output(self) -> Tensor | None:
        return self._output()

    @property
    def next_functions(self) -> tuple:
        return tuple((t.edge(), 0) for t in self.inputs)

    def __repr__(self) -> str:
        return f"<{self.name} object>"


class AccumulateGrad:
    """The sink a leaf that requires grad shows as in next_functions."""

    __slots__ = ("_variable", "node_hooks", "__weakref__")
    name = "AccumulateGrad"
    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self._variable = weakref.ref(variable)  # weak, for the same reason as Function._output
        self.node_hooks: NodeHooks | None = None

    @property
    def variable(self) -> Tensor | None:
        return self._variable()

    def __repr__(self) -> str:
        return "<AccumulateGrad object>"
