# Python's == between a range, a tuple and a list (round 3's left-over: range(3) == (0, 1, 2))
import torch
print(range(3) == (0, 1, 2), [0, 1, 2] == (0, 1, 2), range(3) == [0, 1, 2], range(3) == range(3),
      range(0) == range(2, 2), [1] == [1], (1, 2) == (1, 2), (1, 2) != [1, 2],
      range(3) != (0, 1, 2), range(1, 3) == range(1, 3, 1))
a = [0, 1, 2]
print(a == (0, 1, 2), [0, 1] == (0, 1), (0, 1) == [0, 1], a == list(range(3)), tuple(a) == (0, 1, 2))
x = torch.ones(2, 3)
print(x.shape == (2, 3), x.shape == [2, 3], x.size() == torch.Size([2, 3]), x.tolist() == [[1.0] * 3] * 2)
