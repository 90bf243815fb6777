"""torch.nn and torch.optim in the REPL's Python against PyTorch: Linear's initialisation from
the seeded generator bit for bit, a user's nn.Module, and SGD/Adam updates bit for bit given
the same gradients."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import session_run, torch_or_skip

HEAD = "import torch\nimport torch.nn as nn\n"


def same_as_torch(source: str) -> list[str]:
    torch_or_skip()
    done = subprocess.run([sys.executable, "-c", HEAD + source], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ours = session_run(HEAD + source)
    assert ours == done.stdout.splitlines()
    return ours


@pytest.mark.parametrize("seed, n_in, n_out", [(0, 3, 2), (1, 1, 1), (42, 20, 7),
                                               (2**31 + 5, 64, 3)])
def test_linear_init_is_torchs_bit_for_bit(seed, n_in, n_out):
    lines = same_as_torch(f"""_ = torch.manual_seed({seed})
lin = nn.Linear({n_in}, {n_out})
print(lin.weight.tolist())
print(lin.bias.tolist())
print(nn.Linear({n_out}, {n_in}, bias=False).weight.tolist())
print(torch.rand(2).tolist())
""")
    assert len(lines) == 4


def test_a_users_module_registers_in_order():
    lines = same_as_torch("""class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Linear(2, 2)
        self.w = nn.Parameter(torch.ones(2))
        self.inner = nn.Sequential(nn.Linear(2, 1), nn.ReLU())
        self.not_a_param = torch.zeros(1)
    def forward(self, x):
        return self.inner(self.b(x) * self.w)
net = Net()
print([n for n, _ in net.named_parameters()])
print(list(net.state_dict().keys()))
print(net)
print(len(list(net.parameters())), net.training, net.eval().training, net.inner.training)
""")
    assert lines[0] == "['w', 'b.weight', 'b.bias', 'inner.0.weight', 'inner.0.bias']"


@pytest.mark.parametrize("opt", ["torch.optim.SGD([w], lr=0.1)",
                                 "torch.optim.SGD([w], lr=0.1, momentum=0.5, dampening=0.1)",
                                 "torch.optim.SGD([w], 0.01, 0.9, weight_decay=0.1, "
                                 "nesterov=True)",
                                 "torch.optim.Adam([w])",
                                 # (torch 2.13's float32 sqrt is MKL's vsSqrt, not correctly
                                 # rounded, and Adam's denominator inherits it: these need the
                                 # mkl extra, ddx/ops/vml.py)
                                 "torch.optim.Adam([w], lr=0.01, betas=(0.8, 0.95), "
                                 "weight_decay=0.1)",
                                 "torch.optim.Adam([w], lr=0.003, amsgrad=True, eps=1e-6)",
                                 ])
def test_optimizer_steps_are_torchs_bit_for_bit(opt):
    if "betas" in opt or "amsgrad" in opt:
        from test_vml import mkl_or_skip

        mkl_or_skip()
    same_as_torch(f"""_ = torch.manual_seed(7)
w = torch.randn(19, requires_grad=True)
opt = {opt}
for _ in range(4):
    opt.zero_grad()
    loss = (w * w * torch.randn(19)).sum()
    loss.backward()
    opt.step()
    print(w.tolist())
print(w.grad is None)
opt.zero_grad()
print(w.grad)
""")


def test_addcmul_rounds_as_atens_kernel():
    torch = torch_or_skip()
    import numpy as np

    from ddx.app.pyoptim import addcmul

    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    want = torch.from_numpy(a.copy()).addcmul_(torch.from_numpy(b), torch.from_numpy(c),
                                               value=1 - 0.99).numpy()
    assert np.array_equal(addcmul(a, b, c, 1 - 0.99), want)
    assert not np.array_equal(a + np.float32(1 - 0.99) * b * c, want)  # numpy's rounds twice
