import torch
from torch import autograd
x = torch.tensor([0.0, 1.0], requires_grad=True)
with autograd.detect_anomaly():
    y = torch.sqrt(x)
    try:
        (y * 0).sum().backward()
    except RuntimeError as e:
        print("caught", e)
print(torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(True)
print(torch.is_anomaly_enabled())
z = (x / x).sum()
try:
    z.backward()
except RuntimeError as e:
    print("caught", e)
torch.autograd.set_detect_anomaly(False)
z = (x / x).sum()
z.backward()
print(x.grad)
with torch.autograd.set_detect_anomaly(True, check_nan=False):
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    z = (x / x).sum()
    z.backward()
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
