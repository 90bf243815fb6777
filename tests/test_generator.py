"""torch.Generator objects, generator= of the random functions, DataLoader(generator=) and
random_split (issue 15): the printed numbers are PyTorch's (tests/pyscripts/doc9_generator.py,
run through both by tests/test_python_subset.py); here what a script cannot show there: a
failing statement leaves a generator's state as it was, the errors, and get_state's bytes
against PyTorch's after any draws (doc10_rng_state.py has the rest)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ddx_run, torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.ops.rng import Generator, StateError


def test_a_failing_statement_leaves_the_generator_as_it_was(tmp_path):
    torch = torch_or_skip()
    want = torch.rand(2, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    done = ddx_run(tmp_path, "import torch\ng = torch.Generator().manual_seed(1)\n"
                          "x = torch.rand(2, generator=g) + nope\n"
                          "print(torch.rand(2, generator=g).tolist())\n")
    assert "unknown name 'nope'" in done.stderr
    assert done.stdout.strip() == str(want.tolist())


def test_generators_are_apart_from_the_default_one(tmp_path):
    torch = torch_or_skip()
    torch.manual_seed(5)
    torch.rand(3, generator=torch.Generator().manual_seed(9))
    want = torch.rand(2, dtype=torch.float32).tolist()
    done = ddx_run(tmp_path, "import torch\ntorch.manual_seed(5)\n"
                          "torch.rand(3, generator=torch.Generator().manual_seed(9))\n"
                          "print(torch.rand(2).tolist())\n"
                          "print(torch.Generator().initial_seed())\n"
                          "print(torch.manual_seed(0) is torch.default_generator)\n")
    assert done.stdout.split("\n")[:3] == [str(want), "67280421310721", "True"]


def test_errors(tmp_path):
    done = ddx_run(tmp_path, "import torch\nfrom torch.utils.data import TensorDataset, "
                          "DataLoader, random_split\n"
                          "torch.rand(2, generator=3)\n"
                          "ds = TensorDataset(torch.arange(5.))\n"
                          "random_split(ds, [2, 2])\n"
                          "DataLoader(ds, generator=1)\n"
                          "torch.Generator().clone_state()\n"
                          "torch.Generator(device='cuda')\n")
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: rand(): argument 'generator' must be torch.Generator, not int",
        "error: Sum of input lengths does not equal the length of the input dataset!",
        "error: DataLoader(generator=...) takes a torch.Generator",
        "error: Generator.clone_state() is not supported by ddx: use get_state()",
        "error: Generator(device='cuda'): ddx computes on the CPU only (device='cpu')"]
    assert "Traceback" not in done.stderr


# --- get_state / set_state: CPUGeneratorImplState's bytes ----------------------------------------
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), draws=st.lists(st.sampled_from(
    ["words", "normal1", "normal16", "randint"]), max_size=6), n=st.integers(1, 700))
def test_the_state_bytes_are_pytorchs_after_any_draws(seed, draws, n):
    torch = torch_or_skip()
    ours = Generator()
    ours.manual_seed(seed)
    theirs = torch.Generator().manual_seed(seed)
    assert ours.get_state().tobytes() == theirs.get_state().numpy().tobytes()
    for kind in draws:
        if kind == "words":
            ours.words(n)
            torch.randint(0, 10, (n,), generator=theirs)
        elif kind == "normal1":  # (one double draw keeps the second sample in the state)
            ours.normal(1, np.float64)
            torch.randn(1, generator=theirs, dtype=torch.float64)
        elif kind == "normal16":
            ours.normal(16, np.float32)
            torch.randn(16, generator=theirs, dtype=torch.float32)
        else:
            ours.randint(n, 0, 2**30)
            torch.randint(0, 2**30, (n,), generator=theirs)
        assert ours.get_state().tobytes() == theirs.get_state().numpy().tobytes()
    again = Generator()
    again.set_state(theirs.get_state().numpy())
    assert again.normal(5, np.float64).tolist() == \
        torch.randn(5, generator=theirs, dtype=torch.float64).tolist()


def test_set_state_refuses_what_pytorch_refuses():
    gen = Generator()
    gen.manual_seed(1)
    raw = gen.get_state()
    with pytest.raises(StateError, match="Expected a CPUGeneratorImplState of size 5056 but "
                                         "found the input RNG state size to be 12"):
        gen.set_state(raw[:12])
    bad = raw.copy()
    bad[8:12] = 0  # left 0
    with pytest.raises(StateError, match="^Invalid mt19937 state$"):
        gen.set_state(bad)
    bad = raw.copy()
    bad[8:12], bad[16] = (100, 0, 0, 0), 7  # left 100 and next 7: no draw gives that
    with pytest.raises(StateError, match="left 100 and next 7"):
        gen.set_state(bad)
    assert gen.get_state().tobytes() == raw.tobytes()  # (a refused state changes nothing)


def test_a_failing_statement_leaves_the_state_set_before_it(tmp_path):
    done = ddx_run(tmp_path, "import torch\ntorch.manual_seed(2)\ns = torch.get_rng_state()\n"
                          "torch.manual_seed(3)\n"
                          "x = [torch.set_rng_state(s), nope]\n"
                          "print(torch.initial_seed())\n")
    assert "unknown name 'nope'" in done.stderr
    assert done.stdout.strip() == "3"
