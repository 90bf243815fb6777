"""The names round 5 of pasting PyTorch's documentation added (issue 15), registered by
importing their modules: the lr schedulers of pysched2.py, the nn modules of pynn5.py, the
containers of pycontainers.py, nn.Module's buffers and state of pybuffers.py; then torch.nn's
classes made class values (pynnclass.py)."""

from __future__ import annotations

from . import (
    pybuffers,  # noqa: F401  (registers register_buffer, buffers, state_dict, apply, ...)
    pycontainers,  # noqa: F401  (registers nn.ModuleList, nn.ModuleDict, ..., collections)
    pyinit2,  # noqa: F401  (registers nn.init.eye_, dirac_, orthogonal_, sparse_, trunc_normal_)
    pynn5,  # noqa: F401  (registers nn.Threshold, nn.Hardshrink, nn.Softshrink)
    pynnclass,
    pysched2,  # noqa: F401  (registers ConstantLR, LinearLR, SequentialLR, ReduceLROnPlateau...)
)

pynnclass.wrap_all()
