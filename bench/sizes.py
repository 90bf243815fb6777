"""Speed at every size (issue 21): `sum((w*x+b)^2)` from 10^3 to 10^7 elements against hand
numpy and the machine's memory-bandwidth floor, the fixed cost of a call, the one-liner's CPU
time, and a large text in a new process with the template disk cache.

    python bench/sizes.py                  # everything (about two minutes)
    python bench/sizes.py --quick          # fewer rounds
    python bench/sizes.py --only sizes,startup,overhead,diskcache
    python bench/sizes.py --against /path/to/another/checkout   # before and after, same rounds

The baselines are fixed so that a ratio moves with ddx, not with the machine's load: hand
numpy on one OpenBLAS thread, elementwise (no np.dot), each tool in its own process, the
processes taking turns round by round (the better of the rounds is kept per tool, and the
range is printed). The floor is the time to read the three inputs and write the three
gradients (48 bytes per element) at the bandwidth of a large array copy measured in the same
run (bytes read plus bytes written per second, one thread, into memory already touched)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV1 = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # for every process here, ddx's and numpy's

SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)
AGAINST: list[Path] = []  # --against
# calls timed per process: about a third of a second each
CALLS = {1_000: 3000, 10_000: 1500, 100_000: 300, 1_000_000: 40, 10_000_000: 9}


def calls(n: int) -> int:
    """Calls timed per process at size n: about a third of a second each."""
    return CALLS.get(n) or max(5, min(3000, int(3e8 / (48 * n + 2e5))))

_COMMON = """
import os, sys, time, resource, numpy as np
sys.path.insert(0, {root!r})
n, calls = {n}, {calls}
rng = np.random.default_rng(0)
w, x, b = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def measure(step):
    for _ in range(max(3, calls // 10)):
        step()
    times = []
    f0, c0 = faults(), time.process_time()
    for _ in range(calls):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    cpu = (time.process_time() - c0) / calls  # (user + system, every thread: the kernel's
    per = (faults() - f0) / calls             # work for page faults included)
    times.sort()
    print(times[len(times) // 2], per, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, cpu)
"""

DDX_STEP = _COMMON + """
import ddx
def step():
    g = ddx.trace("sum((w*x+b)^2)", w=w, x=x, b=b)
    g.backward()
    return g.value, g.grads
measure(step)
"""

NUMPY_STEP = _COMMON + """
def step():  # elementwise, as written by hand: no np.dot
    y = w * x
    y += b
    L = np.sum(y * y)
    y *= 2.0  # dL/dy
    return L, (y * x, y * w, y)
measure(step)
"""

COPY = """
import time, numpy as np
src = np.random.default_rng(0).standard_normal(4 * 10**7)  # 320 MB: far beyond any cache
dst = np.empty_like(src)
dst[...] = 0.0  # touched: no page faults in the copy
times, cpu = [], []
for _ in range(7):
    t, c = time.perf_counter(), time.process_time()
    np.copyto(dst, src)
    times.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
print(2 * src.nbytes / min(times), 2 * src.nbytes / min(cpu))  # bytes read + written, per s
"""


def run(code: str, env: dict | None = None) -> list[float]:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env or ENV1)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return [float(v) for v in proc.stdout.split()]


def fmt(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def bandwidth(cpu: bool = False) -> float:
    """Bytes per second of a large copy (read + write), by the clock or (``cpu``) by the
    copying process's CPU time (what a loaded machine does not add)."""
    return run(COPY)[1 if cpu else 0]


def sizes(rounds: int, sizes_: tuple = SIZES) -> dict:
    """Per size: (numpy, ddx, ddx on one thread) as (time, faults per call, peak RSS KiB),
    the better round of each, and every round's times."""
    print("\n[sizes] sum((w*x+b)^2) forward + backward, value and three gradients; "
          "OPENBLAS_NUM_THREADS=1 for both")
    bw, bw_cpu = run(COPY)
    print(f"  memory bandwidth (large copy, read + write, one thread): {bw / 1e9:.1f} GB/s by the "
          f"clock, {bw_cpu / 1e9:.1f} GB/s by its CPU time; floor = 48 bytes per element at "
          "that rate")
    one = {**ENV1, "DDX_NUM_THREADS": "1"}
    tools = {"numpy": (NUMPY_STEP, ENV1, ROOT), "ddx": (DDX_STEP, ENV1, ROOT),
             "ddx 1 thread": (DDX_STEP, one, ROOT),
             # the other way: glibc's own thresholds (ddx/replay/allocator.py not applied)
             "ddx, malloc as is": (DDX_STEP, {**ENV1, "DDX_MALLOC": "default"}, ROOT)}
    if AGAINST:  # another checkout, on one thread, in the same rounds (a before and after)
        tools["other"] = (DDX_STEP, one, AGAINST[0])
    found: dict = {}
    print(f"  {'n':>10} {'numpy':>10} {'ddx':>10} {'ddx/np':>7} {'1 thread':>10} {'/np':>6}"
          f" {'floor':>9} {'ddx/floor':>9}  page faults per call: numpy/ddx/1 thread/malloc as is")
    for n in sizes_:
        got: dict = {name: [] for name in tools}
        for _ in range(rounds):  # the tools take turns, round by round
            for name, (code, env, root) in tools.items():
                if n < 750_000 and name == "ddx 1 thread" or n < 100_000 and \
                        name == "ddx, malloc as is":
                    continue  # (one thread below parallel.MIN_SIZE; small arrays: no tuning)
                got[name].append(run(code.format(root=str(root), n=n, calls=calls(n)), env))
        for name in ("ddx 1 thread", "ddx, malloc as is"):
            if not got[name]:
                got[name] = got["ddx"]
        best = {name: min(rs) for name, rs in got.items()}
        floor = 48 * n / bw
        t_np, t_d, t_1 = best["numpy"][0], best["ddx"][0], best["ddx 1 thread"][0]
        faults = "/".join(f"{best[k][1]:.0f}" for k in tools if k != "other")
        print(f"  {n:>10.0e} {fmt(t_np):>10} {fmt(t_d):>10} {t_d / t_np:>7.2f} {fmt(t_1):>10}"
              f" {t_1 / t_np:>6.2f} {fmt(floor):>9} {t_d / floor:>9.2f}  {faults}")
        ratios = sorted(r[0] / q[0] for r, q in zip(got["ddx"], got["numpy"]))
        cpu = {name: min(r[3] for r in rs) for name, rs in got.items()}
        floor_cpu = 48 * n / bw_cpu
        print(f"  {'':>10} CPU per call (process time, one thread each: robust to a loaded "
              f"machine): numpy {fmt(cpu['numpy'])}, ddx 1 thread {fmt(cpu['ddx 1 thread'])} "
              f"({cpu['ddx 1 thread'] / cpu['numpy']:.2f}), malloc as is "
              f"{fmt(cpu['ddx, malloc as is'])} ({cpu['ddx, malloc as is'] / cpu['numpy']:.2f});"
              f" floor {fmt(floor_cpu)} ({cpu['ddx 1 thread'] / floor_cpu:.2f})")
        as_is = best["ddx, malloc as is"][0]
        print(f"  {'':>10} ratio ddx/numpy across rounds {ratios[0]:.2f}-{ratios[-1]:.2f};"
              f" malloc as is {fmt(as_is)} ({as_is / t_np:.2f} of numpy); peak RSS numpy "
              f"{best['numpy'][2] / 1024:.0f} MiB, ddx {best['ddx'][2] / 1024:.0f} MiB "
              f"(malloc as is {best['ddx, malloc as is'][2] / 1024:.0f} MiB)")
        if AGAINST:
            o = best["other"]
            print(f"  {'':>10} {AGAINST[0]} on one thread: {fmt(o[0])} ({o[0] / t_np:.2f} of "
                  f"numpy), CPU {fmt(cpu['other'])} ({cpu['other'] / cpu['numpy']:.2f}), "
                  f"{o[1]:.0f} page faults per call")
        found[n] = (best, floor)
    print("  targets: <= 2x numpy at 1e3; <= 1x from 1e4; beats numpy at 1e6; "
          "<= 1.5x the floor at 1e7")
    return found


OVERHEAD = """
import sys, time
sys.path.insert(0, {root!r})
import ddx
def step(text):
    g = ddx.trace(text, w=3.0, x=2.0, b=1.0)
    g.backward()
    return g.grads
for text in ("sum((w*x+b)^2)", "(w*x+b)^2"):
    for _ in range(2000):
        step(text)
    times, cpu = [], []
    for _ in range(20):  # per call, the median (a call the scheduler stopped is an outlier)
        c = time.thread_time()
        for _ in range(500):
            t = time.perf_counter()
            step(text)
            times.append(time.perf_counter() - t)
        cpu.append((time.thread_time() - c) / 500)
    print(sorted(times)[len(times) // 2], sorted(cpu)[10])
"""


def overhead(rounds: int) -> None:
    print("\n[overhead] ddx.trace + backward + grads on a text that repeats (scalars): the "
          "fixed cost of a call")
    roots = [ROOT] + AGAINST
    runs = [[run(OVERHEAD.format(root=str(root))) for root in roots] for _ in range(rounds)]
    for which, root in enumerate(roots):
        if AGAINST:
            print(f"  {root}:")
        _overhead_lines([r[which] for r in runs])


def _overhead_lines(got: list) -> None:
    for k, text in enumerate(("sum((w*x+b)^2) (4 ops)", "(w*x+b)^2 (3 ops)")):
        wall = sorted(r[2 * k] for r in got)
        cpu = sorted(r[2 * k + 1] for r in got)
        print(f"  {text:<24} {fmt(wall[0]):>9} a call (median; rounds {fmt(wall[0])}-"
              f"{fmt(wall[-1])}), {fmt(cpu[0])} of CPU (thread time){'   target < 10 µs' if k == 0 else ''}")


def cpu_of(argv: list[str], env: dict) -> tuple[float, float]:
    """(CPU seconds, user + system, of the process and its threads; wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed")
    return usage.ru_utime + usage.ru_stime, wall


def startup(rounds: int) -> None:
    print("\n[startup] the one-liner's CPU time beside `python -c 'import numpy'` (the user's "
          "environment as it is: OPENBLAS_NUM_THREADS unset)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    py = sys.executable
    import compileall

    compileall.compile_dir(str(ROOT / "ddx"), quiet=1)  # as pip installs it: bytecode written
    seed = ["(w*x+b)^2", "w=3", "x=2", "b=1"]
    cmds = {"import numpy": [py, "-c", "import numpy"],
            "ddx --json": [py, "-m", "ddx", *seed, "--json"],
            "ddx (human view)": [py, "-m", "ddx", *seed]}
    for argv in cmds.values():
        cpu_of(argv, env)  # warm the page cache
    got: dict = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, argv in cmds.items():
            got[name].append(cpu_of(argv, env))
    med = {name: (statistics.median(c for c, _ in rs), statistics.median(w for _, w in rs))
           for name, rs in got.items()}
    base = med["import numpy"][0]
    for name, (cpu, wall) in med.items():
        print(f"  {name:<18} CPU {cpu * 1e3:6.1f} ms  wall {wall * 1e3:6.1f} ms  "
              f"CPU / import numpy {cpu / base:.2f}")
    print("  target: the one-liner's CPU <= 1.3x import numpy's")


DISK = """
import sys, time
sys.path.insert(0, {root!r})
n = {n}
text = "(" * (n // 2) + "x" + "".join(f" * {{1 + (i % 7) * 1e-6!r}} + {{i % 5}})"
                                      for i in range(n // 2))
t0 = time.perf_counter()
import ddx, ddx.app.api, ddx.replay.lean  # (the modules a call needs: their import is not its cost)
def step():
    g = ddx.trace(text, x=0.5)
    g.backward()
    return g.grads["x"]
t, c = time.perf_counter(), time.process_time()
first = step()
t_first, c_first = time.perf_counter() - t, time.process_time() - c
step(); step()  # (the in-process cache keeps a template once its key comes back)
times, cpu = [], []
for _ in range(3):
    t, c = time.perf_counter(), time.process_time()
    again = step()
    times.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
assert again == first
print(t_first, min(times), time.perf_counter() - t0, c_first, min(cpu))
"""


def diskcache(n: int) -> None:
    import compileall

    compileall.compile_dir(str(ROOT / "ddx"), quiet=1)  # as installed: bytecode written
    print(f"\n[diskcache] a {n}-op text in new processes: the first call cold, then again with "
          "the template disk cache warm, and in-process replays")
    with tempfile.TemporaryDirectory() as home:
        env = {**ENV1, "XDG_CACHE_HOME": home}
        env.pop("DDX_TEMPLATE_CACHE", None)  # (the documented place: $XDG_CACHE_HOME/ddx)
        code = DISK.format(root=str(ROOT), n=n)
        cold = run(code, env)
        warm = [run(code, env) for _ in range(3)]
        off = run(code, {**env, "DDX_TEMPLATE_CACHE": "0"})
        files = sum(len(f) for _, _, f in os.walk(home))
        size = sum(p.stat().st_size for p in Path(home).rglob("*") if p.is_file())
    # the better of the warm processes, first call and replay each (as the sizes workload
    # keeps the better round); and the same by CPU time, which a loaded machine moves less
    w = [min(r[i] for r in warm) for i in range(5)]
    print(f"  new process, cache empty:   first call {fmt(cold[0]):>10}  (replay in-process "
          f"{fmt(cold[1])})")
    print(f"  new process, cache warm:    first call {fmt(w[0]):>10}  (replay in-process "
          f"{fmt(w[1])}): {w[0] / w[1]:.2f}x its replay (target <= 2); by CPU time "
          f"{fmt(w[3])} against {fmt(w[4])}: {w[3] / w[4]:.2f}x")
    print(f"  new process, cache off:     first call {fmt(off[0]):>10}")
    print(f"  cache: {files} files, {size / 1e6:.1f} MB under $XDG_CACHE_HOME/ddx")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="sizes,overhead,startup,diskcache")
    parser.add_argument("--sizes", help="comma-separated sizes of the sizes workload, e.g. "
                        "1e3,1e4 (default: 1e3 to 1e7)")
    parser.add_argument("--against", type=Path, help="another ddx checkout, measured in the "
                        "same rounds (sizes on one thread, and overhead): a before and after")
    args = parser.parse_args()
    if args.against:
        AGAINST.append(args.against.resolve())
    only = args.only.split(",")
    rounds = 2 if args.quick else 3
    with open("/proc/loadavg") as fh:
        print(f"load average at start: {fh.read().split()[:3]}")
    if "overhead" in only:
        overhead(rounds)
    if "sizes" in only:
        sizes(rounds, tuple(int(float(v)) for v in args.sizes.split(",")) if args.sizes
              else SIZES)
    if "startup" in only:
        startup(5 if args.quick else 11)
    if "diskcache" in only:
        diskcache(10_000 if args.quick else 100_000)
    with open("/proc/loadavg") as fh:
        print(f"\nload average at end: {fh.read().split()[:3]}")


if __name__ == "__main__":
    main()
