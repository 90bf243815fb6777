"""The one cache of replay templates, for the library's traces and batch jobs alike."""

from __future__ import annotations

import numpy as np

_F64 = np.dtype(np.float64)


class TemplateCache(dict):
    """THE template cache (the library's traces and batch jobs alike): templates by key (the
    text, the binding names and shapes, the options), kept once a key comes back. A one-off
    trace keeps nothing: thousands of kept one-off graphs would only make the garbage
    collector's passes longer. (A dict itself, so a look-up costs what a dict's does.)"""

    def __init__(self, size: int = 4096, seen: int = 65536) -> None:
        super().__init__()
        self.size = size
        self.limit = seen
        self.seen: set = set()

    def keep(self, key, make) -> None:
        """Keep ``make`` (a template, or a function that makes one or None) under ``key`` if
        the key was met before; else remember the key."""
        if key in self:
            return
        if key in self.seen:
            if len(self) >= self.size:
                dict.clear(self)
            # (None is kept too: "this key makes no template", so it is not tried again)
            self[key] = make() if callable(make) else make
        else:
            if len(self.seen) >= self.limit:
                self.seen.clear()
            self.seen.add(key)

    def keep_trace(self, key, trace, names: tuple) -> None:
        """keep() the template of a finished trace with these binding names: made, and the
        replay's modules imported, only when the key comes back (a one-liner needs neither)."""
        def make():
            from .template import Template

            return Template.from_trace(trace, list(names))
        self.keep(key, make)

    def clear(self) -> None:
        dict.clear(self)
        self.seen.clear()


TEMPLATES = TemplateCache()


def replay_plain(source: str, bindings: dict) -> tuple | None:
    """(key, template, values) when a trace with no options and these bindings (Python
    floats and ints, numpy float64 scalars or arrays: nothing to check) has a kept template,
    replayed forward; else None, and the trace takes the ordinary road (which makes the same
    key for them: ddx/app/api.py). The fixed cost of a repeated call."""
    shapes = []
    for v in bindings.values():
        kind = type(v)
        if kind is float or kind is int or kind is np.float64:
            shapes.append(())
        elif kind is np.ndarray and v.dtype is _F64:
            shapes.append(v.shape)
        else:
            return None
    key = (source, tuple(bindings), tuple(shapes), "<f8", None, None)
    template = TEMPLATES.get(key)
    if template is None:
        return None
    try:  # the values binding_array makes of them
        if template.scalar:
            arrays = [np.float64(v) for v in bindings.values()]
        else:
            arrays = [v if type(v) is np.ndarray else np.asarray(v, _F64)
                      for v in bindings.values()]
    except OverflowError:  # (an int too large for a float: the ordinary road's message)
        return None
    plan = template.plan
    if template.scalar and type(plan) is not int:  # its Plan, on the numbers as they are
        values = list(template.values0)
        values[:len(arrays)] = arrays  # (a template's bindings are its first nodes)
        values = plan.forward(values)
    else:
        values = template.forward(arrays, reuse=True)
    return None if values is None else (key, template, values)
