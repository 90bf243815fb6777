# super() in the MRO (a user base class's __init__ runs: its layers and attributes are there),
# Base.__init__(self, ...), multiple inheritance (C3), @staticmethod / @classmethod / @property
# bound as Python binds them, self.__class__.__name__ and type(m).__name__ of nn modules.
import torch
import torch.nn as nn
torch.manual_seed(0)

class C(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.l = nn.Linear(n, 1)
    def forward(self, x):
        return self.l(x)

class D(C):
    def __init__(self):
        super().__init__(3)
        self.extra = nn.ReLU()
    def forward(self, x):
        return self.extra(super().forward(x))

d = D()
print(d)
print(d(torch.ones(2, 3)))
print([n for n, _ in d.named_parameters()])

class E(C):
    pass
e = E(2)
print(e)

class Base:
    def __init__(self, a):
        self.a = a
    def f(self):
        return self.a + 1
class Kid(Base):
    def __init__(self):
        super().__init__(5)
        self.b = 2
k = Kid()
print(k.a, k.b, k.f())

class A:
    def who(self):
        return "A"
class B(A):
    def who(self):
        return "B" + super().who()
class C2(A):
    def who(self):
        return "C" + super().who()
class DD(B, C2):
    def who(self):
        return "D" + super().who()
print(DD().who())

class S:
    count = 0
    @staticmethod
    def f(a=1):
        return a * 2
    @classmethod
    def c(cls, k):
        cls.count += k
        return cls.count
    @property
    def p(self):
        return 42
s = S()
print(S.f(3), s.f(), s.f(5), S.c(4), s.c(1), S.count, s.p)

class Sub(S):
    pass
print(Sub.c(10), Sub.count, S.count)

class Base2:
    def __init__(self, a):
        self.a = a
class Kid2(Base2):
    def __init__(self):
        Base2.__init__(self, 7)
print(Kid2().a, Kid2().__class__.__name__, type(nn.Conv2d(1, 1, 1)).__name__)
m = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
print([type(x).__name__ for x in m.modules()])
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(2, 2)
print(Net(), Net().__class__.__name__)
try:
    class X(A, B):
        pass
except TypeError as e:
    print(e)
