# Seeding boilerplate and the old broadcasting notes: torch.use_deterministic_algorithms, the
# torch.backends flags (cudnn.deterministic = True, ...), legacy constructors of a shape
# (torch.FloatTensor(5, 3, 4, 1): PyTorch's memory is uninitialised, so only its shape is printed).
import torch
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False, warn_only=True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark, torch.backends.cudnn.enabled)
print(torch.backends.cudnn.is_available(), torch.backends.mps.is_available())
x = torch.FloatTensor(5, 3, 4, 1)
print(x.size(), x.dtype, torch.LongTensor(2).shape, torch.DoubleTensor(2, 2).dtype)
print(torch.FloatTensor([1, 2]), torch.Tensor(2, 3).shape)
def set_seed(seed):
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
set_seed(1)
print(torch.randn(2), torch.backends.cuda.matmul.allow_tf32)
print(torch.FloatTensor(torch.Size([2, 1])).shape, torch.FloatTensor().shape, torch.LongTensor(3).dtype)
