# A comprehension has its own scope, as in Python: a lambda made in it keeps its variable
# (late binding: the last value), defaults bind early, outer names are read.
fs = [lambda: i for i in range(3)]
print([f() for f in fs])
gs = [lambda i=i: i for i in range(3)]
print([g() for g in gs])
def make():
    out = []
    for k in range(2):
        out.append(lambda: k)
    return out
print([h() for h in make()])
sq = {n: (lambda m=n: m * m)() for n in range(3)}
print(sq)
print([[j * i for j in range(i)] for i in range(3)])
total = 10
print([total + x for x in range(2)])
def outer():
    base = 5
    return [(lambda: base + z)() for z in range(2)]
print(outer())
