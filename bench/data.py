"""Data mode at scale: ``ddx batch --data`` beside Polars (lazy, streaming: scan, expressions,
sink) and DuckDB (SQL: COPY (SELECT ...) TO), end to end from reading to writing, on CSV and
Parquet files generated under /tmp (never committed).

Workloads: ``(w*x+b)^2`` with its three derivatives (3 columns in, 4 out), and a Black-Scholes
call with its Greeks (S, K, sigma, r, T in; the price and 5 derivatives out). ddx differentiates
the formula; Polars and DuckDB are given the closed-form derivatives written out by hand. Neither
has erf: Polars calls scipy's erf ufunc on each batch, DuckDB uses the Abramowitz-Stegun 7.1.26
formula (1.5e-7 absolute error, and cheaper than an exact erf). Each run is a new process; the
tools take turns round by round; the table shows medians, rows per second, CPU time (user +
system), peak memory (the process's maximum resident set). Every output is checked against
numpy's closed form.

    python bench/data.py                        # 10^6 and 10^7 rows, 3 rounds
    python bench/data.py --rows 1e6 --rounds 1  # quick
    python bench/data.py --memory 1e8           # ddx's peak memory at 10^6 and 10^8 rows
    python bench/data.py --bad 0.001            # 0.1% of the rows with an empty field
    python bench/data.py --instructions 1e5     # instructions per row and at start (valgrind)

With ``--bad F`` a fraction F of the rows has one field empty (a null in Parquet): ddx reports
each as a bad row and writes it with empty results, Polars and DuckDB read a null and write
nulls; the check skips those rows.

Polars, DuckDB and scipy are benchmark-only: pip install polars duckdb scipy 'ddx[data]'.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys

import numpy as np

WORK = os.environ.get("DDX_BENCH_DIR", "/tmp/ddx-bench-data")

WXB = "(w*x+b)^2"
BS = ("d1 = (log(S/K) + (r + sigma^2/2)*T) / (sigma*sqrt(T)); d2 = d1 - sigma*sqrt(T); "
      "C = S*0.5*(1 + erf(d1/sqrt(2))) - K*exp(-r*T)*0.5*(1 + erf(d2/sqrt(2)))")
WORKLOADS = {"wxb": (WXB, ["w", "x", "b"]), "bs": (BS, ["S", "K", "sigma", "r", "T"])}

POLARS = r"""
import sys, math, polars as pl
kind, src, dst = sys.argv[1:]
scan = pl.scan_parquet(src) if src.endswith(".parquet") else pl.scan_csv(src)
c = pl.col
if kind == "wxb":
    y = c("w") * c("x") + c("b")
    q = scan.select(value=y * y, d_w=2 * y * c("x"), d_x=2 * y * c("w"), d_b=2 * y)
else:
    from scipy.special import erf
    S, K, s, r, T = c("S"), c("K"), c("sigma"), c("r"), c("T")
    q = scan.with_columns(sq=T.sqrt(), disc=(-r * T).exp())
    q = q.with_columns(d1=((S / K).log() + (r + s * s / 2) * T) / (s * c("sq")))
    q = q.with_columns(d2=c("d1") - s * c("sq"))
    q = q.with_columns(N1=0.5 * (1 + erf(c("d1") / math.sqrt(2))),
                       N2=0.5 * (1 + erf(c("d2") / math.sqrt(2))),
                       phi=(-c("d1") * c("d1") / 2).exp() / math.sqrt(2 * math.pi))
    q = q.select(value=S * c("N1") - K * c("disc") * c("N2"), d_S=c("N1"),
                 d_K=-c("disc") * c("N2"), d_r=K * T * c("disc") * c("N2"),
                 d_sigma=S * c("phi") * c("sq"),
                 d_T=S * c("phi") * s / (2 * c("sq")) + r * K * c("disc") * c("N2"))
(q.sink_parquet if dst.endswith(".parquet") else q.sink_csv)(dst)
"""

DUCKDB = r"""
import sys, duckdb
kind, src, dst = sys.argv[1:]
con = duckdb.connect()
read = f"read_parquet('{src}')" if src.endswith(".parquet") else f"read_csv('{src}')"
if kind == "wxb":
    sel = ("(w*x+b)*(w*x+b) AS value, 2*(w*x+b)*x AS d_w, 2*(w*x+b)*w AS d_x, "
           "2*(w*x+b) AS d_b FROM " + read)
else:
    con.sql("CREATE MACRO erf_t(x, t) AS sign(x) * (1 - (((((1.061405429*t - 1.453152027)*t "
            "+ 1.421413741)*t - 0.284496736)*t + 0.254829592)*t) * exp(-x*x))")
    con.sql("CREATE MACRO erf_(x) AS erf_t(x, 1/(1 + 0.3275911*abs(x)))")
    base = (f"SELECT S, K, sigma, r, T, sqrt(T) AS sq, exp(-r*T) AS disc, "
            f"(ln(S/K) + (r + sigma*sigma/2)*T)/(sigma*sqrt(T)) AS d1 FROM {read}")
    mid = ("SELECT *, 0.5*(1 + erf_((d1)/sqrt(2))) AS N1, 0.5*(1 + erf_((d1 - sigma*sq)/sqrt(2)))"
           f" AS N2, exp(-d1*d1/2)/sqrt(2*pi()) AS phi FROM ({base})")
    sel = ("S*N1 - K*disc*N2 AS value, N1 AS d_S, -disc*N2 AS d_K, K*T*disc*N2 AS d_r, "
           "S*phi*sq AS d_sigma, S*phi*sigma/(2*sq) + r*K*disc*N2 AS d_T FROM (" + mid + ")")
fmt = "(FORMAT parquet)" if dst.endswith(".parquet") else "(FORMAT csv, HEADER)"
con.sql(f"COPY (SELECT {sel}) TO '{dst}' {fmt}")
"""


def generate(kind: str, n: int, bad: float = 0.0) -> dict[str, str]:
    """The workload's input as CSV and Parquet (made once; kept under WORK between runs), with
    one field empty in a fraction ``bad`` of the rows."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    os.makedirs(WORK, exist_ok=True)
    tag = f"_bad{bad:g}" if bad else ""
    paths = {fmt: f"{WORK}/{kind}_{n}{tag}.{fmt}" for fmt in ("csv", "parquet")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    rng = np.random.default_rng(2026)
    names = WORKLOADS[kind][1]
    step = 10_000_000
    csv_w = pq_w = None
    for start in range(0, n, step):
        m = min(step, n - start)
        if kind == "wxb":
            cols = {k: rng.standard_normal(m) for k in names}
        else:
            cols = {"S": rng.uniform(50, 150, m), "K": rng.uniform(50, 150, m),
                    "sigma": rng.uniform(0.1, 0.6, m), "r": rng.uniform(0, 0.08, m),
                    "T": rng.uniform(0.05, 3, m)}
        if bad:
            hit = rng.random(m) < bad
            which = rng.integers(0, len(names), m)
            cols = {k: pa.array(v, mask=hit & (which == j)) for j, (k, v) in
                    enumerate(cols.items())}
        table = pa.table(cols)
        if csv_w is None:
            csv_w = pcsv.CSVWriter(paths["csv"] + ".tmp", table.schema)
            pq_w = pq.ParquetWriter(paths["parquet"] + ".tmp", table.schema)
        csv_w.write_table(table)
        pq_w.write_table(table, row_group_size=1 << 20)
    csv_w.close()
    pq_w.close()
    for p in paths.values():
        os.replace(p + ".tmp", p)
    return paths


def command(tool: str, kind: str, src: str, dst: str) -> tuple[list[str], dict]:
    # Every tool runs from compiled bytecode, as an installed package does: with
    # PYTHONDONTWRITEBYTECODE set (as in some sandboxes) and no .pyc beside ddx's sources, ddx
    # compiled its 110 modules from source on every run, 0.2-0.25 s of a 10^6-row job that
    # Polars and DuckDB (compiled code, installed .pyc) never pay. The .pyc go under WORK.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = f"{WORK}/pycache"
    if tool.startswith("ddx"):
        if tool == "ddx (plain reader)":
            env["DDX_DATA_ENGINE"] = "plain"
        return [sys.executable, "-m", "ddx", "batch", "--expr", WORKLOADS[kind][0], "--data", src,
                "-o", dst], env
    script = POLARS if tool == "polars" else DUCKDB
    return [sys.executable, "-c", script, kind, src, dst], env


# A small launcher runs each tool, so that the peak it reports is the tool's own (a child forked
# from this process would count this process's memory as its own until it execs).
LAUNCH = ("import resource, subprocess, sys, time\n"
          "t = time.perf_counter(); code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
          "t = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
          "print(code, t, u.ru_maxrss, u.ru_utime + u.ru_stime, file=sys.stderr)")


def run_once(cmd: list[str], env: dict, bad_ok: bool = False) -> tuple[float, int]:
    """(seconds, peak resident KiB) of one process; its CPU seconds (user + system) are left in
    run_once.cpu. (``bad_ok``: exit code 1, ddx's for a run with bad rows, is no failure.)"""
    proc = subprocess.run([sys.executable, "-S", "-c", LAUNCH, *cmd], env=env,
                          capture_output=True)
    err = proc.stderr.decode().strip().splitlines()
    code, took, peak, cpu = err[-1].split()
    if code != "0" and not (bad_ok and code == "1"):
        raise SystemExit(f"{cmd[:4]} failed ({code}): {chr(10).join(err[-8:])}")
    run_once.cpu = float(cpu)
    return float(took), int(peak)


def closed_form(kind: str, cols: dict) -> dict[str, np.ndarray]:
    if kind == "wxb":
        w, x, b = cols["w"], cols["x"], cols["b"]
        y = w * x + b
        return {"value": y * y, "d_w": 2 * y * x, "d_x": 2 * y * w, "d_b": 2 * y}
    from scipy.special import erf

    S, K, s, r, T = (cols[k] for k in ("S", "K", "sigma", "r", "T"))
    sq, disc = np.sqrt(T), np.exp(-r * T)
    d1 = (np.log(S / K) + (r + s * s / 2) * T) / (s * sq)
    d2 = d1 - s * sq
    n1, n2 = 0.5 * (1 + erf(d1 / np.sqrt(2))), 0.5 * (1 + erf(d2 / np.sqrt(2)))
    phi = np.exp(-d1 * d1 / 2) / np.sqrt(2 * np.pi)
    return {"value": S * n1 - K * disc * n2, "d_S": n1, "d_K": -disc * n2,
            "d_r": K * T * disc * n2, "d_sigma": S * phi * sq,
            "d_T": S * phi * s / (2 * sq) + r * K * disc * n2}


def check(kind: str, src: str, dst: str, rows: int = 100_000) -> float:
    """The largest relative difference from numpy's closed form over the first rows."""
    import polars as pl

    read = pl.read_parquet if src.endswith(".parquet") else pl.read_csv
    inp = read(src, n_rows=rows) if src.endswith(".csv") else read(src).head(rows)
    out = (pl.read_csv(dst, n_rows=rows) if dst.endswith(".csv") else
           pl.read_parquet(dst).head(rows))
    want = closed_form(kind, {c: inp[c].to_numpy() for c in inp.columns})
    worst = 0.0
    for name, w in want.items():  # relative, except near 0 (1e-9 of the column's largest)
        got = out[name].to_numpy()
        ok = ~np.isnan(w)  # (a bad row: a null in, nothing to check)
        got, w = got[ok], w[ok]
        scale = np.maximum(np.abs(w), 1e-9 * np.abs(w).max())
        worst = max(worst, float(np.max(np.abs(got - w) / scale)))
    return worst


def warm(kinds: list[str], formats: list[str]) -> None:
    """Each tool run once on 1,000 rows, untimed: its bytecode is then compiled and cached."""
    for kind in kinds:
        paths = generate(kind, 1000)
        for fmt in formats:
            for tool in ("ddx", "polars", "duckdb"):
                run_once(*command(tool, kind, paths[fmt], f"{WORK}/out_warm.{fmt}"))


def bench(sizes: list[int], rounds: int, kinds: list[str], formats: list[str],
          bad: float = 0.0) -> list[dict]:
    tools = ["ddx", "polars", "duckdb"]
    results = []
    warm(kinds, formats)
    for n in sizes:
        for kind in kinds:
            paths = generate(kind, n, bad)
            for fmt in formats:
                these = tools + (["ddx (plain reader)"] if fmt == "csv" and n <= 1_000_000 else [])
                times = {t: [] for t in these}
                cpus = {t: [] for t in these}
                peaks = {t: 0 for t in these}
                errs = {}
                for k in range(rounds):
                    order = these[k % len(these):] + these[:k % len(these)]
                    for tool in order:
                        dst = f"{WORK}/out_{tool.split()[0]}.{fmt}"
                        took, peak = run_once(*command(tool, kind, paths[fmt], dst),
                                              bad_ok=bad > 0)
                        times[tool].append(took)
                        cpus[tool].append(run_once.cpu)
                        peaks[tool] = max(peaks[tool], peak)
                        if k == 0:
                            errs[tool] = check(kind, paths[fmt], dst)
                for tool in these:
                    t = statistics.median(times[tool])
                    row = {"rows": n, "workload": kind, "format": fmt, "tool": tool, "s": t,
                           "min": min(times[tool]), "max": max(times[tool]),
                           "rows_per_s": n / t, "peak_mib": peaks[tool] / 1024,
                           "max_rel_err": errs[tool], "cpu_s": statistics.median(cpus[tool])}
                    results.append(row)
                    print(f"{n:>11,} {kind:4} {fmt:8} {tool:19} {t:7.2f} s ({row['min']:.2f}-"
                          f"{row['max']:.2f})  {n / t:>12,.0f} rows/s  cpu {row['cpu_s']:6.2f} s"
                          f"  {row['peak_mib']:7.0f} MiB  err {errs[tool]:.1e}  load "
                          f"{os.getloadavg()[0]:.1f}", flush=True)
    return results


def memory(n_big: int) -> None:
    """ddx's peak memory on 10^6 rows and on ``n_big`` rows, CSV and Parquet."""
    warm(["wxb"], ["csv", "parquet"])
    for fmt in ("csv", "parquet"):
        peaks = {}
        for n in (1_000_000, n_big):
            paths = generate("wxb", n)
            took, peak = run_once(*command("ddx", "wxb", paths[fmt], f"{WORK}/out_mem.{fmt}"))
            peaks[n] = peak
            print(f"memory {fmt:8} {n:>12,} rows: {took:7.1f} s, {n / took:12,.0f} rows/s, "
                  f"peak {peak / 1024:6.0f} MiB", flush=True)
        print(f"memory {fmt}: {n_big:,} rows / 10^6 rows = {peaks[n_big] / peaks[1_000_000]:.2f}x")


def instructions(n: int, kinds: list[str], formats: list[str]) -> None:
    """Instructions per row and at start (valgrind's callgrind, every thread counted), each tool
    on ``n`` rows and on none: counts the machine's load does not move, for the changes the
    clock cannot see on a shared machine (valgrind runs each tool 30-60 times slower). Only a
    rough guide for these multithreaded jobs: valgrind runs one thread at a time, and Polars'
    idle workers spin, so waiting shows up as instructions."""
    import re
    import shutil

    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    import pyarrow as pa
    import pyarrow.parquet as pq

    def counted(tool: str, kind: str, src: str, dst: str) -> int:
        cmd, env = command(tool, kind, src, dst)
        env = {**env, "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                               *cmd], capture_output=True, text=True, env=env)
        found = re.search(r"Collected : (\d+)", proc.stderr)
        if found is None or proc.returncode not in (0, 1):
            raise SystemExit(f"valgrind {tool} failed:\n{proc.stderr[-2000:]}")
        return int(found[1])

    warm(kinds, formats)  # (else the first count would hold the bytecode's compile)
    for kind in kinds:
        paths = generate(kind, n)
        names = WORKLOADS[kind][1]
        empty = {"csv": f"{WORK}/{kind}_empty.csv", "parquet": f"{WORK}/{kind}_empty.parquet"}
        with open(empty["csv"], "w") as fh:
            fh.write(",".join(names) + "\n")
        pq.write_table(pa.table({k: pa.array([], pa.float64()) for k in names}), empty["parquet"])
        for fmt in formats:
            for tool in ("ddx", "polars", "duckdb"):
                dst = f"{WORK}/out_count.{fmt}"
                start = counted(tool, kind, empty[fmt], dst)
                full = counted(tool, kind, paths[fmt], dst)
                print(f"instructions {kind:4} {fmt:8} {tool:7} {(full - start) / n:9,.0f} a row"
                      f"  {start / 1e6:9,.0f} M at start", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="1e6,1e7", help="sizes, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="wxb,bs", help="workloads: wxb, bs")
    ap.add_argument("--formats", default="csv,parquet")
    ap.add_argument("--memory", type=float, help="also ddx's peak memory at this many rows")
    ap.add_argument("--instructions", type=float,
                    help="only count instructions (valgrind) on this many rows")
    ap.add_argument("--bad", type=float, default=0.0,
                    help="the fraction of rows with an empty field (bad rows for ddx)")
    args = ap.parse_args()
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    import duckdb
    import polars

    print(f"polars {polars.__version__}, duckdb {duckdb.__version__}, numpy {np.__version__}")
    if args.instructions:
        instructions(int(args.instructions), args.only.split(","), args.formats.split(","))
        return
    sizes = [int(float(s)) for s in args.rows.split(",") if s]
    bench(sizes, args.rounds, args.only.split(","), args.formats.split(","), args.bad)
    if args.memory:
        memory(int(args.memory))


if __name__ == "__main__":
    main()
