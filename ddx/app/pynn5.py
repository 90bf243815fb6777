"""torch.nn's Threshold, Hardshrink and Softshrink modules (their F.* rows are
ops/rows_shrink.py), printed as PyTorch prints them: ``Threshold(threshold=0, value=0.5)``,
``Hardshrink(0.5)``; and the loss modules KLDivLoss, MarginRankingLoss, HingeEmbeddingLoss,
SoftMarginLoss, PoissonNLLLoss, MultiLabelSoftMarginLoss (graph/calls_loss5.py)."""

from __future__ import annotations

from ..errors import DdxTypeError
from . import pynn_more
from .pymodules import EXTRA, Native
from .pynn_more import ACTIVATIONS, LOSSES, Loss

_MEAN = (("size_average", None), ("reduce", None), ("reduction", "mean"))


def _shown(v) -> str:
    from ..graph.tensor import Tensor

    return repr(v.value.item() if isinstance(v, Tensor) else v)


def register() -> None:
    ACTIVATIONS.update({
        "Threshold": ("threshold", (("threshold", None), ("value", None), ("inplace", False)),
                      lambda g: f"threshold={_shown(g['threshold'])}, value={_shown(g['value'])}"
                      + (", inplace=True" if g.get("inplace") else "")),
        "Hardshrink": ("hardshrink", (("lambd", 0.5),), lambda g: _shown(g["lambd"])),
        "Softshrink": ("softshrink", (("lambd", 0.5),), lambda g: _shown(g["lambd"])),
    })
    LOSSES.update({
        "KLDivLoss": ("kl_div", (*_MEAN, ("log_target", False))),
        "MarginRankingLoss": ("margin_ranking_loss", (("margin", 0.0), *_MEAN)),
        "HingeEmbeddingLoss": ("hinge_embedding_loss", (("margin", 1.0), *_MEAN)),
        "SoftMarginLoss": ("soft_margin_loss", _MEAN),
        "PoissonNLLLoss": ("poisson_nll_loss", (("log_input", True), ("full", False),
                                                ("size_average", None), ("eps", 1e-8),
                                                ("reduce", None), ("reduction", "mean"))),
        "MultiLabelSoftMarginLoss": ("multilabel_soft_margin_loss", (("weight", None), *_MEAN)),
    })
    pynn_more.register()
    nn = EXTRA["torch.nn"]
    two = nn["MarginRankingLoss"]
    nn["MarginRankingLoss"] = Native("MarginRankingLoss", lambda ev, node, args, kw: Loss3(
        two.fn(ev, node, args, kw)))


class Loss3(Loss):
    """A loss of three tensors (MarginRankingLoss: input1, input2, target)."""

    def __init__(self, made: Loss) -> None:
        super().__init__(made.kind, made.fn, made.kw)

    def forward(self, ev, node, args, kw):
        if kw or len(args) != 3:
            raise DdxTypeError(f"{self.kind}.forward() takes 4 positional arguments but "
                               f"{len(args) + 1} were given")
        return ev.functions[self.fn](ev, node, list(args), dict(self.kw))


register()
