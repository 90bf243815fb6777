"""ddx: parse an expression, build PyTorch's autograd graph on numpy, and show every gradient."""

__version__ = "0.1.0"
__all__ = ["trace", "Trace", "plot", "derivative", "DdxError", "__version__"]


def __dir__():
    # the public names (loaded on first use) are visible to dir() and to completion
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):
    # Deferred so that `import ddx` (and the CLI's start-up) pays for numpy/Lark only when used.
    if name in ("trace", "Trace"):
        from .app import api

        value = globals()[name] = getattr(api, name)  # later lookups skip this function
        return value
    if name == "plot":
        from .app.plot import plot

        return plot
    if name == "derivative":
        from .app.derivative import derivative

        return derivative
    if name == "DdxError":
        from .errors import DdxError

        return DdxError
    raise AttributeError(f"module 'ddx' has no attribute {name!r}")
