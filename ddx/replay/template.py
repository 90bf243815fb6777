"""Values and gradients without the Tensor graph: a graph as flat columns, replayed.

A template holds the ops in order, where each input comes from, the order in which backward
visits the nodes, and every field of the JSON that does not depend on the values. It comes
from a finished trace (``Template.from_trace``, when the same text, options and binding
shapes come back) or straight from the source text (``lean.compile_source``). A replay only
recomputes values and gradients through the same op table, in the same order, so its
numbers and JSON are identical to a fresh run's. A replay whose numbers raise a
floating-point event (a domain warning) returns None and the caller runs the ordinary way,
which reports the warnings. Library replays may also overwrite arrays nothing reads any more
(``Template.reuse_plan``)."""

from __future__ import annotations

import json
import re
from math import isfinite, prod

import numpy as np

from ..engine.reverse import unbroadcast
from ..fmt import jsonable
from ..graph import record
from ..ops import OPS, display_name
from . import parallel

_OP_JSON: dict[tuple, str] = {}  # (op, grad_fn) -> its two JSON fields
_MIDDLE_JSON: dict[tuple, str] = {}  # (shape, requires_grad, is_leaf) -> the JSON between


# printable ASCII but '"', '\\' and '%': what json.dumps writes as it is (and %-formats keep)
PLAIN_TEXT = re.compile(r'[ !#$&-\[\]-~]*').fullmatch


def _jstr(text: str) -> str:
    """json.dumps of a string; plain printable ASCII (names, labels) written directly."""
    return f'"{text}"' if PLAIN_TEXT(text) else json.dumps(text)


def op_fields(op: str, grad_fn: str | None) -> str:
    """A node's "op" and "grad_fn" fields, as json.dumps writes them."""
    text = _OP_JSON.get((op, grad_fn))
    if text is None:
        _OP_JSON[op, grad_fn] = text = (f'"op": {_jstr(op)}, "grad_fn": '
                                       f'{"null" if grad_fn is None else _jstr(grad_fn)}')
    return text


def middle_fields(shape: tuple, rg: bool, leaf: bool) -> str:
    """The fields between a node's value and its grad, and the grad's %s."""
    text = _MIDDLE_JSON.get((shape, rg, leaf))
    if text is None:
        if len(_MIDDLE_JSON) > 4096:
            _MIDDLE_JSON.clear()
        _MIDDLE_JSON[shape, rg, leaf] = text = (
            f', "shape": [{", ".join(map(str, shape))}], "requires_grad": '
            f'{"true" if rg else "false"}, "is_leaf": {"true" if leaf else "false"}, '
            '"grad": %s}')
    return text


def _fixed(text: str) -> str:
    """Text for a %-format that prints as itself."""
    return text.replace("%", "%%")


def node_format(i: int, name: str, kind: str, inputs: list[int], middle: str) -> str:
    """One node's JSON object as a %-format (its value's and grad's ``%s``), from the parts
    static_rows gives."""
    name = f'"{name}"' if PLAIN_TEXT(name) else _fixed(json.dumps(name))
    # (a list of ints prints as JSON does)
    return f'{{"id": {i}, "name": {name}, {kind}, "inputs": {inputs}, "value": %s{middle}'


def _owned(arr, shape_dtype: tuple) -> bool:
    """Whether a replay may write into ``arr``: a whole array of its own, of that shape/dtype."""
    return type(arr) is np.ndarray and arr.flags.owndata and arr.flags.writeable and \
        arr.flags.c_contiguous and (arr.shape, arr.dtype) == shape_dtype


def _unless_events(result: list) -> list | None:
    """``result``, or None when a floating-point event happened while making it (such a
    job runs the ordinary way, which reports the warnings)."""
    if record.FP_EVENTS:
        record.FP_EVENTS.clear()
        return None
    return result


def _stand_in(shape_dtype: tuple) -> np.ndarray:
    """A value given up: zeros of its shape without memory (VJPs may read shapes only)."""
    shape, dtype = shape_dtype
    return np.broadcast_to(np.zeros((), dtype), shape)


SQUARES_CHUNK = 1 << 18  # elements squared at a time: a 2 MiB buffer, in cache (measured best)
_SUMS_AS_NUMPY: list[bool] = []  # sums_as_numpy's answer, once known


def sums_as_numpy() -> bool:
    """Whether _sum_of_squares gives this numpy's bits for arrays over SQUARES_CHUNK.

    It follows the order in which numpy sums a contiguous array from 2.3 on (2.3.5, 2.4.6
    and 2.5.5 checked): one pairwise tree over the whole array. numpy 1.26 and 2.2 sum large
    arrays in another order (one ulp apart here), and a later numpy may too. So the first
    large sum of squares in a process compares the two on random numbers, whose sums round
    differently in almost any other order, at sizes that take two and four blocks; if they
    differ, the squares are made and summed by numpy itself (tests/test_lean.py checks
    both ways)."""
    if not _SUMS_AS_NUMPY:
        rng = np.random.default_rng(2026)
        same = True
        for n in (SQUARES_CHUNK + 8, 4 * SQUARES_CHUNK + 40):
            x = rng.random(n) - 0.5
            same = same and _sum_of_squares(x).tobytes() == np.sum(np.square(x)).tobytes()
        _SUMS_AS_NUMPY.append(same)
    return _SUMS_AS_NUMPY[0]


def _sum_of_squares(x: np.ndarray) -> np.float64:
    """np.sum(np.square(x)) for a C-contiguous float64 array, bit for bit, without the array
    of squares: numpy sums a contiguous array pairwise (split at half the length, rounded
    down to a multiple of 8), so blocks of that same tree are squared into one small buffer
    and summed by numpy, and the block sums are added up the tree (a test checks sizes from
    1 to 10^7 against numpy). The top of the tree is split between threads (ddx/parallel.py):
    each subtree is summed on its own, and the halves are added in the tree's order."""
    flat = x.reshape(-1)
    n = flat.size
    if n <= SQUARES_CHUNK:
        return np.sum(np.square(flat))
    parts = [(0, n)]  # the subtrees of one level of the tree
    while len(parts) * 2 <= parallel.threads() and parts[-1][1] >= parallel.MIN_SIZE:
        halves = []
        for lo, size in parts:
            half = size // 2
            half -= half % 8
            halves += [(lo, half), (lo + half, size - half)]
        parts = halves
    sums = parallel.run_all([lambda lo=lo, size=size: _pairwise_squares(flat, lo, size)
                             for lo, size in parts])
    while len(sums) > 1:  # back up the levels that were split, left + right
        sums = [sums[k] + sums[k + 1] for k in range(0, len(sums), 2)]
    return sums[0]


def _pairwise_squares(flat: np.ndarray, lo: int, size: int) -> np.float64:
    """The subtree of numpy's pairwise sum of squares over flat[lo:lo + size]. An explicit
    stack: the tree is log2(size / 262144) deep."""
    buf = np.empty(min(size, SQUARES_CHUNK), np.float64)
    square, total = np.square, np.add.reduce  # (np.sum without its Python wrapper)
    results: list = []
    stack: list = [(lo, size, False)]
    while stack:
        lo, size, combine = stack.pop()
        if combine:
            right = results.pop()
            left = results.pop()
            results.append(left + right)
        elif size <= SQUARES_CHUNK:
            part = buf[:size]
            square(flat[lo:lo + size], out=part)
            results.append(total(part))
        else:
            half = size // 2
            half -= half % 8
            stack.append((lo, size, True))
            stack.append((lo + half, size - half, False))
            stack.append((lo, half, False))
    return results[0]


def _split_into(op, args: list, kw: dict, out: np.ndarray) -> bool:
    """op.into(*args, **kw, out=out) in blocks on threads, if large (ddx/parallel.py)."""
    return parallel.elementwise(lambda *a: op.into(*a[:-1], **kw, out=a[-1]), args, out)


def _vjp_into(vjp_into, g, out, args: list, kw: dict, buffer: np.ndarray, *,
              whole: bool = True):
    """vjp_into(g, out, *args, **kw, buffer=buffer), in blocks on threads when large; the
    gradient, written into ``buffer`` when it can be. ``whole=False``: None unless split."""
    def block(*a):
        r = vjp_into(*a[:-1], **kw, buffer=a[-1])
        if r is not a[-1]:
            a[-1][...] = r
    if parallel.elementwise(block, [g, out, *args], buffer):
        return buffer
    return vjp_into(g, out, *args, **kw, buffer=buffer) if whole else None


def _big(shape_dtype: tuple) -> bool:
    """Whether a value of this shape is worth splitting between threads."""
    return parallel.threads() > 1 and prod(shape_dtype[0]) >= parallel.MIN_SIZE


# A JSON object already written out, without its opening brace: what ``json.dumps`` of the
# same dict would give after ``{``, so a caller can put ``"line": N, `` in front. (A plain
# str: a subclass would copy each document once more.)
JsonBody = str


def _dump(value) -> str:
    """json.dumps(jsonable(value)), with the common scalar case written directly."""
    if value is None:
        return "null"
    if type(value) is np.float64 and isfinite(value):  # np.float64 is a float: no .item()
        return float.__repr__(value)
    if type(value) is np.float64 or (type(value) is np.ndarray and value.ndim == 0):
        x = value.item()
        if type(x) is float:
            if x - x == 0:  # finite
                return repr(x)
            return '"nan"' if x != x else ('"inf"' if x > 0 else '"-inf"')
        if type(x) is bool:
            return "true" if x else "false"
        if type(x) is int:
            return repr(x)
    return json.dumps(jsonable(value))


_NONFINITE = frozenset(("nan", "inf", "-inf"))


def _texts(values: list) -> list[str]:
    """[_dump(v) for v in values]; all finite float64 scalars (the common case) at C speed."""
    try:
        texts = list(map(float.__repr__, values))  # (np.float64 is a float; None, arrays raise)
    except TypeError:
        return [_dump(v) for v in values]
    return texts if _NONFINITE.isdisjoint(texts) else [_dump(v) for v in values]


# The input slots that receive gradients, shared between ops (no new object per op).
_SLOTS = {(): (), (0,): (0,), (1,): (1,), (0, 1): (0, 1)}


class Template:
    """A recorded graph in columns, replayable on new bindings.

    Per node i: ``fn[i]`` (the op table's forward function, None for leaves and constants),
    ``vjp[i]``, ``kw[i]`` (None when empty), its inputs ``a[i]`` and ``b[i]`` (``b[i]`` None
    for one input; ops with more inputs have ``a[i]`` None and their inputs in ``many[i]``),
    and ``grad_slots[i]``, which inputs receive a gradient. Inputs index into the value list:
    nodes first, then the plain numbers the ops take, in reverse order, so that a number is a
    negative index and every argument one list lookup. ``values0`` is that list before a
    replay: None where the replay computes a value, else a constant the program made.
    Columns of shared objects keep the number of objects per op, and with it the garbage
    collector's work on a 100,000-op graph, near zero."""

    __slots__ = ("n", "slots", "scalar", "values0", "op", "fn", "vjp", "kw", "a", "b", "many",
                 "grad_slots", "forward_order", "backward_order", "shapes", "output", "g0",
                 "one", "grads_at", "head", "statics", "fmt", "reuse")

    def _columns(self, n: int) -> None:
        self.op = [None] * n
        self.fn = [None] * n
        self.vjp = [None] * n
        self.kw = [None] * n
        self.a = [None] * n
        self.b = [None] * n
        self.many: dict[int, tuple] = {}
        self.grad_slots = [()] * n

    def set_op(self, i: int, op, kw: dict | None, inputs, slots: tuple) -> None:
        self.op[i] = op
        self.fn[i] = op.fn
        self.vjp[i] = op.vjp
        self.kw[i] = kw or None
        if len(inputs) <= 2:
            self.a[i] = inputs[0]
            self.b[i] = inputs[1] if len(inputs) == 2 else None
        else:
            self.many[i] = tuple(inputs)
        self.grad_slots[i] = _SLOTS.get(slots, slots)

    @classmethod
    def from_trace(cls, trace, binding_names: list[str]) -> Template | None:
        """A template of a finished one-liner trace, or None when it cannot be replayed."""
        out = trace.output
        if (out.grad_fn is None or not trace.backward_done or trace.warnings or trace.extras
                or trace.retain_grad):
            return None
        nodes = trace.nodes
        index = {id(t): i for i, t in enumerate(nodes)}
        if id(out) not in index:
            return None
        self = cls()
        n = self.n = len(nodes)
        self.slots = []
        for k, name in enumerate(binding_names):
            if k >= len(nodes) or nodes[k].name != name or nodes[k].op != "leaf":
                return None
            self.slots.append(k)
        # all float64 scalars: replay on numpy scalars (the same C arithmetic as 0-d arrays,
        # bit for bit, at a fraction of the call cost)
        scalar = self.scalar = all(t.value.shape == () and t.value.dtype == np.float64
                                   for t in nodes)
        # values the replay does not compute: constants and leaves the program itself made
        # (op results are recomputed, so none is kept: a template must not pin big arrays)
        values0: list = [None if i in self.slots or t.inputs else
                         (t.value[()] if scalar else t.value) for i, t in enumerate(nodes)]
        numbers: list = []
        self._columns(n)
        order = []
        for i, t in enumerate(nodes):
            if not t.inputs:
                continue
            inputs = []
            for s in t.inputs:
                if s.weak:
                    numbers.append(s.value.item())
                    inputs.append(-len(numbers))
                elif id(s) in index:
                    inputs.append(index[id(s)])
                else:
                    return None
            slots = tuple(k for k, s in enumerate(t.inputs) if s.requires_grad and not s.weak)
            self.set_op(i, OPS[t.op], t.kw, inputs, slots)
            order.append(i)
        self.values0 = values0 + numbers[::-1]
        self.forward_order = order
        self.backward_order = []
        for fn in trace.flow:  # the order backward() processed the nodes in
            t = fn.output
            if t is None or id(t) not in index:
                return None
            self.backward_order.append(index[id(t)])
        self.shapes = [(t.value.shape, t.value.dtype) for t in nodes]
        self.output = index[id(out)]
        self.g0 = trace.grad_output
        self.one = np.ones((), out.value.dtype) if out.value.size == 1 and \
            out.value.shape == () else None
        self.grads_at = [(name, index[id(t)]) for name, t in trace.leaves.items()]
        self.head = {"output": trace.output_name, "shape": list(out.value.shape),
                     "dtype": str(out.value.dtype), "grad_fn": out.grad_fn.name}
        self.statics = []
        for i, t in enumerate(nodes):
            fn = t.grad_fn
            self.statics.append((i, t.name or t.label or "?",
                                 op_fields(display_name(t.op), fn.name if fn is not None else None),
                                 [index[id(s)] for s in t.inputs if id(s) in index],
                                 middle_fields(t.value.shape, t.requires_grad, fn is None)))
        self.fmt = None  # written on first use: only batch output needs it
        self.reuse = None
        return self

    def static_rows(self) -> list[tuple]:
        """Per node, what its JSON says whatever the numbers: id, name, its "op" and "grad_fn"
        fields (op_fields), inputs, and the fields from "shape" to "grad" (middle_fields). A
        template compiled from the text works these out only when they are asked for."""
        if callable(self.statics):
            self.statics = self.statics()
        return self.statics

    def json_format(self) -> str:
        """The whole JSON document (after its opening brace) as one %-format, written once:
        every fixed field as json.dumps writes it, and a ``%s`` for each number that a replay
        fills in: the output's value, each gradient, then every node's value and grad.

        ``fmt`` starts as None (written from static_rows) or, for a template compiled from
        the text, a function that writes the nodes' part straight from its columns."""
        fmt = self.fmt
        if type(fmt) is not str:
            if fmt is None:
                nodes = ", ".join([node_format(i, name, kind, inputs, middle) for
                                   i, name, kind, inputs, middle in self.static_rows()])
            else:
                nodes = fmt()
            h = self.head
            grads = ", ".join([f"{_fixed(_jstr(name))}: %s" for name, _ in self.grads_at])
            grad_fn = "null" if h["grad_fn"] is None else _jstr(h["grad_fn"])
            # (the shape is a list of ints, which prints as json.dumps writes it)
            fmt = self.fmt = (f'"output": {_fixed(_jstr(h["output"]))}, "value": %s, "shape": '
                              f'{h["shape"]}, "dtype": {_jstr(h["dtype"])}, "grad_fn": '
                              f'{grad_fn}, "gradients": {{{grads}}}, "nodes": [{nodes}], '
                              f'"warnings": []}}')
        return fmt

    def forward(self, bindings: list[np.ndarray], *, reuse: bool = False) -> list | None:
        """Every node's value for new bindings; None when a floating-point event happens.

        ``reuse``: the caller reads no value but the output's and hands the list to backward
        only, so array values nothing reads any more may be overwritten (see reuse_plan)."""
        values = list(self.values0)
        scalar = self.scalar
        for k, arr in zip(self.slots, bindings):
            values[k] = arr[()] if scalar else arr
        if reuse and not scalar:
            return self._forward_reusing(values)
        fns, kws, a_of, b_of = self.fn, self.kw, self.a, self.b
        kinds = (np.ndarray, np.float64) if scalar else (np.ndarray,)
        with record.fp_guard():
            for i in self.forward_order:
                a, b, kw = a_of[i], b_of[i], kws[i]
                if kw is not None:
                    v = fns[i](*self._args(values, i), **kw)
                elif b is not None:
                    v = fns[i](values[a], values[b])
                elif a is not None:
                    v = fns[i](values[a])
                else:
                    v = fns[i](*self._args(values, i))
                values[i] = v if type(v) in kinds else np.asarray(v)
        return _unless_events(values)

    def _args(self, values: list, i: int) -> list:
        if self.a[i] is None:
            return [values[j] for j in self.many[i]]
        if self.b[i] is None:
            return [values[self.a[i]]]
        return [values[self.a[i]], values[self.b[i]]]

    def _inputs(self, i: int) -> list[int]:
        """Node i's inputs that are nodes (numbers have negative indexes)."""
        ins = self.many[i] if self.a[i] is None else (self.a[i], self.b[i])
        return [j for j in ins if j is not None and j >= 0]

    def reuse_plan(self) -> tuple[dict, dict, dict]:
        """Which arrays a replay may overwrite instead of allocating new ones (fresh memory
        means page faults: for large arrays, allocation is most of an op's cost), and which
        sums of squares need no array for the squares. Three maps:

        forward {i: j}: op i writes into the array of its input j when j is an op result no
        later op and no VJP reads (Op.reads), i's op can write into a buffer (Op.into), and
        the two have the same shape and dtype.
        fused {s: q}: sum(q) of q = p^2 that nothing else reads is summed chunk by chunk in
        numpy's own pairwise order (_sum_of_squares), so q's array is never made.
        backward {i: j}: node i's VJP (Op.vjp_into) writes its gradient into the array of
        node j: i itself once its gradient is complete, if i's VJPs do not read it, or i's one
        input, if no other VJP reads that. The output is never overwritten.
        A value given up is replaced by a zero-strided stand-in of its shape. The numbers are
        the same bits: the same ufuncs in the same order (tests compare with a full replay)."""
        if self.reuse is None:
            ops, out, shapes, kws = self.op, self.output, self.shapes, self.kw
            last: dict[int, int] = {}
            readers: dict[int, list[int]] = {}
            for p, i in enumerate(self.forward_order):
                for j in self._inputs(i):
                    last[j] = p
                    readers.setdefault(j, []).append(i)
            read: dict[int, int] = {}  # value -> how many VJPs that run read it
            for i in self.backward_order:
                if "i" in ops[i].reads:
                    for j in set(self._inputs(i)):
                        read[j] = read.get(j, 0) + 1
                if "o" in ops[i].reads:
                    read[i] = read.get(i, 0) + 1
            forward: dict[int, int] = {}
            for p, i in enumerate(self.forward_order):
                op = ops[i]
                if op.into is None or not op.elementwise:
                    continue
                for j in self._inputs(i):
                    if ops[j] is not None and j != out and j not in read and last[j] == p \
                            and shapes[j] == shapes[i]:
                        forward[i] = j
                        break
            fused: dict[int, int] = {}
            for s in self.forward_order:
                q = self.a[s]
                if ops[s].name == "sum" and kws[s] is None and q is not None and q >= 0 \
                        and ops[q] is not None and ops[q].name == "pow_scalar" \
                        and kws[q] == {"exponent": 2} and q != out and q not in read \
                        and readers.get(q) == [s] and shapes[q][1] == np.float64 \
                        and self.a[q] not in forward.values():
                    fused[s] = q
            squares = set(fused.values())  # (their arrays are never made)
            backward: dict[int, int] = {}
            for i in self.backward_order:
                if ops[i].vjp_into is None or i == out:
                    continue
                if "o" not in ops[i].reads and i not in squares:
                    backward[i] = i
                    continue
                ins = self._inputs(i)  # x^2's VJP is 2*x*g: x's array, if only it reads x
                if len(ins) == 1:
                    j = ins[0]
                    mine = 1 if "i" in ops[i].reads else 0
                    if ops[j] is not None and j != out and read.get(j, 0) == mine \
                            and shapes[j] == shapes[i]:
                        backward[i] = j
            self.reuse = (forward, fused, backward)
        return self.reuse

    def _forward_reusing(self, values: list) -> list | None:
        plan, fused, _ = self.reuse_plan()
        squares = {q: s for s, q in fused.items()}
        fns, kws, ops, shapes = self.fn, self.kw, self.op, self.shapes
        with record.fp_guard():
            for i in self.forward_order:
                if i in squares:  # summed without its array (below), made there if need be
                    values[i] = _stand_in(shapes[i])
                    continue
                if i in fused:
                    q = fused[i]
                    base = values[self.a[q]]
                    if type(base) is np.ndarray and base.dtype == np.float64 and \
                            base.flags.c_contiguous and \
                            (base.size <= SQUARES_CHUNK or sums_as_numpy()):
                        values[i] = np.asarray(_sum_of_squares(base))
                        continue
                    values[q] = np.asarray(fns[q](base, **kws[q]))
                args = self._args(values, i)
                kw = kws[i] or {}
                j = plan.get(i)
                buf = values[j] if j is not None else None
                if _owned(buf, shapes[i]):
                    if not _split_into(ops[i], args, kw, buf):
                        ops[i].into(*args, **kw, out=buf)
                    values[i] = buf
                    values[j] = _stand_in(shapes[j])  # its array now holds node i's value
                    continue
                if ops[i].into is not None and ops[i].elementwise and _big(shapes[i]):
                    buf = np.empty(*shapes[i])  # (no page is touched unless it is used)
                    if _split_into(ops[i], args, kw, buf):
                        values[i] = buf
                        continue
                v = fns[i](*args, **kw)
                values[i] = v if type(v) is np.ndarray else np.asarray(v)
        return _unless_events(values)

    def backward(self, values: list, g0: np.ndarray, *, reuse: bool = False) -> list | None:
        """Every node's gradient, in the order the recorded backward pass used; None as above.

        ``reuse``: as for forward; ``values`` may be consumed."""
        scalar = self.scalar
        if reuse and not scalar:
            return self._backward_arrays(values, g0, self.reuse_plan()[2])
        if not scalar:
            return self._backward_arrays(values, g0, {})
        adj: list = [None] * self.n
        adj[self.output] = g0[()]
        vjp_of, kws, a_of, b_of, slots_of = self.vjp, self.kw, self.a, self.b, self.grad_slots
        kinds = (np.ndarray, np.float64)
        with record.fp_guard():
            for i in self.backward_order:
                vjps, a, b, kw = vjp_of[i], a_of[i], b_of[i], kws[i]
                g = adj[i]
                out = values[i]
                for slot in slots_of[i]:
                    if kw is None and b is not None:
                        gi = vjps[slot](g, out, values[a], values[b])
                        j = b if slot else a
                    elif kw is None and a is not None:
                        gi = vjps[0](g, out, values[a])
                        j = a
                    else:
                        gi = vjps[slot](g, out, *self._args(values, i), **(kw or {}))
                        j = self._slot_input(i, slot)
                    if type(gi) not in kinds:
                        gi = np.asarray(gi)
                    prev = adj[j]
                    adj[j] = gi if prev is None else prev + gi
        return _unless_events(adj)

    def _slot_input(self, i: int, slot: int) -> int:
        if self.a[i] is None:
            return self.many[i][slot]
        return self.b[i] if slot else self.a[i]

    def _backward_arrays(self, values: list, g0: np.ndarray, into: dict) -> list | None:
        adj: list = [None] * self.n
        adj[self.output] = g0
        shapes, ops = self.shapes, self.op
        with record.fp_guard():
            for i in self.backward_order:
                vjps, kw = self.vjp[i], self.kw[i] or {}
                g = adj[i]
                out = values[i]
                args = self._args(values, i)
                for slot in self.grad_slots[i]:
                    j = into.get(i) if into else None
                    buffer = values[j] if j is not None else None
                    write = ops[i].vjp_into[slot] if ops[i].vjp_into is not None else None
                    if write is not None and _owned(buffer, shapes[j] if j is not None else ()):
                        gi = _vjp_into(write, g, out, args, kw, buffer)
                        if gi is buffer:  # the array is a gradient now
                            values[j] = _stand_in(shapes[j])
                    else:
                        gi = None
                        if write is not None and ops[i].elementwise and _big(shapes[i]):
                            gi = _vjp_into(write, g, out, args, kw, np.empty(*shapes[i]),
                                           whole=False)  # (a new array, split or not at all)
                        if gi is None:
                            gi = vjps[slot](g, out, *args, **kw)
                    j = self._slot_input(i, slot)
                    if type(gi) is not np.ndarray:
                        gi = np.asarray(gi)
                    shape, dtype = shapes[j]
                    if gi.shape != shape:
                        gi = unbroadcast(gi, shape)
                    if gi.dtype != dtype:
                        gi = gi.astype(dtype)
                    prev = adj[j]
                    adj[j] = gi if prev is None else np.asarray(prev + gi)
        return _unless_events(adj)

    def grads(self, adj: list) -> dict:
        return {name: None if adj[j] is None else np.asarray(adj[j]) for name, j in self.grads_at}

    def run(self, bindings: list[np.ndarray]) -> JsonBody | None:
        """The JSON document for new binding values, or None to run the job the ordinary way."""
        values = self.forward(bindings)
        adj = self.backward(values, self.g0) if values is not None else None
        if adj is None:
            return None
        n = self.n
        value_texts = _texts(values[:n])
        grad_texts = _texts(adj)
        fields = [None] * (2 * n)
        fields[::2] = value_texts
        fields[1::2] = grad_texts
        head = [value_texts[self.output]]
        head += [grad_texts[j] for _, j in self.grads_at]
        return self.json_format() % tuple(head + fields)
