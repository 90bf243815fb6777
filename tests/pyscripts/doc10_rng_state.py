# The generator's state as PyTorch's bytes: torch.get_rng_state / set_rng_state,
# Generator.get_state / set_state (checks and messages as torch 2.13's), torch.random and its
# fork_rng. The bytes are CPUGeneratorImplState's, so they are compared whole.
import torch

torch.manual_seed(3)
s = torch.get_rng_state()
print(s.shape, s.dtype, s[:24].tolist(), s[5016:].tolist())
print(s)
a = torch.rand(3)
torch.set_rng_state(s)
b = torch.rand(3)
print(torch.equal(a, b), a)

# a cached normal sample (randn of one draws two, keeps one) is part of the state
torch.randn(1, dtype=torch.float64)
s = torch.get_rng_state()
print(s[8:24].tolist(), s[5016:5048].tolist())
first = torch.randn(3, dtype=torch.float64)
torch.set_rng_state(s)
print(torch.equal(first, torch.randn(3, dtype=torch.float64)), first)

# 700 words: a twist of the 624-word array in between
torch.randint(0, 10, (700,))
print(torch.get_rng_state()[8:24].tolist(), torch.get_rng_state().sum())
state = torch.get_rng_state()
print(torch.randn(20))
torch.set_rng_state(state)
print(torch.randn(20))

g = torch.Generator().manual_seed(1)
st = g.get_state()
print(st[:16].tolist(), g.initial_seed())
x = torch.randn(2, generator=g)
print(g.set_state(st) is g)
print(torch.equal(x, torch.randn(2, generator=g)))
fresh = torch.Generator()
print(fresh.get_state()[:16].tolist())
fresh.set_state(torch.get_rng_state())
print(torch.equal(torch.rand(4, generator=fresh), torch.rand(4)))

for bad in (3, None, torch.zeros(5056), torch.zeros(5056, dtype=torch.uint8)[::2],
            torch.zeros(10, dtype=torch.uint8), torch.zeros(5056, dtype=torch.uint8)):
    for f in (torch.set_rng_state, g.set_state):
        try:
            f(bad)
        except (TypeError, RuntimeError) as e:
            print(type(e).__name__, e)
print(torch.rand(2))
try:
    torch.get_rng_state(1)
except TypeError as e:
    print("TypeError")

print(torch.random.initial_seed(), torch.random.manual_seed(5) is torch.default_generator)
print(torch.random.get_rng_state()[:8].tolist())
with torch.random.fork_rng():
    print(torch.rand(2))
print(torch.rand(2))
with torch.random.fork_rng(enabled=False):
    print(torch.rand(2))
print(torch.rand(2))
try:
    with torch.random.fork_rng(devices=[]):
        torch.rand(5)
        raise RuntimeError("inside")
except RuntimeError as e:
    print(e, torch.rand(1))
from torch.random import fork_rng, get_rng_state, set_rng_state
saved = get_rng_state()
torch.rand(7)
set_rng_state(saved)
print(torch.rand(1))
