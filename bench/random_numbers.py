"""How long ddx's PyTorch-compatible generator (ddx/ops/rng.py) takes for 10**6 numbers of
each kind, beside PyTorch's own C++ (when installed, one thread): the median CPU time
of a few runs (CPU time: these machines are shared).

    python bench/random_numbers.py [--n 1000000] [--repeat 5]"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ddx.ops.rng import Generator  # noqa: E402


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    gen = Generator()
    gen.manual_seed(0)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    cases = [("rand", "float32"), ("rand", "float64"), ("randn", "float32"),
             ("randn", "float64"), ("randint(0, 10)", "int64")]
    print(f"{n:,} numbers, median CPU time of {args.repeat} runs")
    print(f"{'call':<16}{'dtype':<9}{'ddx':>10}{'torch':>10}")
    for what, dtype in cases:
        ours, theirs = calls(gen, torch, what, dtype, n)
        t_ours = median_time(ours, args.repeat)
        t_theirs = f"{median_time(theirs, args.repeat) * 1e3:.1f} ms" if torch else "-"
        print(f"{what:<16}{dtype:<9}{t_ours * 1e3:>7.1f} ms{t_theirs:>10}")


def calls(gen: Generator, torch, what: str, dtype: str, n: int):
    """ddx's call and PyTorch's for one kind of number."""
    tdt = getattr(torch, dtype) if torch else None
    if what == "rand":
        return (lambda: gen.uniform(n, dtype)), (lambda: torch.rand(n, dtype=tdt))
    if what == "randn":
        return (lambda: gen.normal(n, dtype)), (lambda: torch.randn(n, dtype=tdt))
    return (lambda: gen.randint(n, 0, 10)), (lambda: torch.randint(0, 10, (n,)))


if __name__ == "__main__":
    main()
