"""ddx/replay/diskcache.py: compiled templates of long texts kept on disk across processes.

A hit must give the very template a fresh compile makes (and its Plan); anything wrong with
a file (another key, another ddx, a flipped byte, a truncation, a consistent-looking edit,
an unknown op) must make it ignored, never used; two processes writing at once leave one
whole file; the directory stays bounded; the cache can be turned off or moved."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ddx
from ddx.app.api import Trace
from ddx.replay import diskcache, diskread
from ddx.replay.cache import TEMPLATES
from ddx.replay.lean import compile_source
from ddx.replay.plan import Plan

F64 = np.dtype(np.float64)


def chain(n: int, seed: int = 0) -> str:
    """A text of n ops, every one using the previous result (bench/run.py's deep chain)."""
    return "(" * (n // 2) + "x" + "".join(f" * {1 + ((i + seed) % 7) * 1e-6!r} + {i % 5})"
                                          for i in range(n // 2))


LONG = [  # (text, bindings): each over MIN_CHARS characters
    (chain(600), {"x": 0.5}),
    ("y = w*x + b; z = exp(y) * 2 - y / 3; " + " + ".join(f"sin(z * {i})^2 / (1 + y^2)"
                                                         for i in range(120)),
     {"w": 0.3, "x": 0.7, "b": -0.2}),
    (" + ".join(f"sum((w*x + {i})^2) * {i / 7!r} - 2/w" for i in range(150)),
     {"w": np.linspace(0.5, 1.5, 5), "x": np.linspace(-1, 1, 5)}),
    ("q = x^3.5 + x^-1.5 + 2^x; " + " * ".join(f"(1 + q / {i + 1000})" for i in range(300)),
     {"x": 1.25}),
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "templates"
    monkeypatch.setenv("DDX_TEMPLATE_CACHE", str(folder))
    return folder


def _inputs(bindings: dict):
    arrays = [np.asarray(v, dtype=np.float64) for v in bindings.values()]
    return list(bindings), [a.shape for a in arrays], arrays


def _fields(t) -> dict:
    return {
        "n": t.n, "slots": t.slots, "scalar": t.scalar, "output": t.output,
        "values0": [None if v is None else repr(v) for v in t.values0],
        "columns": [list(c) for c in (t.op, t.fn, t.vjp, t.kw, t.a, t.b, t.grad_slots)],
        "many": t.many, "forward_order": list(t.forward_order),
        "backward_order": list(t.backward_order),
        "shapes": [(shape, str(dtype)) for shape, dtype in t.shapes],
        "g0": t.g0.tolist(), "one": None if t.one is None else t.one.tolist(),
        "grads_at": t.grads_at, "head": t.head, "statics": t.static_rows(),
        "json_format": t.json_format(),
    }


PLAN_COLUMNS = ("fform", "ffn", "fa", "fb", "bi", "bform", "bvjp", "ba", "bb", "bj",
                "bfirst", "bslot")


def _plan_fields(p) -> dict:
    return {name: [getattr(f, "func", f) for f in getattr(p, name)] if name in ("ffn", "bvjp")
            else list(getattr(p, name)) for name in PLAN_COLUMNS} | {
        "kw": [getattr(f, "keywords", None) for f in p.ffn + list(p.bvjp)]}


def _run(t, arrays):
    values = t.forward(arrays)
    adj = t.backward(values, t.g0)
    return [np.asarray(values[t.output]).tobytes()] + \
        [None if adj[j] is None else np.asarray(adj[j]).tobytes() for _, j in t.grads_at]


def _file(cache: Path) -> Path:
    files = list(cache.glob("*.ddxt"))
    assert len(files) == 1, files
    return files[0]


@pytest.mark.parametrize("text, bindings", LONG)
def test_a_hit_is_the_template_a_fresh_compile_makes(cache, text, bindings):
    names, shapes, arrays = _inputs(bindings)
    assert len(text) >= diskcache.MIN_CHARS
    fresh = compile_source(text, names, shapes, F64)  # a miss: compiled, then written
    assert fresh is not None and _file(cache).stat().st_size > 0
    kept = diskcache.load(text, names, shapes)
    assert kept is not None and kept is not fresh
    assert _fields(kept) == _fields(fresh)
    assert kept.plan.__class__ is Plan
    assert _plan_fields(kept.plan) == _plan_fields(Plan(fresh))
    assert _run(kept, arrays) == _run(fresh, arrays)
    again = compile_source(text, names, shapes, F64)  # compile_source itself reads it now
    assert again is not fresh and _fields(again) == _fields(fresh)


@pytest.mark.parametrize("text, bindings", LONG[:2])
def test_a_trace_from_the_disk_in_a_new_process_is_the_ordinary_path(cache, text, bindings):
    ordinary = Trace(text, bindings, lean=False)
    ordinary.backward(None if ordinary.output.value.size == 1 else "ones")
    code = ("import sys, json, ddx; text, b = json.load(sys.stdin); g = ddx.trace(text, b); "
            "g.backward(); print(repr(float(g.value)), "
            "*[repr(float(v)) for v in g.grads.values()])")
    import json

    env = {**os.environ, "DDX_TEMPLATE_CACHE": str(cache)}
    outs = [subprocess.run([sys.executable, "-c", code], input=json.dumps([text, bindings]),
                           capture_output=True, text=True, env=env, check=True).stdout
            for _ in range(2)]  # the first compiles and writes, the second reads
    assert _file(cache)
    want = " ".join([repr(float(ordinary.value))] +
                    [repr(float(g)) for g in ordinary.grads.values()])
    assert outs == [want + "\n"] * 2


def test_another_key_or_another_ddx_is_a_miss(cache, monkeypatch):
    text, bindings = LONG[0]
    names, shapes, _ = _inputs(bindings)
    compile_source(text, names, shapes, F64)
    assert diskcache.load(text, names, shapes) is not None
    assert diskcache.load(text + " + 0", names, shapes) is None  # another text
    assert diskcache.load(text, ["y"], shapes) is None  # other names (then x is unbound)
    assert diskcache.load(text, names, [(3,)]) is None  # other shapes
    monkeypatch.setattr(diskcache, "_STAMP", ["another version of ddx"])
    assert diskcache.load(text, names, shapes) is None


def test_the_key_holds_the_version_and_the_source_files(monkeypatch):
    diskcache._STAMP.clear()
    first = diskcache.code_stamp()
    diskcache._STAMP.clear()
    import ddx as package

    monkeypatch.setattr(package, "__version__", package.__version__ + ".post1")
    assert diskcache.code_stamp() != first
    diskcache._STAMP.clear()
    monkeypatch.undo()
    assert diskcache.code_stamp() == first


def test_the_stamp_is_kept_beside_the_templates_and_a_bad_one_made_again(cache):
    diskcache._STAMP.clear()
    first = diskcache.code_stamp()
    memos = list(cache.glob("*.ddxs"))
    assert len(memos) == 1 and memos[0].read_text() == first
    memos[0].write_text("not a stamp")
    diskcache._STAMP.clear()
    assert diskcache.code_stamp() == first and memos[0].read_text() == first
    memos[0].write_text("0123456789abcdef")  # (a kept one is read, not made again)
    diskcache._STAMP.clear()
    assert diskcache.code_stamp() == "0123456789abcdef"
    memos[0].unlink()
    diskcache._STAMP.clear()
    assert diskcache.code_stamp() == first


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flip":  # one bit in the columns
        data[-9] ^= 0x10
    elif how == "truncate":
        data = data[: len(data) // 2]
    elif how == "empty":
        data = bytearray()
    elif how == "magic":
        data[:5] = b"xxxxx"
    elif how == "garbage":
        data = bytearray(os.urandom(len(data)))
    path.write_bytes(bytes(data))


def _resigned(path: Path, edit) -> None:
    """Rewrite the file's body with ``edit(header, columns)`` and a matching CRC: a change
    that the check cannot catch, which the reader must still refuse."""
    import json

    header, found = diskread.columns(path.read_bytes())
    cols = {name: arr.copy() for name, arr in found.items()}
    edit(header, cols)
    for entry in header["columns"]:  # (an edit may need a wider type)
        entry[1] = cols[entry[0]].dtype.str
    head = json.dumps(header).encode()
    head += b" " * (-(diskread.PREFIX + 8 + len(head)) % 8)
    new = len(head).to_bytes(8, "little") + head + b"".join(
        diskcache._padded(cols[name].tobytes()) for name, _, _ in header["columns"])
    path.write_bytes(diskread.seal(new))


def _bj(header, cols):
    cols["bj"][0] = (cols["bj"][0] + 1) % 3  # a gradient sent along an edge that is not there


def _op(header, cols):
    header["ops"][0] = "no_such_op"


def _oob(header, cols):
    cols["a"] = cols["a"].astype(np.int32)
    cols["a"][-1] = 10 ** 6  # an input past the end


def _key(header, cols):
    header["key"] = header["key"].replace("x", "y")


def _kw(header, cols):
    row = next(iter(header["kws"]))
    header["kws"][row] = {"exponent": "2"}  # a keyword no compile writes: a string


def _kw_name(header, cols):
    row = next(iter(header["kws"]))
    header["kws"][row] = {"file": 2}


def _kw_gone(header, cols):
    del header["kws"][next(iter(header["kws"]))]  # x^3.5 without its exponent


def _label(header, cols):
    header["labels"]["0"] = '1/x", "value": 666, "x": "'  # would be written into the JSON


def _name(header, cols):
    header["named"] = {str(k): 'q"' for k in header["named"]}


def _grads_at(header, cols):
    header["grads_at"] = [["x", -1]]


def _first(header, cols):
    cols["bfirst"][-1] ^= 1  # a gradient added to nothing, or one assigned over another


def _order(header, cols):
    # the first backward step and the last swapped: a node's gradient read before it is whole
    for name in ("bi", "bform", "bj", "bfirst", "bslot"):
        cols[name][[0, -1]] = cols[name][[-1, 0]]


def _to_a_number(header, cols):
    # a gradient sent to the plain number of x^-1.5's neighbour, at its negative index
    b = cols["b"].astype(np.int32)
    row = int(np.flatnonzero((b < 0) & (b != diskread.NONE))[0])
    step = int(np.flatnonzero(cols["bi"] == row + 1)[0])
    cols["bslot"][step], cols["bj"] = 1, cols["bj"].astype(np.int32)
    cols["bj"][step] = b[row]
    seen: set = set()  # (the first flags made right again for the new targets)
    for e, j in enumerate(cols["bj"].tolist()):
        cols["bfirst"][e] = j not in seen
        seen.add(j)


def _arity(header, cols):
    cols["b"] = cols["b"].astype(np.int32)
    cols["b"][cols["b"] >= 0] = -(1 << 31)  # binary ops given one input (their forms too)
    cols["fform"][:] = 1
    cols["bform"][:] = 1


@pytest.mark.parametrize("how", ["flip", "truncate", "empty", "magic", "garbage", _bj, _op,
                                 _oob, _key, _kw, _kw_name, _kw_gone, _label, _name, _grads_at,
                                 _first, _to_a_number, _order, _arity])
def test_a_damaged_or_altered_file_is_ignored_and_rewritten(cache, how):
    text, bindings = LONG[3]
    names, shapes, arrays = _inputs(bindings)
    fresh = compile_source(text, names, shapes, F64)
    want = _run(fresh, arrays)
    path = _file(cache)
    if callable(how):
        _resigned(path, how)
    else:
        _damage(path, how)
    assert diskcache.load(text, names, shapes) is None
    again = compile_source(text, names, shapes, F64)  # compiled again, and the file rewritten
    assert _run(again, arrays) == want
    assert diskcache.load(text, names, shapes) is not None


def test_an_unreadable_file_or_folder_is_only_a_miss(cache):
    text, bindings = LONG[0]
    names, shapes, _ = _inputs(bindings)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the folder should be")
    t = compile_source(text, names, shapes, F64)  # nothing can be written: still compiled
    assert t is not None and diskcache.load(text, names, shapes) is None


WRITER = """
import sys, numpy as np
from ddx.replay.lean import compile_source
sys.stdin.read()  # (all start together)
t = compile_source({text!r}, ["x"], [()], np.dtype(np.float64))
print(t is not None)
"""


def test_processes_writing_the_same_template_at_once_leave_one_whole_file(cache):
    text = chain(4000, seed=3)
    env = {**os.environ, "DDX_TEMPLATE_CACHE": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER.format(text=text)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate("go")[0] for p in procs]
    assert outs == ["True\n"] * 4
    assert [p.name for p in cache.iterdir() if p.suffix not in (".ddxt", ".ddxs")] == []
    _file(cache)
    kept = diskcache.load(text, ["x"], [()])
    fresh = compile_source(text, ["x"], [()], F64)
    assert kept is not None and _fields(kept) == _fields(fresh)


def test_the_folder_is_bounded_least_recently_used_first(cache):
    cache.mkdir(parents=True)
    for i in range(10):
        p = cache / f"{i:02d}.ddxt"
        p.write_bytes(b"x" * 1000)
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    (cache / "old.ddxt.1.ab.tmp").write_bytes(b"x")
    os.utime(cache / "old.ddxt.1.ab.tmp", (1_000_000, 1_000_000))
    (cache / "other.txt").write_bytes(b"x" * 5000)  # not the cache's: left alone
    diskcache.prune(str(cache), limit=9000)  # over it: down to three quarters (6750 bytes)
    left = sorted(p.name for p in cache.iterdir())
    assert left == ["04.ddxt", "05.ddxt", "06.ddxt", "07.ddxt", "08.ddxt", "09.ddxt",
                    "other.txt"]
    diskcache.prune(str(cache), limit=9000)  # under it: nothing removed
    assert len(list(cache.iterdir())) == 7


def test_short_texts_never_touch_the_disk(cache):
    TEMPLATES.clear()
    for _ in range(3):
        g = ddx.trace("(w*x+b)^2", w=3, x=2, b=1)
        g.backward()
    assert not cache.exists()


@pytest.mark.parametrize("setting", ["0", "off", "false"])
def test_the_cache_can_be_turned_off(cache, monkeypatch, setting):
    monkeypatch.setenv("DDX_TEMPLATE_CACHE", setting)
    text, bindings = LONG[0]
    names, shapes, _ = _inputs(bindings)
    assert diskcache.directory() is None
    assert compile_source(text, names, shapes, F64) is not None
    assert diskcache.load(text, names, shapes) is None
    assert not cache.exists() and not Path(setting).exists()


def test_the_folder_honours_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("DDX_TEMPLATE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert diskcache.directory() == str(tmp_path / "xdg" / "ddx" / "templates")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert diskcache.directory() == str(tmp_path / "home" / ".cache" / "ddx" / "templates")
    monkeypatch.setenv("DDX_TEMPLATE_CACHE", "1")
    assert diskcache.directory() == str(tmp_path / "home" / ".cache" / "ddx" / "templates")


def test_a_template_of_large_arrays_from_the_disk_reuses_buffers(cache):
    from ddx.replay import plan as plan_module

    n = plan_module.SMALL + 1
    text = " + ".join(f"sum((w*x + {i})^2)" for i in range(200))
    bindings = {"w": np.full(n, 0.5), "x": np.full(n, 2.0)}
    names, shapes, arrays = _inputs(bindings)
    fresh = compile_source(text, names, shapes, F64)
    kept = diskcache.load(text, names, shapes)
    assert kept.plan == 0  # (decided on its first run: LARGE, as a fresh compile's)
    assert _run(kept, arrays) == _run(fresh, arrays)
    assert kept.plan == fresh.plan == 2


def test_the_columns_are_aligned_in_the_file(cache):
    """numpy reads an unaligned column element by element (about 50 times slower)."""
    text, bindings = LONG[1]
    names, shapes, _ = _inputs(bindings)
    compile_source(text, names, shapes, F64)
    data = _file(cache).read_bytes()
    start = diskread.PREFIX
    size = int.from_bytes(data[start:start + 8], "little")
    assert (start + 8 + size) % 8 == 0 and len(data) % 8 == 0


MORE = LONG + [  # keywords (2 - x is rsub(x, other=2)), sums of one number, int exponents
    (" + ".join(f"sum(x * {i}) - ({i} - x)^2 / (x^3 + {i + 1})" for i in range(120)),
     {"x": 0.75}),
    ("y = 2 - w; z = sum(y * x); " + " - ".join(f"({i % 4} - z) * sum(w / {i + 1})"
                                               for i in range(150)),
     {"w": np.linspace(0.5, 1.5, 4), "x": np.linspace(-1, 1, 4)}),
    # numbers equal as Python compares them, apart in their bits or type: each kept its own
    (" + ".join(f"(x * -0.0 + x * 0.0 + x * 0 + x * {i} + x * {i}.0 + x^2 + x^2.0 + 2^x "
                f"+ 2.0^x - ({i} - x) - ({i}.0 - x))" for i in range(60)),
     {"x": -1.5}),
]


@pytest.mark.parametrize("text, bindings", MORE)
def test_the_first_replay_runs_on_the_file_s_columns_with_a_fresh_compile_s_bits(
        cache, text, bindings):
    from ddx.replay.disktemplate import DiskTemplate

    names, shapes, arrays = _inputs(bindings)
    fresh = compile_source(text, names, shapes, F64)
    want = _run(fresh, arrays)
    kept = diskcache.load(text, names, shapes)
    assert type(kept) is DiskTemplate and kept.steps is not None
    assert _run(kept, arrays) == want  # forward and backward on the columns
    assert kept.steps is not None and kept.steps.ran  # (not made whole by its first run)
    assert _run(kept, arrays) == want  # run again: made whole, with its Plan
    assert kept.steps is None and kept.plan.__class__ is Plan
    assert _fields(kept) == _fields(fresh)
    assert _plan_fields(kept.plan) == _plan_fields(Plan(fresh))


def test_a_field_asked_of_a_template_from_the_disk_makes_it_whole_first(cache):
    text, bindings = MORE[4]
    names, shapes, arrays = _inputs(bindings)
    fresh = compile_source(text, names, shapes, F64)
    kept = diskcache.load(text, names, shapes)
    assert kept.json_format() == fresh.json_format() and kept.steps is None
    assert _run(kept, arrays) == _run(fresh, arrays)


def test_a_domain_problem_on_the_columns_is_the_ordinary_path_s_warning(cache):
    text = " + ".join(f"log(x + {i / 1000!r}) * {i}" for i in range(300))
    names, shapes, _ = _inputs({"x": 0.5})
    fresh = compile_source(text, names, shapes, F64)
    kept = diskcache.load(text, names, shapes)
    assert kept.forward([np.asarray(-1.0)]) is None  # (nan from log: an event)
    assert fresh.forward([np.asarray(-1.0)]) is None
    TEMPLATES.clear()
    ordinary = Trace(text, {"x": -1.0}, lean=False)
    got = ddx.trace(text, x=-1.0)  # (read from the disk: the event sends it the ordinary way)
    assert got.warnings == ordinary.warnings and got.warnings
    assert np.isnan(got.value) and np.isnan(ordinary.value.item())


def test_a_node_given_another_shape_makes_the_file_ignored(cache):
    text, bindings = LONG[2]  # (w and x of 5 elements: sums of them are ())
    names, shapes, arrays = _inputs(bindings)
    compile_source(text, names, shapes, F64)

    def edit(header, cols):
        ops = [header["ops"][i] for i in cols["op"].tolist()]
        row = ops.index("sum")
        vector = header["shapes"].index([5])
        cols["shape"][len(names) + row] = vector  # a sum said to keep its input's shape

    _resigned(_file(cache), edit)
    assert diskcache.load(text, names, shapes) is None


@pytest.mark.parametrize("text, bindings", [LONG[2], MORE[4]])
def test_random_edits_with_a_matching_crc_never_raise(cache, text, bindings):
    """A hostile file may say other numbers (nothing can tell), but whatever it says, ddx
    reads it, replays it twice and writes its JSON without an exception, or ignores it."""
    import json

    names, shapes, arrays = _inputs(bindings)
    compile_source(text, names, shapes, F64)
    path = _file(cache)
    original = path.read_bytes()
    names_of = [name for name, col in diskread.columns(original)[1].items() if col.size]
    rng = np.random.default_rng(7)
    read = 0
    for _ in range(80):
        path.write_bytes(original)

        def edit(header, cols):
            name = names_of[rng.integers(len(names_of))]
            col = cols[name].astype(np.int64 if cols[name].dtype.kind == "i" else np.float64)
            j = rng.integers(col.size)
            col[j] = rng.choice([col[j] + 1, col[j] - 1, 0, -1, -(1 << 31), 1 << 20,
                                 col[rng.integers(col.size)]])
            cols[name] = col

        _resigned(path, edit)
        t = diskcache.load(text, names, shapes)
        if t is None:
            continue
        read += 1
        for _ in range(2):
            values = t.forward(arrays)
            if values is not None:
                t.backward(values, t.g0)
        body = t.run(arrays)
        assert body is None or isinstance(json.loads("{" + body), dict)
    assert 0 < read < 80  # (some edits are only other numbers or labels; most are refused)
