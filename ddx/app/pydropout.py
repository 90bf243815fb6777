"""nn.Dropout(p=0.5, inplace=False): F.dropout with the module's ``training`` flag (model.eval()
turns it off: the input itself comes back), printed as PyTorch prints it."""

from __future__ import annotations

from ..errors import DdxRuntimeError
from .pymodules import EXTRA, Native
from .pynn import Builtin
from .pyvalues import number_of


class Dropout(Builtin):
    kind = "Dropout"

    def __init__(self, p: float, inplace: bool) -> None:
        super().__init__()
        self.p, self.inplace = p, inplace

    def extra(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def attr_p(self):  # (read by py_attr as m.p)
        return self.p

    def forward(self, ev, node, args, kw):
        (x,) = args
        return ev.functions["dropout"](ev, node, [x], {
            "p": (self.p, node.pos), "training": (self.state["training"], node.pos)})


def _dropout(ev, node, args, kw):
    given = dict(zip(("p", "inplace"), args))
    given.update({k: v[0] for k, v in kw.items()})
    p = number_of(given.get("p", 0.5))
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
        raise DdxRuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return Dropout(float(p), bool(given.get("inplace", False)))


def register() -> None:
    EXTRA["torch.nn"]["Dropout"] = Native("Dropout", _dropout)


register()

__all__ = ["Dropout"]
