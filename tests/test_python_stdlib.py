"""Python's ``random`` module and implicit string concatenation in the REPL's Python (issue
15): a tutorial's script that draws a polynomial's order with ``random.randint`` and builds
its report from f-strings written next to each other runs as Python runs it."""

from __future__ import annotations

import random

from conftest import ddx_and_python, torch_or_skip

RANDOM = """
import random
random.seed(3)
print(random.random(), random.randint(4, 6), random.randrange(10), random.uniform(1, 2))
print(random.choice([1, 2, 3]), random.gauss(0, 1), random.sample(range(10), 3))
xs = [1, 2, 3, 4, 5]
random.shuffle(xs)
print(xs, random.choices(['a', 'b'], weights=[1, 3], k=4))
from random import randint
print([randint(0, 9) for _ in range(5)])
try:
    random.randint(5, 1)
except ValueError as e:
    print("ValueError", e)
try:
    random.choice([])
except IndexError as e:
    print("IndexError", e)
"""


def test_the_random_module_draws_what_pythons_draws(tmp_path):
    ours, theirs = ddx_and_python(RANDOM, tmp_path)
    assert len(ours) == 6 and ours == theirs
    random.seed(3)
    assert ours[0].split()[0] == repr(random.random())


DYNAMIC_NET = """
import random
import torch
import math
torch.manual_seed(0)
random.seed(0)


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + '
                f'{self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?')


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(600):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
"""


def test_the_control_flow_example_runs_as_pytorch_runs_it(tmp_path):
    """pytorch/tutorials' examples_nn/dynamic_net.py (its loop shortened, random.seed added,
    its long f-string in two): x ** 4 and x ** 5 in float32 are SLEEF's (ddx/ops/sleef_pow.py),
    random.randint is Python's."""
    torch_or_skip()
    ours, theirs = ddx_and_python(DYNAMIC_NET, tmp_path)
    assert len(ours) == 7 and ours == theirs


STRINGS = """
a = ('x = '
     f'{1 + 1}' ' and ' f"{2.5:.2f}")
print(a, 'b' f'{3}', f'{4}' 'c')
def report(v):
    return (f'value {v} '
            'done')
print(report(7))
"""


def test_strings_written_next_to_each_other_are_one_string(tmp_path):
    ours, theirs = ddx_and_python(STRINGS, tmp_path)
    assert ours == theirs == ["x = 2 and 2.50 b3 4c", "value 7 done"]


NUMBERS = """
import torch
x = torch.ones(2, 3)
print(torch.arange(x.numel()), torch.arange(x.dim()), torch.arange(0, x.numel(), 2))
print(torch.full((2,), x.sum().item()), torch.linspace(0, x.numel(), 3))
"""


def test_numbers_methods_give_are_numbers_to_creation_functions(tmp_path):
    """numel(), dim() and item() give Python numbers, which arange, full and linspace take
    (before: "argument 'end' must be Number, not int")."""
    torch_or_skip()
    ours, theirs = ddx_and_python(NUMBERS, tmp_path)
    assert len(ours) == 2 and ours == theirs
