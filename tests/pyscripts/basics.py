import torch
import math
x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
def f(a, b=2.0, *rest, scale=1.0, **extra):
    """A docstring is an expression statement."""
    return (a * b).sum() * scale + len(rest) + len(extra)
y = f(x)
y.backward()
print("y =", y.item(), "grad:", x.grad)
print(f(x, 3.0, 1, 2, scale=0.5, tag=1).item())
total = 0
for i, v in enumerate([10, 20, 30]):
    if i == 1:
        continue
    total += i * v
print(total, 7 // 2, 7 % 3, -7 // 2, 2 ** 10, 1 / 4)
n = 0
while True:
    n += 3
    if n > 10:
        break
else:
    print("never")
print(f"n={n} pi={math.pi:.3f} {'quoted'!r} {n:>5}|{x.grad[0].item():.2f}")
print("{} and {:.1f} and {name}".format(1, 2.25, name="kw"))
squares = [k * k for k in range(6) if k % 2 == 0]
pairs = {"a": 1, "b": 2}
print(squares, pairs, list(zip([1, 2], ["a", "b"])), sorted([3, 1, 2], reverse=True))
g = lambda t, p=2: t ** p
print(g(3), g(2, p=3), max(3, 7), min([4, 2, 8]), sum([1, 2, 3]), abs(-2.5), round(2.567, 2))
print(x is None, x is not None and total > 0, not total, 2 in [1, 2], "b" in "abc")
items = []
items.append(1)
items.extend([2, 3])
items += [4]
print(items, len(items), items[1:3], items[-1], items.pop(), items)
a, (b, c) = 1, (2, 3)
print(a + b + c, "yes" if a < b else "no")
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except RuntimeError as e:
    print("caught RuntimeError")
finally:
    print("finally ran")
try:
    raise ValueError("bad value")
except (TypeError, ValueError) as e:
    print("caught:", e)
with torch.no_grad():
    z = x * 2
print(z.requires_grad, torch.is_grad_enabled())
@torch.no_grad()
def doubled(t):
    return t * 2
print(doubled(x).requires_grad)
with torch.enable_grad():
    print((x * 2).requires_grad)
def fact(k):
    return 1 if k <= 1 else k * fact(k - 1)
print(fact(10))
s = "a,b,c".split(",")
print(s, "-".join(s), "abc".upper(), str(3) + "!", float("2.5") * 2, int(3.9), bool([]))
print(sum(i * i for i in range(4)), {k: k * 2 for k in range(3) if k}, max(len(w) for w in ["a", "bcd"]))
