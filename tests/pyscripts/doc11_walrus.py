# The walrus: (name := value) in conditions, loops and comprehensions (bound around them).
print("a")
if (n := 3) > 2:
    print(n)
xs = [1, 5, 2, 8]
print([y for x in xs if (y := x * 2) > 4], y)
i = 0
while (i := i + 1) < 3:
    print("i", i)
import torch
if (t := torch.ones(2)).sum() > 1:
    print(t)
print((k := 7), k)
