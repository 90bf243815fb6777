# Python's & | ~ on masks, ints and bools (torch.bitwise_and/or/not underneath; ^ stays power, SPEC §5)
# and Python's sets: set(), displays, methods and operators, against Python with PyTorch.
import torch
x = torch.arange(6)
m = (x > 1) & (x < 5)
print(m, ~m, x[~m], x[m | (x == 0)])
print(torch.tensor([12, 10]) & 6, torch.tensor([12, 10]) | torch.tensor([1, 1]), ~torch.tensor([0, 5]))
print(True & False, True | False, 6 & 3, 6 | 3, ~5, ~True, 1 | True)
y = torch.randn(4, requires_grad=True)
mask = (y > 0) | (y < -1)
print(mask.dtype, mask.requires_grad)
m &= x > 2
print(m)
k = torch.tensor([3, 5])
k |= 8
print(k)
try:
    print(torch.ones(2) & torch.ones(2))
except RuntimeError as e:
    print(e)
try:
    print(1.5 & 1)
except TypeError as e:
    print(e)
try:
    print(~1.5)
except TypeError as e:
    print(e)
t = {3, 1, 2}
print(sorted(t | {5}), sorted(t & {1, 9}), sorted(t - {1}), t == {1, 2, 3}, {1} <= t)
s = set([1, 2])
s |= {7}
print(s)
print(x[(x % 2 == 0) & ~(x == 4)])
s = {"a", "b"}
print("a" in s, "z" in s, len(s), sorted(s))
t = {3, 1, 2}
print(t, 2 in t, 2.0 in t, sorted(t | {5}), sorted(t & {1, 9}), sorted(t - {1}), sorted(t ^ {1, 7}))
t.add(9)
t.discard(3)
t.remove(1)
print(t, t == {2, 9}, {2} <= t, {2} < t)
u = set([1, 2, 2, 3])
print(u, set(), set("ab") == {"a", "b"}, type(u).__name__)
u.update([4, 5])
print(u.union({6}), u.intersection([1, 2]), u.difference({1}), u.issubset({1,2,3,4,5,6}), u.isdisjoint({8}))
v = u.copy(); v.clear(); print(v, u)
print(frozenset([1,2]) if False else 0)
try:
    u.remove(42)
except KeyError as e:
    print("KeyError", e)
for x in sorted({"b", "c", "a"}):
    print(x, end=" ")
print()
print({x % 3 for x in range(10)})
w = set(range(5)); print(w.pop(), w)
a = torch.tensor(0.5)
print((a > 0) & (a < 1), torch.bitwise_and(a > 0, a < 1))
b = torch.tensor(1.0, dtype=torch.float64)
try:
    ~b
except TypeError as e:
    print(e)
try:
    torch.bitwise_not(b)
except RuntimeError as e:
    print(e)
print(torch.logical_and(b > 0, b < 2), torch.logical_not(b), torch.bitwise_not(torch.tensor(3)))
s = {1, 2, 3}
alias = s
s |= {4, 5}
s &= {1, 2, 4, 5, 9}
s -= {2}
print(sorted(s), alias is s, sorted(alias))
