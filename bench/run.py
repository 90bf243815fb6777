"""ddx benchmarks: every workload of the speed issue, ddx beside the baselines installed here,
measured in one run (medians of several repeats), printed as ratios.

    python bench/run.py            # all workloads (a few minutes)
    python bench/run.py --quick    # smaller sizes, fewer repeats
    python bench/run.py --only 8,9,10,11   # issue 21's: bench/sizes.py

Baselines: hand-written numpy always; PyTorch, JAX and micrograd when importable. The peers
start from the same expression text as ddx (Python's compile() of it, then evaluated with
their tensors), so parsing is paid by everyone."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED = "(w*x+b)^2"
PY_SEED = "(w*x+b)**2"


def median_time(fn, repeat: int, number: int = 1) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def interleaved(fns: dict, repeat: int, number: int = 1) -> dict[str, float]:
    """Median time per call of each function, the functions taking turns round by round, so
    that a noisy neighbour slows them alike and their ratio holds."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - start) / number)
    return {name: statistics.median(t) for name, t in times.items()}


def have(module: str) -> bool:
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001 - any failure means the baseline is absent
        return False


def process_time(argv: list[str], repeat: int) -> float:
    def once():
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    once()  # warm the page cache (and Lark's grammar cache)
    return median_time(once, repeat)


class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, str]] = []

    def add(self, workload: str, tool: str, seconds: float, note: str = "") -> None:
        self.rows.append((workload, tool, seconds, note))
        print(f"  {tool:<28} {fmt_time(seconds):>12}  {note}", flush=True)

    def ratio(self, workload: str, a: str, b: str) -> float | None:
        ta = next((s for w, t, s, _ in self.rows if w == workload and t == a), None)
        tb = next((s for w, t, s, _ in self.rows if w == workload and t == b), None)
        return None if ta is None or tb is None else ta / tb


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


# --- workloads ---------------------------------------------------------------------------------

def one_liner(rep: Report, repeat: int) -> None:
    print("\n[1] one-liner process: (w*x+b)^2 with gradients")
    py = sys.executable
    # as installed: pip writes bytecode at install time (PYTHONDONTWRITEBYTECODE would make
    # every run of a source tree compile ddx again, which no installed ddx does)
    import compileall

    compileall.compile_dir(str(ROOT / "ddx"), quiet=1)
    ddx = [py, "-m", "ddx", SEED, "w=3", "x=2", "b=1"]
    exe = shutil.which("ddx")
    if exe and Path(exe).parent == Path(py).parent:
        ddx = [exe, SEED, "w=3", "x=2", "b=1"]
    commands = {"imports numpy+rich+lark+click": [py, "-c", "import numpy, rich, lark, click"],
                "ddx (human view)": ddx, "ddx --json": ddx + ["--json"]}

    def runner(argv):
        return lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      check=True)
    fns = {name: runner(argv) for name, argv in commands.items()}
    for fn in fns.values():
        fn()  # warm the page cache (and the parser-table cache)
    for name, t in interleaved(fns, repeat).items():  # taking turns: noise hits all alike
        rep.add("one-liner", name, t)
    if have("torch"):
        code = ("import torch; w,x,b=(torch.tensor(v, dtype=torch.float64, requires_grad=True) "
                "for v in (3.,2.,1.)); L=eval(compile('(w*x+b)**2','<e>','eval')); L.backward();"
                " print(L.item(), w.grad.item(), x.grad.item(), b.grad.item())")
        rep.add("one-liner", "torch", process_time([py, "-c", code], max(3, repeat // 2)))
    if have("micrograd"):
        code = ("from micrograd.engine import Value; w,x,b=Value(3.),Value(2.),Value(1.); "
                "L=eval(compile('(w*x+b)**2','<e>','eval')); L.backward(); "
                "print(L.data, w.grad, x.grad, b.grad)")
        rep.add("one-liner", "micrograd", process_time([py, "-c", code], repeat))
    base = rep.ratio("one-liner", "ddx (human view)", "imports numpy+rich+lark+click")
    over = [s for w, t, s, _ in rep.rows if w == "one-liner" and t == "ddx (human view)"][0] - \
        [s for w, t, s, _ in rep.rows if w == "one-liner" and t.startswith("imports")][0]
    print(f"  -> ddx is {over * 1e3:+.0f} ms over the bare imports (target: +60 ms); "
          f"ratio {base:.2f}")
    if have("torch"):
        print(f"  -> ddx / torch = {rep.ratio('one-liner', 'ddx (human view)', 'torch'):.3f} "
              "(target <= 0.2)")


def in_process(rep: Report, repeat: int) -> None:
    print("\n[2] in-process call on the seed expression, text in, gradients out")
    import ddx
    from ddx.lang import syntax
    from ddx.replay.cache import TEMPLATES

    def ddx_fresh():
        syntax.CACHE.clear()
        TEMPLATES.clear()
        g = ddx.trace(SEED, w=3.0, x=2.0, b=1.0)
        g.backward()
        return g.grads

    def ddx_cached():
        g = ddx.trace(SEED, w=3.0, x=2.0, b=1.0)
        g.backward()
        return g.grads

    fns = {"ddx (parse every call)": ddx_fresh,
           "ddx (same text again: parse and graph cached)": ddx_cached}
    if have("torch"):
        import torch

        def torch_text():
            code = compile(PY_SEED, "<e>", "eval")
            w, x, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True)
                       for v in (3.0, 2.0, 1.0))
            L = eval(code, {}, {"w": w, "x": x, "b": b})  # noqa: S307 - the peer's own text
            L.backward()
            return w.grad, x.grad, b.grad
        fns["torch from text"] = torch_text
    if have("micrograd"):
        from micrograd.engine import Value
        compiled = compile(PY_SEED, "<e>", "eval")

        def micro():
            w, x, b = Value(3.0), Value(2.0), Value(1.0)
            L = eval(compiled, {}, {"w": w, "x": x, "b": b})  # noqa: S307
            L.backward()
            return w.grad
        fns["micrograd (compiled once)"] = micro
    for name, t in interleaved(fns, repeat, 300).items():
        rep.add("in-process", name, t)


def distinct_expressions(count: int, seed: int = 1) -> list[str]:
    """Random small expressions (depth <= 6, about 19 ops) over w, x, b."""
    import random

    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        def build(depth):
            if depth == 0 or rnd.random() < 0.2:
                return rnd.choice(["w", "x", "b", str(rnd.randint(1, 9))])
            r = rnd.random()
            if r < 0.15:
                inner = f"x * {build(depth - 1)}"
                return f"{rnd.choice(['sin', 'cos', 'tanh', 'exp'])}({inner})"
            op = rnd.choice(["+", "-", "*", "+", "*"])
            return f"({build(depth - 1)} {op} {build(depth - 1)})"
        e = build(6)
        while e.count("(") < 8:
            e = f"({e} + {build(3)})"
        out.append(e)
    return out


def many_expressions(rep: Report, count: int) -> None:
    print(f"\n[3] {count} distinct small expressions, value + 3 gradients each, parse included")
    exprs = distinct_expressions(count)
    ops = sum(e.count("(") for e in exprs) / count
    print(f"  (about {ops:.0f} operations and {sum(map(len, exprs)) / count:.0f} characters each)")
    import ddx
    from ddx.lang import syntax
    from ddx.replay.cache import TEMPLATES

    def run_ddx():
        syntax.CACHE.clear()
        TEMPLATES.clear()
        for e in exprs:
            g = ddx.trace(e, w=0.3, x=0.7, b=-0.2)
            g.backward()
    import io

    from ddx.app.batch import json_writer, run_jobs

    job_file = "".join(f'"{e}" w=0.3 x=0.7 b=-0.2\n' for e in exprs).encode()

    def run_batch():  # the batch path: a job file in, one JSON line (every node) out per job
        syntax.CACHE.clear()
        run_jobs(io.BytesIO(job_file), json_writer(io.StringIO()))
    fns = {"ddx": run_ddx, "ddx batch (JSON lines out)": run_batch}
    if have("torch"):
        import torch

        def run_torch():
            for e in exprs:
                code = compile(e, "<e>", "eval")
                w, x, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True)
                           for v in (0.3, 0.7, -0.2))
                env = {"w": w, "x": x, "b": b, "sin": torch.sin, "cos": torch.cos,
                       "tanh": torch.tanh, "exp": torch.exp}
                out = eval(code, env)  # noqa: S307 - benchmark peer on its own text
                out.backward()
        fns["torch from text"] = run_torch
    for name, t in interleaved(fns, 5).items():
        rep.add("distinct", name, t / count)
    if have("micrograd"):
        from micrograd.engine import Value
        arith = [e for e in exprs if not any(f in e for f in ("sin", "cos", "tanh", "exp"))]

        def run_micro():
            for e in arith:
                code = compile(e, "<e>", "eval")
                w, x, b = Value(0.3), Value(0.7), Value(-0.2)
                out = eval(code, {"w": w, "x": x, "b": b})  # noqa: S307
                out.backward()
        rep.add("distinct", "micrograd from text (arith only)",
                median_time(run_micro, 3) / max(1, len(arith)))
    r = rep.ratio("distinct", "ddx", "torch from text")
    if r:
        print(f"  -> ddx / torch = {r:.2f} per expression (target < 1); batch path "
              f"{rep.ratio('distinct', 'ddx batch (JSON lines out)', 'torch from text'):.2f}")


def deep_chain(rep: Report, n: int) -> None:
    print(f"\n[4] deep scalar chain of {n} ops from text")
    # a real chain: every op uses the previous result, (((x * c0 + k0) * c1 + k1) ...)
    text = "(" * (n // 2) + "x" + "".join(f" * {1 + (i % 7) * 1e-6!r} + {i % 5})"
                                          for i in range(n // 2))
    import ddx
    from ddx.lang import syntax
    from ddx.lang.syntax import parse
    from ddx.replay.cache import TEMPLATES

    syntax.CACHE.clear()
    start = time.perf_counter()
    parse(text)
    t_parse = time.perf_counter() - start

    def engine():  # a new graph every time: the recorded-graph replay would not be the engine
        TEMPLATES.clear()
        g = ddx.trace(text, x=0.5)
        g.backward()
    fns = {"ddx engine (after parse)": engine}
    if have("torch"):
        import torch

        def run_torch():
            x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
            y = x
            for i in range(n // 2):
                y = y * (1 + (i % 7) * 1e-6) + (i % 5)
            y.backward()
        fns["torch (Python loop)"] = run_torch
    times = interleaved(fns, 5)
    rep.add("deep", "ddx parse", t_parse / n, "per op")
    for name, t in times.items():
        rep.add("deep", name, t / n, "per op")
    if "torch (Python loop)" in times:
        r = rep.ratio("deep", "ddx engine (after parse)", "torch (Python loop)")
        print(f"  -> ddx engine / torch = {r:.2f} per op (target <= 0.33)")


VECTOR_DDX = textwrap.dedent("""
    import sys, time, resource, numpy as np
    sys.path.insert(0, {root!r})
    import ddx
    n = {n}
    rng = np.random.default_rng(0)
    w, x, b = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    times = []
    for _ in range({repeat}):
        t = time.perf_counter()
        g = ddx.trace("sum((w*x+b)^2)", w=w, x=x, b=b)
        g.backward()
        grads = g.grads
        times.append(time.perf_counter() - t)
        del g, grads
    print(sorted(times)[len(times) // 2], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")

VECTOR_NUMPY = textwrap.dedent("""
    import time, resource, numpy as np
    n = {n}
    rng = np.random.default_rng(0)
    w, x, b = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    times = []
    for _ in range({repeat}):
        t = time.perf_counter()
        y = w * x
        y += b
        L = float(np.sum(y * y))  # elementwise, as written by hand: no np.dot (BLAS threads)
        y *= 2.0          # dL/dy
        gw = y * x
        gx = y * w
        gb = y
        times.append(time.perf_counter() - t)
        del y, gw, gx, gb
    print(sorted(times)[len(times) // 2], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")

VECTOR_TORCH = textwrap.dedent("""
    import time, resource, numpy as np, torch
    torch.set_num_threads(1)
    n = {n}
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n) for _ in range(3)]
    times = []
    for _ in range({repeat}):
        t = time.perf_counter()
        w, x, b = (torch.tensor(a, requires_grad=True) for a in arrays)
        L = ((w * x + b) ** 2).sum()
        L.backward()
        times.append(time.perf_counter() - t)
        del w, x, b, L
    print(sorted(times)[len(times) // 2], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


# Every process that multiplies no large matrices runs numpy on one OpenBLAS thread: idle
# BLAS threads spin, and under load a threaded baseline moves with the machine, not with ddx.
ONE_BLAS = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def run_script(code: str, env: dict | None = None) -> tuple[float, int]:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env or ONE_BLAS)
    t, rss = proc.stdout.split()
    return float(t), int(rss)


def vectors(rep: Report, n: int, repeat: int) -> None:
    print(f"\n[5] sum((w*x+b)^2) over {n:.0e} float64 (w, x, b vectors), forward + backward")
    args = {"n": n, "repeat": repeat, "root": str(ROOT)}
    # two rounds, alternating the two processes; per tool the better median (the first
    # iterations of each process pay for growing its heap, and neighbours add noise)
    # (ddx splits large arrays between threads, DDX_NUM_THREADS of them; the 1-thread run
    # shows what the single-threaded engine does against the single-threaded numpy script)
    one = {**ONE_BLAS, "DDX_NUM_THREADS": "1"}
    rounds = [(run_script(VECTOR_NUMPY.format(**args)), run_script(VECTOR_DDX.format(**args)),
               run_script(VECTOR_DDX.format(**args), env=one)) for _ in range(2)]
    t_np, rss_np = min(r[0] for r in rounds)
    t_ddx, rss_ddx = min(r[1] for r in rounds)
    t_one, rss_one = min(r[2] for r in rounds)
    rep.add("vectors", "hand-written numpy", t_np, f"peak RSS {rss_np / 1024:.0f} MiB")
    rep.add("vectors", "ddx", t_ddx, f"peak RSS {rss_ddx / 1024:.0f} MiB")
    rep.add("vectors", "ddx, DDX_NUM_THREADS=1", t_one, f"peak RSS {rss_one / 1024:.0f} MiB")
    if have("torch"):
        t_t, rss_t = run_script(VECTOR_TORCH.format(**args))
        rep.add("vectors", "torch (1 thread)", t_t, f"peak RSS {rss_t / 1024:.0f} MiB")
    import sizes

    floor = 48 * n / sizes.bandwidth()  # read w, x, b and write three gradients, at copy speed
    rep.add("vectors", "bandwidth floor (48 B/element)", floor, "a large copy, this run")
    print(f"  -> ddx / numpy = {t_ddx / t_np:.2f} time (target <= 1.1; {t_one / t_np:.2f} on one "
          f"thread), {rss_ddx / rss_np:.2f} peak memory (target <= 1.5); ddx / floor "
          f"{t_ddx / floor:.2f} ({t_one / floor:.2f} on one thread; target <= 1.5)")


def job_file(rep: Report, lines: int) -> None:
    print(f"\n[6] batch job file: {lines} lines of 20 distinct expressions, output written")
    exprs = distinct_expressions(20, seed=5)
    tmp = Path(tempfile.mkdtemp())
    jobs = tmp / "jobs.txt"
    with jobs.open("w") as fh:
        for i in range(lines):
            e = exprs[i % 20]
            fh.write(f'"{e}" w={0.1 + i % 7 * 0.1:.1f} x={0.5 + i % 3:.1f} b=-0.3\n')
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ddx", "batch", str(jobs), "-o", str(tmp / "o.jsonl")],
                   check=True, stderr=subprocess.DEVNULL, cwd=ROOT)
    t_ddx = (time.perf_counter() - start) / lines
    rep.add("jobs", "ddx batch", t_ddx, "per job, whole process")
    if have("torch"):
        code = textwrap.dedent(f"""
            import json, shlex, sys, time, torch
            fns = dict(sin=torch.sin, cos=torch.cos, tanh=torch.tanh, exp=torch.exp)
            cache = {{}}
            start = time.perf_counter()
            with open({str(jobs)!r}) as fh, open({str(tmp / 't.jsonl')!r}, 'w') as out:
                for line in fh:
                    parts = shlex.split(line)
                    text = parts[0].replace('^', '**')
                    code = cache.get(text) or cache.setdefault(text, compile(text, '<e>', 'eval'))
                    env = {{k: torch.tensor(float(v), dtype=torch.float64, requires_grad=True)
                           for k, v in (p.split('=') for p in parts[1:])}}
                    y = eval(code, dict(fns, **env))
                    y.backward()
                    out.write(json.dumps({{'value': y.item(), 'gradients':
                        {{k: None if t.grad is None else t.grad.item() for k, t in env.items()}}}}) + '\\n')
            print((time.perf_counter() - start))
        """)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        rep.add("jobs", "Python loop + torch", (time.perf_counter() - start) / lines,
                "per job, whole process")
        print(f"  -> torch / ddx = {rep.ratio('jobs', 'Python loop + torch', 'ddx batch'):.2f}"
              " (target >= 2)")
    shutil.rmtree(tmp, ignore_errors=True)  # (the job file and both outputs: about 0.5 GB)


CSV_NUMPY = textwrap.dedent("""
    import sys, resource
    sys.path.insert(0, {root!r})
    from ddx.app import csvio
    src = open({path!r}, newline="")
    header = csvio.csv_header(src)
    out = open({out!r}, "w", newline="")
    out.write("value,d_w,d_x,d_b\\n")
    for chunk in csvio.read_csv(src, header, ["w", "x", "b"]):
        w, x, b = chunk.columns["w"], chunk.columns["x"], chunk.columns["b"]
        y = w * x + b
        value = y * y
        gy = 2 * y
        csvio.write_csv(out, [value, gy * x, gy * w, gy], chunk.bad)
    out.close()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def csv_rows(rep: Report, rows: int, big: int) -> None:
    print(f"\n[7] CSV: {rows} rows x 3 variables of (w*x+b)^2, read + evaluate + differentiate + "
          "write")
    import numpy as np

    tmp = Path(tempfile.mkdtemp())

    def make(path: Path, n: int) -> None:
        rng = np.random.default_rng(1)
        with path.open("w") as fh:
            fh.write("w,x,b\n")
            step = 1_000_000
            for start in range(0, n, step):
                block = rng.uniform(-1, 1, (min(step, n - start), 3))
                fh.write("\n".join(",".join(map(repr, r)) for r in block.tolist()) + "\n")

    small = tmp / "small.csv"
    make(small, rows)
    ddx_cmd = [sys.executable, "-m", "ddx", "batch", "--expr", SEED, "--csv", str(small), "-o",
               str(tmp / "ddx.csv")]
    np_cmd = [sys.executable, "-c", CSV_NUMPY.format(root=str(ROOT), path=str(small),
                                                      out=str(tmp / "np.csv"))]

    def timed(cmd):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        return time.perf_counter() - start
    t_np = statistics.median(timed(np_cmd) for _ in range(3))
    t_ddx = statistics.median(timed(ddx_cmd) for _ in range(3))
    rep.add("csv", "hand-written numpy, same reader", t_np)
    rep.add("csv", "ddx batch --csv", t_ddx)
    same = (tmp / "ddx.csv").read_text() == (tmp / "np.csv").read_text()
    print(f"  -> ddx / numpy = {t_ddx / t_np:.2f} (target <= 1.5); identical output: {same}")
    if big:
        large = tmp / "large.csv"
        make(large, big)
        rss = []
        for path in (small, large):
            # a fresh wrapper per run, so the children's peak is this run's alone
            wrapper = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True,"
                       " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
                       "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
            proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "ddx",
                                   "batch", "--expr", SEED, "--csv", str(path), "-o",
                                   str(tmp / "x.csv")], capture_output=True, text=True,
                                  check=True, cwd=ROOT)
            rss.append(int(proc.stdout.split()[-1]))
        print(f"  -> peak RSS {rss[0] / 1024:.0f} MiB for {rows} rows, {rss[1] / 1024:.0f} MiB for "
              f"{big} rows: ratio {rss[1] / rss[0]:.2f} (target <= 1.2)")
    shutil.rmtree(tmp, ignore_errors=True)


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numpy as np

    return (f"{platform.node()}: {os.cpu_count()} cores, {cpu}, Python "
            f"{platform.python_version()}, numpy {np.__version__}" +
            "".join(f", {m} {__import__(m).__version__}" for m in ("torch",) if have(m)))


def main() -> None:
    # (workloads 2-4 time parsing and compiling in this process: the template disk cache,
    # workload 11's subject, would make them read files instead)
    os.environ["DDX_TEMPLATE_CACHE"] = "0"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--only", help="comma-separated workload numbers, e.g. 1,5")
    args = parser.parse_args()
    q = args.quick
    only = set(args.only.split(",")) if args.only else None
    print(f"machine: {machine()}")
    print(f"baselines importable: torch={have('torch')} jax={have('jax')} "
          f"micrograd={have('micrograd')}")
    rep = Report()
    steps = [
        ("1", lambda: one_liner(rep, 5 if q else 15)),
        ("2", lambda: in_process(rep, 5 if q else 9)),
        ("3", lambda: many_expressions(rep, 1000 if q else 10_000)),
        ("4", lambda: deep_chain(rep, 10_000 if q else 100_000)),
        ("5", lambda: vectors(rep, 1_000_000 if q else 10_000_000, 3 if q else 9)),
        ("6", lambda: job_file(rep, 10_000 if q else 100_000)),
        ("7", lambda: csv_rows(rep, 100_000 if q else 1_000_000, 0 if q else 10_000_000)),
        # issue 21 (bench/sizes.py): every size, the fixed cost, start-up CPU, the disk cache
        ("8", lambda: sizes.sizes(2 if q else 3)),
        ("9", lambda: sizes.overhead(2 if q else 3)),
        ("10", lambda: sizes.startup(5 if q else 11)),
        ("11", lambda: sizes.diskcache(10_000 if q else 100_000)),
    ]
    import sizes

    for key, step in steps:
        if only is None or key in only:
            step()
    print("\n" + json.dumps({"rows": rep.rows}, default=str)[:0], end="")


if __name__ == "__main__":
    main()
