"""The names round 5 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the lr schedulers of pysched2.py, the nn modules of pynn5.py."""

from __future__ import annotations

from . import (
    pynn5,  # noqa: F401  (registers nn.Threshold, nn.Hardshrink, nn.Softshrink)
    pysched2,  # noqa: F401  (registers ConstantLR, LinearLR, SequentialLR, ReduceLROnPlateau...)
)
