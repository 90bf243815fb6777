"""torch.Generator objects, generator= of the random functions, DataLoader(generator=) and
random_split (issue 15): the printed numbers are PyTorch's (tests/pyscripts/doc9_generator.py,
run through both by tests/test_python_subset.py); here what a script cannot show there: a
failing statement leaves a generator's state as it was, and the errors."""

from __future__ import annotations

from conftest import ddx_run, torch_or_skip


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
                          "torch.Generator().get_state()\n"
                          "torch.Generator(device='cuda')\n")
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: rand(): argument 'generator' must be torch.Generator, not int",
        "error: Sum of input lengths does not equal the length of the input dataset!",
        "error: DataLoader(generator=...) takes a torch.Generator",
        "error: Generator.get_state() is not supported by ddx: use manual_seed()",
        "error: Generator(device='cuda'): ddx computes on the CPU only (device='cpu')"]
    assert "Traceback" not in done.stderr
