"""The names round 6 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the lr schedulers of pysched3.py; then torch.nn's new classes made
class values (pynnclass.py)."""

from __future__ import annotations

from . import (
    pynnclass,
    pypaste5,  # noqa: F401  (round 5's names first: wrap_all below sees them all)
    pysched3,  # noqa: F401  (registers CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts)
)

pynnclass.wrap_all()
