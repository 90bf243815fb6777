"""Output: Rich renderers, pictures, emitted torch/JAX scripts, PyTorch's reprs and safe output
files.
"""
