"""Instructions per batch job, counted by valgrind (callgrind): a measure that does not move
with what else the machine is doing, for changes smaller than the timing noise.

    python bench/instructions.py            # this checkout, 2,000 of bench/run.py's expressions
    python bench/instructions.py --jobs 500 --root /path/to/another/checkout

The count is a difference of two runs of the same script, with the jobs and without them,
so start-up and warm-up cancel out. It takes about a minute per checkout (valgrind runs
Python some 50 times slower). Counts are not times: use it to compare two versions of the
code, and bench/run.py for ratios against the baselines."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs in the measured process: the jobs of bench/run.py's workload 3, after a warm-up.
SCRIPT = """
import io, sys
sys.path.insert(0, {root!r})
sys.path.insert(1, {bench!r})
import ddx
from run import distinct_expressions
from ddx.app.batch import json_writer, run_jobs
exprs = distinct_expressions(300 + {jobs})
lines = [f'"{{e}}" w=0.3 x=0.7 b=-0.2\\n' for e in exprs]
run_jobs(io.BytesIO("".join(lines[:300]).encode()), json_writer(io.StringIO()))
run_jobs(io.BytesIO("".join(lines[300:300 + {count}]).encode()), json_writer(io.StringIO()))
"""


def count(root: Path, jobs: int, measured: int) -> int:
    code = SCRIPT.format(root=str(root), bench=str(ROOT / "bench"), jobs=jobs, count=measured)
    # the same count every time: one thread (OpenBLAS's idle threads spin, and valgrind
    # counts every thread), and the same string hashes
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "DDX_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           sys.executable, "-c", code], capture_output=True, text=True, env=env)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed:\n{proc.stderr[-2000:]}")
    return int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000, help="jobs measured (default 2000)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the ddx checkout to measure")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    base = count(args.root, args.jobs, 0)
    total = count(args.root, args.jobs, args.jobs)
    print(f"{args.root}: {(total - base) / args.jobs:,.0f} instructions per batch job "
          f"({args.jobs} jobs of bench/run.py's distinct expressions, JSON out)")


if __name__ == "__main__":
    main()
