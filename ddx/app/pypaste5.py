"""The names round 5 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the lr schedulers of pysched2.py."""

from __future__ import annotations

from . import (
    pysched2,  # noqa: F401  (registers ConstantLR, LinearLR, SequentialLR, ReduceLROnPlateau...)
)
