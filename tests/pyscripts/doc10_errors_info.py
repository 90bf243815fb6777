# Errors a try catches as PyTorch raises them (an int tensor to a negative power, indexes that do
# not broadcast, an int // 0, bool - bool and -bool), torch.is_tensor, ndimension(),
# torch.finfo / torch.iinfo (their fields and reprs).
import torch
for f in (lambda: torch.tensor([2]) ** -1, lambda: torch.arange(12).reshape(3, 4)[torch.tensor([0, 2]), torch.tensor([1, 3, 0])],
          lambda: torch.tensor([3]) // torch.tensor([0]), lambda: torch.tensor([True]) - torch.tensor([True]), lambda: -torch.tensor([True]),
          ):
    try:
        print(f())
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        print(type(e).__name__, e)
print(torch.is_tensor(torch.ones(1)), torch.is_tensor(3), torch.ones(2, 3).ndimension())
print(torch.finfo(torch.float32).eps, torch.finfo(torch.float64).max, torch.finfo().tiny, torch.iinfo(torch.int64).max, torch.iinfo(torch.int32).min)
print(torch.finfo(torch.float32))
print(torch.finfo(torch.float32).bits, torch.finfo(torch.float32).resolution, torch.finfo(torch.float32).smallest_normal, torch.iinfo(torch.uint8).bits)
print(torch.iinfo(torch.int32), torch.iinfo(torch.int64), torch.finfo(torch.float64), torch.finfo(torch.float32).dtype)
for f in (lambda: torch.finfo(torch.int64), lambda: torch.iinfo(torch.float32)):
    try:
        f()
    except TypeError as e:
        print(e)
try:
    try:
        torch.ones(2) @ torch.ones(3)
    except RuntimeError:
        print("again")
        raise
except RuntimeError as e:
    print("outer", e)
