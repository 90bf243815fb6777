"""Reading a template file (ddx/replay/diskcache.py writes it): checked whole, then validated
column by column with numpy, before anything of it is run.

The file is untrusted input. Whatever it says, what ``decode`` returns is None or a template
whose every step is one a compile could have made: inputs before the node, numbers inside
the number list, ops this ddx has with the inputs they take, keywords and names a compile
writes, and a backward pass that sends each gradient along an edge of the graph, reads a
node's gradient only once all of it has arrived, and assigns (not adds) exactly the first
gradient a node receives. A small template, or one of numbers, comes back as a
``DiskTemplate`` (ddx/replay/disktemplate.py) that replays once from the columns; a template
of large arrays is made whole here (its replay reuses buffers: ddx/replay/reuse.py)."""

from __future__ import annotations

import json
import sys
import zlib
from functools import partial
from math import prod
from operator import itemgetter

import numpy as np

from .disktemplate import DiskTemplate, Steps
from .plan import ONE, SAME, SMALL, TWO, Plan

MAGIC = b"ddx-template-2\n"
PREFIX = len(MAGIC) + 16  # the magic, then the body's CRC-32 and length (8 bytes each)
NONE = -(1 << 31)  # an absent second input or label end in an integer column
DTYPES = ("|i1", "<i2", "<i4", "<i8", "<f8", "|u1")
_F64 = np.dtype(np.float64)


def seal(body: bytes) -> bytes:
    """The file for ``body``: the magic, its CRC-32 and length, and the body."""
    return MAGIC + zlib.crc32(body).to_bytes(8, "little") + len(body).to_bytes(8, "little") + \
        body


def picker(ids: list[int]):
    """A function of a list giving the tuple of its items at ``ids``."""
    if len(ids) == 1:
        return lambda seq: (seq[ids[0]],)
    return itemgetter(*ids)


def columns(data: bytes) -> tuple[dict, dict] | None:
    """(header, columns by name) of a file's bytes, or None if it is not a whole file."""
    if data[:len(MAGIC)] != MAGIC or len(data) < PREFIX + 8 or sys.byteorder != "little":
        return None  # (the columns are little-endian, read in place through memoryviews)
    body = memoryview(data)[PREFIX:]
    if int.from_bytes(data[len(MAGIC) + 8:PREFIX], "little") != len(body) or \
            int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little") != zlib.crc32(body):
        return None
    size = int.from_bytes(body[:8], "little")
    header = json.loads(bytes(body[8:8 + size]))
    cols = {}
    at = 8 + size
    for name, dtype, count in header["columns"]:
        if dtype not in DTYPES or name in cols:
            return None
        arr = np.frombuffer(body, dtype=dtype, count=count, offset=at)
        at += arr.nbytes + (-arr.nbytes % 8)
        cols[name] = arr if arr.flags.aligned else arr.copy()
    return (header, cols) if at == len(body) else None


def decode(data: bytes, key: str, source: str, names: list[str], shapes: list[tuple]):
    """The template a file holds for this key, or None (see the module's docstring)."""
    from ..ops import OPS

    found = columns(data)
    if found is None:
        return None
    header, cols = found
    if header["key"] != key or header["names"] != names or header["k"] != len(names):
        return None
    k = len(names)
    op, a, b, ends = cols["op"], cols["a"], cols["b"], cols["end"]
    m = op.size
    n = k + m
    # (int32 and bool temporaries: 10^5-element int64 ones cost more in page faults than in
    # comparisons)
    rows = np.arange(k, n, dtype=np.int32)
    num = cols["num"]
    numbers_n = num.size
    table_of = [OPS[name] for name in header["ops"]]  # (an op this ddx lacks: KeyError)
    two = b != NONE
    if not (m and b.size == a.size == cols["start"].size == ends.size == m
            and cols["shape"].size == n
            and ((num >= 0) & (num < cols["floats"].size + cols["ints"].size)).all()
            and ((a >= 0) & (a < rows)).all()
            and (~two | ((b >= -numbers_n) & (b < rows))).all()
            and ((op >= 0) & (op < len(table_of))).all()
            and all(len(row.vjp) in (1, 2) for row in table_of)  # (one input or two)
            and (np.array([len(row.vjp) == 2 for row in table_of])[op] == two).all()
            and ((cols["shape"] >= 0) & (cols["shape"] < len(header["shapes"]))).all()):
        return None
    kws = {int(i): dict(kw) for i, kw in header["kws"].items()}
    labels = {int(i): str(label) for i, label in header["labels"].items()}
    distinct = [tuple(int(d) for d in s) for s in header["shapes"]]
    used = np.zeros(len(distinct), bool)
    used[cols["shape"]] = True  # (np.unique sorts: 15 ms the first time)
    scalar = not any(s for s, u in zip(distinct, used.tolist()) if u)
    if [tuple(s) for s in shapes] != [distinct[i] for i in cols["shape"][:k].tolist()]:
        return None
    out = header["result"]
    env = {n_: i for n_, i in header["grads_at"]}
    named = {int(i): v for i, v in header["named"].items()}
    if not (type(out) is int and k <= out < n
            and _words(header, env, named, k, names, kws, table_of, op)
            and _labels_fit(source, labels)
            and (scalar or _shapes_fit(cols["shape"], k, op, a, b, table_of, distinct))
            and _steps_fit(cols, k, n, a, b, two, out, scalar,
                           [i for i, row in enumerate(table_of) if row.name == "sum"])):
        return None

    def whole():
        return _whole(header, cols, source, names, kws, labels, distinct, table_of)

    if not (scalar or all(prod(s) <= SMALL for s in distinct)):
        template = whole()
        template.plan = 0  # (decided on its first run: LARGE, as a fresh compile's)
        return template
    t = DiskTemplate()
    t.n, t.slots, t.scalar, t.output = n, list(range(k)), scalar, out
    if not scalar:
        t.shapes = list(picker(cols["shape"].tolist())([(s, _F64) for s in distinct]))
    out_shape = distinct[int(cols["shape"][out])]
    t.g0 = np.array(1.0, _F64) if out_shape == () else np.ones(out_shape, _F64)
    t.one = t.g0 if out_shape == () else None
    t.grads_at = [(name, i) for name, i in env.items() if i < k]
    t.head = {"output": header["out_name"], "shape": list(out_shape), "dtype": "float64",
              "grad_fn": table_of[int(op[out - k])].grad_fn}
    t.reuse = None
    t.blocked = None
    t.chain = None
    t.steps = _first_steps(cols, k, n, kws, table_of, whole)
    return t


def _words(header: dict, env: dict, named: dict, k: int, names: list[str], kws: dict,
           table_of: list, op: np.ndarray) -> bool:
    """Whether the header's names and keywords are ones a compile could have written: what
    reaches the JSON or a call must be no more than that, whatever a file says."""
    from ..lang.lowering import BINARY

    m = op.size
    keys = {plan.op: plan.key for plan in BINARY.values() if plan.key is not None}
    keyed = np.zeros(m, bool)  # (an op that takes a number as a keyword has one, always)
    keyed[np.fromiter((r for r in kws if type(r) is int and 0 <= r < m), np.intp)] = True
    return ((np.array([row.name in keys for row in table_of])[op] == keyed).all()
            and all(type(i) is int and 0 <= i < k and names[i] == n for n, i in env.items())
            and all(k <= i < k + m and type(v) is str and v.isidentifier()
                    for i, v in named.items())
            and type(header["out_name"]) is str and header["out_name"].isidentifier()
            and type(header["stmts"]) is int and header["stmts"] > 0
            and type(header["assigned"]) is bool
            and all(0 <= r < m and list(kw) == [keys.get(table_of[int(op[r])].name)]
                    and type(next(iter(kw.values()))) in (int, float) for r, kw in kws.items()))


def _labels_fit(source: str, labels: dict) -> bool:
    """A label that is no span of the text is 2/x's ``1/x``: plain text if the source is."""
    if not labels:
        return True
    from .jsonfmt import PLAIN_TEXT

    plain = PLAIN_TEXT(source)
    return all(v.startswith("1/") and (not plain or PLAIN_TEXT(v)) for v in labels.values())


def _shapes_fit(shape: np.ndarray, k: int, op: np.ndarray, a: np.ndarray, b: np.ndarray,
                table_of: list, distinct: list) -> bool:
    """Whether every node has the shape its op makes of its inputs' (Plan.backward trusts
    them): a whole reduction's is (), of an input with no empty axis; an elementwise op's,
    its input's, or both inputs' broadcast."""
    d = len(distinct)
    if d > 1024:
        return False  # (no compile has that many; the table below would be too large)
    out, sa = shape[k:], shape[a]
    reduce = np.array([row.call == "reduction" for row in table_of])[op]
    scalar_id = distinct.index(()) if () in distinct else -1
    if not ((out[reduce] == scalar_id).all()
            and not any(0 in distinct[i] for i in np.flatnonzero(
                np.bincount(sa[reduce], minlength=d)).tolist())):
        return False
    node = b >= 0  # (a second input that is a node: else a number's negative index or none)
    pair = sa.astype(np.int64) * d + np.where(node, shape[np.where(node, b, 0)], sa)
    want = np.full(d * d, -1, np.int64)
    ids = {s: i for i, s in enumerate(distinct)}
    for p in np.flatnonzero(np.bincount(pair[~reduce], minlength=d * d)).tolist():
        try:
            want[p] = ids.get(np.broadcast_shapes(distinct[p // d], distinct[p % d]), -1)
        except ValueError:
            pass  # (-1: no shape)
    return bool((want[pair[~reduce]] == out[~reduce]).all())


def _steps_fit(cols: dict, k: int, n: int, a: np.ndarray, b: np.ndarray, two: np.ndarray,
               out: int, scalar: bool, sums: list[int]) -> bool:
    """Whether the saved Plan routes every gradient along the template's own edges, in an
    order a backward pass can take (see the module's docstring)."""
    fform, bi, bj, bslot = cols["fform"], cols["bi"], cols["bj"], cols["bslot"]
    bform, bfirst = cols["bform"], cols["bfirst"]
    e, m = bi.size, a.size
    if not (e and fform.size == m and bj.size == bform.size == bfirst.size == bslot.size == e
            and ((bi >= k) & (bi < n)).all() and ((bslot == 0) | (bslot == 1)).all()):
        return False
    rows = bi - np.int32(k)
    target = np.where(bslot == 0, a[rows], b[rows])  # the input each gradient goes to
    same = fform == SAME
    if not ((target == bj).all()
            and (np.where(two, fform == TWO, fform == ONE) | (same & ~two)).all()
            and (bform == fform[rows]).all()
            and not ((bslot == 1) & (b[rows] < 0)).any()  # (numbers get no gradient)
            and (bj != out).all()):
        return False
    if same.any() and not (scalar and np.isin(cols["op"][same], sums).all()):
        return False  # (the sum of a single number is the number: only there)
    pos = np.arange(e, dtype=np.int32)
    last = np.full(n, -1, np.int32)
    np.maximum.at(last, bj, pos)
    first = np.full(n, e, np.int32)
    np.minimum.at(first, bj, pos)
    heard = last[bi]
    return bool(((bi == out) | ((heard >= 0) & (heard < pos))).all()
                 and ((first[bj] == pos) == (bfirst != 0)).all())


def _first_steps(cols: dict, k: int, n: int, kws: dict, table_of: list, whole) -> Steps:
    """The first replay's columns: the Plan that Plan.restore would make of the same file,
    with each function an index into a short list (the forms, inputs and flags as saved)."""
    op, a, b, bi, bslot = cols["op"], cols["a"], cols["b"], cols["bi"], cols["bslot"]
    rows = bi - np.int32(k)
    fns = [row.fn for row in table_of]
    vjps = [row.vjp[s] if s < len(row.vjp) else None for row in table_of for s in (0, 1)]
    fid = op.astype(np.int32) if kws else op  # (as saved: the narrowest type)
    bid = op[rows].astype(np.int32 if kws else np.int16) * 2 + bslot
    if kws:  # one function per distinct (op, keyword): partial(fn, **kw), as the Plan calls
        kw_rows = np.fromiter(kws, np.intp, len(kws))
        which = np.empty(len(kws), np.int32)
        made: dict[tuple, int] = {}
        for e, (r, kw) in enumerate(kws.items()):
            o = int(op[r])
            name, value = next(iter(kw.items()))
            key = (o, name, type(value), repr(value))
            if key not in made:
                made[key] = len(fns)
                row = table_of[o]
                fns.append(partial(row.fn, **kw))
                vjps.extend(partial(row.vjp[s], **kw) if s < len(row.vjp) else None
                            for s in (0, 1))
            which[e] = made[key]
        fid[kw_rows] = which
        index = np.full(a.size, -1, np.int32)
        index[kw_rows] = which - len(table_of)
        has = index[rows] >= 0
        bid[has] = 2 * len(table_of) + index[rows][has] * 2 + bslot[has]
    steps = Steps()
    steps.fform, steps.fid, steps.fa, steps.fb = cols["fform"], fid, a, b
    steps.bi, steps.bform, steps.bid = bi, cols["bform"], bid
    steps.ba, steps.bb = a[rows], b[rows]
    steps.bj, steps.bfirst = cols["bj"], cols["bfirst"]
    steps.fns, steps.vjps = fns, vjps
    steps.whole, steps.ran = whole, False

    def numbers() -> list:  # the value list before a replay: None per node, then the numbers
        values = np.empty(n + cols["num"].size, dtype=object)  # (None)
        values[n:] = number_table(cols)[cols["num"][::-1]]  # (a number: a negative index)
        return values.tolist()
    steps.numbers = numbers
    return steps


def number_table(cols: dict) -> np.ndarray:
    """The file's distinct numbers, as the compile had them: Python floats, then Python ints
    (each once: every use of a number shares its object)."""
    floats, ints = cols["floats"], cols["ints"]
    table = np.empty(floats.size + ints.size, dtype=object)
    table[:floats.size] = floats
    table[floats.size:] = ints.astype(np.int64)
    return table


class _Spans:
    """The labels' starts or ends, made Python's ints only when the JSON asks for the labels
    (a label that is no span of the text, ``1/x`` for 2/x: the text as start, None as end)."""

    __slots__ = ("column", "labels", "end")

    def __init__(self, column: np.ndarray, labels: dict, *, end: bool = False) -> None:
        self.column, self.labels, self.end = column, labels, end

    def __iter__(self):
        found = self.column.tolist()
        for i, label in self.labels.items():
            found[i] = None if self.end else label
        return iter(found)


class _Saved:
    """What from_columns reads of a LeanBuilder, as a file gives it back."""

    __slots__ = ("names", "k", "shape_of", "source", "numbers", "named", "env", "out_name",
                 "stmts", "assigned")


def _whole(header: dict, cols: dict, source: str, names: list[str], kws: dict, labels: dict,
           distinct: list, table_of: list):
    """The complete Template (and its Plan, if it takes one) of a validated file: the same
    columns through the same ``from_columns`` as a fresh compile."""
    from .lean_template import from_columns

    k = len(names)
    a, b = cols["a"], cols["b"]
    m = a.size
    pick = picker(cols["op"].tolist())  # (C loops: a 10^5-op text in milliseconds)
    table = pick(table_of)
    kw_col = [None] * m
    for i, kw in kws.items():
        kw_col[i] = kw
    b_col = b.tolist()
    if (b == NONE).any():
        b_col = [None if v == NONE else v for v in b_col]
    shape_of = [distinct[0]] * (k + m) if len(distinct) == 1 else \
        list(picker(cols["shape"].tolist())(distinct))
    lb = _Saved()
    lb.names, lb.k, lb.shape_of, lb.source = list(names), k, shape_of, source
    lb.numbers = number_table(cols)[cols["num"]].tolist()
    lb.named = {int(i): v for i, v in header["named"].items()}
    lb.env = {n: i for n, i in header["grads_at"]}
    lb.out_name, lb.stmts, lb.assigned = header["out_name"], header["stmts"], \
        header["assigned"]
    column = (table, pick([op.fn for op in table_of]), pick([op.vjp for op in table_of]),
              tuple(kw_col), tuple(a.tolist()), tuple(b_col), _Spans(cols["start"], labels),
              _Spans(cols["end"], labels, end=True))
    template = from_columns(lb, header["result"], column,
                            pick_slots=(b >= 0).astype(np.int32).tolist())
    if Plan.fits(template):  # (large arrays replay by BufferReuse's path, not a Plan)
        template.plan = _restored(template, cols, k, kws, table_of)
    return template


def _restored(template, cols: dict, k: int, kws: dict, table_of: list) -> Plan:
    """The saved Plan of ``template`` (its steps validated by decode)."""
    bi, bslot = cols["bi"], cols["bslot"]
    rows = bi - k
    vjps = [op.vjp[s] if s < len(op.vjp) else None for op in table_of for s in (0, 1)]
    which = (cols["op"][rows].astype(np.int64) * 2 + bslot).tolist()
    back = [bi.tolist(), cols["bform"].tolist(), cols["bj"].tolist(),
            cols["bfirst"].astype(bool).tolist(), bslot.tolist(), list(picker(which)(vjps))]
    plan = Plan.restore(template, cols["fform"].tolist(), back, kws)
    for r in np.flatnonzero(cols["fform"] == SAME).tolist():  # (as Plan(t): no function
        plan.ffn[r] = None  # where a sum of one number is the number)
    for e in np.flatnonzero(cols["bform"] == SAME).tolist():
        plan.bvjp[e] = None
    return plan
