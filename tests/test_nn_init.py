"""torch.nn.init in `ddx run`: PyTorch's values from the seeded generator, printed as Python
with PyTorch 2.13 prints them (each script runs both ways), and its error texts."""

from __future__ import annotations

from conftest import ddx_and_python, session_run, torch_or_skip

SCRIPT = """
import torch
import torch.nn as nn
from torch.nn import init
torch.manual_seed(0)
w = torch.empty(3, 5)
nn.init.xavier_uniform_(w)
print(w)
nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
print(w)
print(init.calculate_gain("tanh"), init.calculate_gain("leaky_relu", 0.2))
lin = nn.Linear(4, 2)
nn.init.zeros_(lin.bias)
nn.init.normal_(lin.weight, mean=0.0, std=0.02)
print(lin.weight, lin.bias)
nn.init.constant_(lin.bias, 0.5)
nn.init.uniform_(lin.weight, -0.1, 0.1)
print(lin.weight, lin.bias)
print(nn.init.normal_(torch.empty(20)))
print(nn.init.ones_(torch.empty(2, 2, dtype=torch.float64)))
m = torch.empty(2, 3, 4, 4)
nn.init.kaiming_uniform_(m, a=5 ** 0.5)
print(m.sum(), m.std())
nn.init.xavier_normal_(m, gain=2.0)
print(m[0, 0])
out = lin(torch.ones(3, 4)).sum()
out.backward()
print(lin.weight.grad)
"""


def test_init_functions_draw_and_print_as_pytorch(tmp_path):
    torch_or_skip()
    ours, theirs = ddx_and_python(SCRIPT, tmp_path)
    assert ours == theirs


def test_init_refusals_are_pytorchs():
    got = session_run("import torch\nimport torch.nn as nn\nnn.init.xavier_uniform_(torch.empty(3))\n"
                      "nn.init.kaiming_uniform_(torch.empty(2, 2), mode='fan')\n"
                      "nn.init.calculate_gain('swish')\n")
    assert got == ["error: Fan in and fan out can not be computed for tensor with fewer than 2 "
                   "dimensions",
                   "error: Mode fan not supported, please use one of fan_in, fan_out",
                   "error: Unsupported nonlinearity swish"]
