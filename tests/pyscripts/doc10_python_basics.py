# Python basics: del of list items and slices and dict keys, dict.update(k=v)/clear/popitem,
# tuple.count/index, print(*str), next(it, default), != through a user's __eq__.
l = [1, 2, 3, 4]
del l[0]
print(l)
del l[1:]
print(l)
d = {"a": 1, "k": 2}
del d["k"]
print(d)
d.update(e=5)
d.update({"f": 6}, g=7)
print(d, d.popitem(), d)
d.clear()
print(d)
t = (1, 2, 2, 3)
print(t.count(2), t.index(3))
print(*"ab")
print(*[1, 2], sep="-")
it = iter([1])
print(next(it), next(it, "done"))
class V:
    def __init__(self, x):
        self.x = x
    def __eq__(self, o):
        return self.x == o.x
print(V(1) != V(1), V(1) == V(1), V(1) != V(2))
print([x for x in range(3)] + [9], "%s-%s" % ("a", "b"))
