# PyTorch's messages for convolution and pooling arguments it refuses (not nn.Conv2d's for
# a padding string it does not know: it prints a Python set, in an order that varies by run).
import torch
import torch.nn as nn
import torch.nn.functional as F

r = torch.randn
cases = [
    lambda: F.conv2d(r(1, 3, 4, 4), r(3, 2, 3, 3)),
    lambda: F.conv2d(r(1, 2, 2, 2), r(3, 2, 3, 3)),
    lambda: F.conv2d(r(2, 2), r(3, 2, 3, 3)),
    lambda: F.conv2d(r(2, 2, 2, 2, 2), r(3, 2, 3, 3)),
    lambda: F.conv1d(r(5), r(1, 1, 1)),
    lambda: F.conv2d(r(1, 2, 5, 5), r(3, 2, 3, 3), padding='same', stride=2),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 2, 1, 1), groups=3),
    lambda: F.conv2d(r(1, 4, 5, 5), r(3, 2, 1, 1), groups=2),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 2, 1, 1), stride=0),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), padding=-1),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), bias=r(3)),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), padding='foo'),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), stride=(1, 2, 3)),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), padding=(1, 2, 3)),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), dilation=0),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), groups=0),
    lambda: F.conv2d(r(1, 4, 5, 5, dtype=torch.float64), r(2, 4, 1, 1)),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1, dtype=torch.float64)),
    lambda: F.conv2d(r(1, 4, 5, 5), r(2, 4, 1, 1), r(2, dtype=torch.float64)),
    lambda: F.max_pool2d(r(5, 5), 2),
    lambda: F.max_pool3d(r(5, 5), 2),
    lambda: F.max_pool1d(r(2, 3, 4, 5), 2),
    lambda: F.avg_pool1d(r(5), 2),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 0),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 2, stride=0),
    lambda: F.max_pool2d(r(1, 4, 5, 5), (2, 2, 2)),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 2, (1, 2, 3)),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 2, 1, (1, 2, 3)),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 4, padding=3),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 6),
    lambda: F.max_pool2d(r(1, 4, 5, 5), 2, dilation=0),
    lambda: F.avg_pool2d(r(1, 4, 5, 5), (1, 2, 3)),
    lambda: F.avg_pool2d(r(1, 4, 5, 5), 2, padding=2),
    lambda: F.avg_pool2d(r(1, 4, 5, 5), 2, divisor_override=0),
    lambda: nn.Conv2d(3, 4, 3, groups=2),
    lambda: nn.Conv2d(2, 4, 3, padding='same', stride=2),
    lambda: nn.Conv2d(2, 3, 3, groups=2),
    lambda: nn.Conv2d(2, 4, 3)(r(1, 3, 5, 5)),
]
for case in cases:
    try:
        print(case())
    except (RuntimeError, ValueError, IndexError) as e:
        print(type(e).__name__, e)
