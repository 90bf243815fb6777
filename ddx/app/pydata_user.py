"""DataLoader over the user's own datasets: a ``class MyData(Dataset)`` (or any object) with
``__len__`` and ``__getitem__``, or a list, fetched item by item in the loader's order (the
same sampler as a TensorDataset's: sequential, or RandomSampler's permutation) and batched by
PyTorch's default_collate: tensors stacked, ints an int64 tensor, floats a float64 one, strings
a list, tuples and lists a list of their collated fields, dicts a dict of them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError
from ..graph.tensor import Tensor
from ..graph.values import weak
from ..lang.tree import Ast
from . import pydunder
from .pyvalues import Instance, UserClass, number_of
from .values import Str


# torch.utils.data.Dataset: a base class with nothing of its own (PyTorch's __getitem__ raises
# NotImplementedError; a subclass gives its own)
class _DatasetClass(UserClass):
    def __repr__(self) -> str:
        return "<class 'torch.utils.data.dataset.Dataset'>"


DATASET = _DatasetClass("Dataset", [], {})
MAX_NESTING = 32  # (a sample's fields within fields that collate walks)


class UserDataset:
    """A dataset the DataLoader reads through its __len__ and __getitem__; ``ev`` is the
    evaluator of the statement iterating the loader (the user's methods run there)."""

    def __init__(self, obj: Any, ev) -> None:
        self.obj, self.ev = obj, ev
        self.node = Ast("call", "DataLoader", (), (), 0, 0, 0)

    def py_len(self) -> int:
        if isinstance(self.obj, (list, tuple)):
            return len(self.obj)
        n = number_of(pydunder.length(self.ev, self.node, self.obj))
        if not isinstance(n, int) or isinstance(n, bool):
            raise DdxTypeError("'float' object cannot be interpreted as an integer")
        return n

    def item(self, i: int) -> Any:
        if isinstance(self.obj, (list, tuple)):
            return self.obj[i]
        return pydunder.getitem(self.ev, self.node, self.obj, weak(i))

    def take(self, order) -> Any:
        return collate([self.item(int(i)) for i in order])

    def rows(self, key: slice) -> Any:
        return self.take(range(*key.indices(self.py_len())))


def readable(obj: Any) -> bool:
    """Whether the DataLoader can read ``obj`` as a dataset of the user's."""
    if isinstance(obj, (list, tuple)):
        return True
    return isinstance(obj, Instance) and pydunder.method(obj, "__getitem__") is not None and \
        pydunder.method(obj, "__len__") is not None


def collate(batch: list, depth: int = 0) -> Any:
    """PyTorch's default_collate of one batch of samples."""
    if depth > MAX_NESTING:
        raise DdxRuntimeError(f"a sample nests more than {MAX_NESTING} fields deep")
    elem = batch[0]
    if isinstance(elem, Tensor) and not elem.weak:
        shapes = {t.value.shape for t in batch if isinstance(t, Tensor)}
        if len(shapes) != 1 or not all(isinstance(t, Tensor) for t in batch):
            raise DdxRuntimeError("stack expects each tensor to be equal size")
        return Tensor(np.stack([t.value for t in batch]))
    if isinstance(elem, str):
        return [Str(s) for s in batch]
    n = number_of(elem)
    if n is not None and not isinstance(elem, (list, tuple, dict)):
        values = [number_of(v) for v in batch]
        if isinstance(n, bool):
            return Tensor(np.array(values, dtype=np.bool_))
        if isinstance(n, int):
            return Tensor(np.array(values, dtype=np.int64))
        return Tensor(np.array(values, dtype=np.float64))
    if isinstance(elem, dict):
        return {k: collate([d[k] for d in batch], depth + 1) for k in elem}
    if isinstance(elem, (list, tuple)):
        if len({len(s) for s in batch}) != 1:
            raise DdxRuntimeError("each element in list of batch should be of equal size")
        return [collate(list(samples), depth + 1) for samples in zip(*batch)]
    return list(batch)  # (default_collate leaves other objects as they are, in a list)


__all__ = ["DATASET", "UserDataset", "collate", "readable"]
