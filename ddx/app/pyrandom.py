"""The module torch.random: manual_seed, seed, initial_seed, get_rng_state and set_rng_state
(torch's own functions, ddx/graph/create_random*.py) and ``fork_rng(devices=None,
enabled=True, ...)``, a ``with`` block whose draws leave the default generator as it was
before the block (PyTorch saves the CPU generator's state at the start and sets it back at the
end, an error inside included)."""

from __future__ import annotations

from ..graph.args import bind
from ..graph.create_random import DEFAULT_GENERATOR, draw_generator
from ..graph.namespaces import TORCH
from .pymodules import MODULES, Native, PyModule

FORK_ARGS = ("devices", "enabled", "_caller", "_devices_kw", "device_type")


class ForkRng:
    """What fork_rng(...) gives: the context that puts the generator's state back."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.saved = enabled, None

    def __repr__(self) -> str:
        return "<contextlib._GeneratorContextManager object>"

    def py_enter(self, ev) -> None:
        if self.enabled:
            self.saved = DEFAULT_GENERATOR.rng._current()

    def py_exit(self, ev) -> None:
        if self.enabled:
            draw_generator(ev, DEFAULT_GENERATOR.rng).state = self.saved  # (undo log: kept)


def _fork_rng(ev, node, args: list, kw: dict) -> ForkRng:
    given = bind(node, args, kw, FORK_ARGS, 0)
    return ForkRng(bool(given.get("enabled", True)))


def _torch(name: str) -> Native:
    """torch.random.name: torch.name itself."""
    return Native(name, lambda ev, node, args, kw: ev.functions[name](ev, node, args, kw),
                  space="torch")


def register() -> None:
    names = ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state")
    module = PyModule("torch.random", {n: _torch(n) for n in names})
    module.members["fork_rng"] = Native("fork_rng", _fork_rng)
    module.members["default_generator"] = DEFAULT_GENERATOR
    MODULES["torch.random"] = module
    TORCH.children["random"] = module


register()

__all__ = ["ForkRng"]
