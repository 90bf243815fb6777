"""Callers for the op table's reduce rows (see ddx/graph/args.py for what a caller is).

Tables read by ddx/graph/functions.py: KINDS (a new Op.call kind -> factory(row name) ->
caller), CALLERS (row name -> its own caller), NAMED (a function that is not one row ->
caller) and NAMED_SPACES (such a function's namespaces: "torch", "Tensor", "F", "linalg")."""

from __future__ import annotations

KINDS: dict = {}
CALLERS: dict = {}
NAMED: dict = {}
NAMED_SPACES: dict = {}
