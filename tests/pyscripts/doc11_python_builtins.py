# Python basics: dict.fromkeys, {**d} in a dict display, chr/ord/bin/hex, and the truth of a
# user's object through __bool__ / __len__ (if, not, conditional expressions, bool()).
d = dict.fromkeys(["a", "b"], 0)
print(d, dict.fromkeys("xy"))
print(list(zip(*[(1, 2), (3, 4)])), sorted({3: 1, 1: 2}.items()), divmod(7, 2), pow(2, 10), [*range(3)])
print({**{"a": 1}, "b": 2})
x = [3, 1, 2]
x.sort(reverse=True)
print(x, "-".join(map(str, x)), any(v > 2 for v in x), all([]), round(2.675, 2), f"{3.14159:.2f}", "%5.1f" % 2.25)
print(isinstance(3, (int, float)), hasattr(x, "sort"), getattr(x, "nope", 5), chr(65), ord("A"), bin(5), hex(255), abs(-2.5), min([4, 2]), sum([1, 2], 10))
class Box:
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __bool__(self):
        return self.n > 1
print(bool(Box(1)), len(Box(3)), "yes" if Box(2) else "no", not Box(0))
if Box(0):
    print("truthy")
else:
    print("falsy")
