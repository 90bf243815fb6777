import torch
class Counter:
    step = 10
    def __init__(self, start=0):
        self.n = start
    def bump(self, k=1):
        self.n += k * self.step
        return self
c = Counter(5)
c = c.bump().bump(2)
print(c.n, Counter.step, isinstance(c, Counter))
class Sub(Counter):
    def bump(self, k=1):
        super().bump(k)
        self.n -= 1
        return self
s = Sub()
print(s.bump().n)
def outer():
    total = 0
    def inner(v):
        return v * 2
    for i in range(3):
        total += inner(i)
    return total
print(outer())
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
dy, = (None,)
print(dy)
vals = (1, 2, 3)
print(*vals, sep=", ")
print("a", end="")
print("b")
data = {"w": torch.tensor([1.0, 2.0])}
for k, v in data.items():
    print(k, v.sum().item())
print([p * 2 for p in [1.5, 2.5]])
i = 0
while i < 3:
    i = i + 1
print(i, type(i), 3 / 2, 2 ** 0.5)
