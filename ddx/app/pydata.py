"""torch.utils.data's TensorDataset and DataLoader, the part tutorials use: a dataset of
tensors indexed along their first dimension, and batches of it in order (PyTorch's default
collate: a list of the tensors' stacked samples, the same values as a slice), each iterator
drawing its seed from torch's generator as PyTorch's does. A shuffled DataLoader takes
PyTorch's order: its RandomSampler draws a seed from torch's generator when the first batch is
asked for, seeds a generator of its own with it and takes torch.randperm(n) of that one."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..graph.tensor import Tensor
from ..ops.rng import GENERATOR, Generator
from .pyerrors import PyException
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pyvalues import number_of


def _int(value: Any, what: str) -> int:
    n = number_of(value)
    if isinstance(n, bool) or not isinstance(n, int):
        raise DdxTypeError(f"{what} should be an integer")
    return n


class TensorDataset:
    def __init__(self, tensors: tuple) -> None:
        if not tensors or not all(isinstance(t, Tensor) and not t.weak for t in tensors):
            raise DdxTypeError("TensorDataset takes tensors")
        sizes = {t.value.shape[0] if t.value.ndim else None for t in tensors}
        if len(sizes) != 1 or None in sizes:
            raise PyException.error("AssertionError", "Size mismatch between tensors")
        self.tensors = tuple(tensors)

    def __repr__(self) -> str:
        return "<torch.utils.data.dataset.TensorDataset object>"

    def py_len(self) -> int:
        return int(self.tensors[0].value.shape[0])

    def rows(self, key: Any) -> tuple:
        """dataset[i] or dataset[a:b]: each tensor's rows (data: no graph is recorded)."""
        if isinstance(key, slice):
            key = slice(*(None if v is None else _int(v, "slice indices")
                          for v in (key.start, key.stop, key.step)))
        else:
            key = _int(key, "index")
            if not -self.py_len() <= key < self.py_len():
                raise DdxRuntimeError(f"index {key} is out of bounds for dimension 0 with size "
                                      f"{self.py_len()}")
        return tuple(Tensor(np.array(t.value[key])) for t in self.tensors)

    def take(self, order: np.ndarray) -> list:
        """The samples at these indexes, stacked (default_collate of dataset[i] for each)."""
        return [Tensor(t.value[order]) for t in self.tensors]

    def py_getitem(self, key: Any) -> tuple:
        return self.rows(key)

    def py_attr(self, ev, node, name: str) -> Any:
        if name == "tensors":
            return self.tensors
        raise DdxTypeError(f"'TensorDataset' object has no attribute '{name}'")


class DataLoader:
    def __init__(self, dataset: TensorDataset, batch_size: int, drop_last: bool,
                 shuffle: bool) -> None:
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.shuffle = shuffle

    def __repr__(self) -> str:
        return "<torch.utils.data.dataloader.DataLoader object>"

    def py_len(self) -> int:
        n, b = self.dataset.py_len(), self.batch_size
        return n // b if self.drop_last else -(-n // b)

    def py_iter(self):
        # (each iterator PyTorch makes draws its base seed, torch.empty((), dtype=torch.int64)
        # .random_(), from the default generator, even with no workers: so does ddx's)
        GENERATOR.words64(1)
        return LoaderIter(self._batches())

    def _batches(self):
        b, n = self.batch_size, self.dataset.py_len()
        if not self.shuffle:
            for i in range(self.py_len()):
                yield list(self.dataset.rows(slice(i * b, (i + 1) * b)))
            return
        # RandomSampler.__iter__, run at the first batch: seed = int(torch.empty((),
        # dtype=torch.int64).random_().item()) (a 64-bit word modulo 2**63), a generator
        # seeded with it, and torch.randperm(n, generator=that)
        sampler = Generator()
        sampler.manual_seed(int(GENERATOR.words64(1)[0]) % (1 << 63))
        order = sampler.permutation(n)
        for i in range(self.py_len()):
            yield self.dataset.take(order[i * b:(i + 1) * b])

    def py_attr(self, ev, node, name: str) -> Any:
        if name in ("dataset", "batch_size", "drop_last"):
            return getattr(self, name)
        raise DdxTypeError(f"'DataLoader' object has no attribute '{name}'")


class LoaderIter:
    """iter(loader): batches made as they are asked for (a shuffled loader's order is drawn
    at the first), under PyTorch's name."""

    py_type_name = "_SingleProcessDataLoaderIter"
    py_iterator = True  # (next() and iter() take it as it is: not a list of what it holds)

    def __init__(self, batches) -> None:
        self._batches = batches

    def __iter__(self):
        return self

    def __next__(self) -> list:
        return next(self._batches)

    def __repr__(self) -> str:
        return "<torch.utils.data.dataloader._SingleProcessDataLoaderIter object>"


def _tensor_dataset(ev, node, args: list, kw: dict) -> TensorDataset:
    if kw:
        raise DdxTypeError("TensorDataset.__init__() got an unexpected keyword argument "
                           f"'{next(iter(kw))}'")
    return TensorDataset(tuple(args))


# DataLoader's parameters in order; the ones that change no batch a CPU process makes
# (workers give the same batches) are taken and left; the others only at their defaults
_PARAMS = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
           "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
           "multiprocessing_context", "generator")
_NO_EFFECT = {"num_workers", "pin_memory", "timeout", "prefetch_factor", "persistent_workers",
              "pin_memory_device", "in_order", "multiprocessing_context", "worker_init_fn"}
_USED = {"dataset", "batch_size", "shuffle", "drop_last"}


def _data_loader(ev, node, args: list, kw: dict) -> DataLoader:
    if len(args) > len(_PARAMS):
        raise DdxTypeError(f"DataLoader.__init__() takes from 2 to {len(_PARAMS) + 1} "
                           f"positional arguments but {len(args) + 1} were given")
    given = dict(zip(_PARAMS, args))
    given.update({k: v for k, (v, _) in kw.items()})
    for name, value in given.items():
        if name not in _USED and name not in _NO_EFFECT and value is not None:
            if name in _PARAMS:
                raise DdxRuntimeError(f"DataLoader({name}=...) is not supported by ddx: it "
                                      "takes dataset, batch_size, shuffle and drop_last")
            raise DdxTypeError("DataLoader.__init__() got an unexpected keyword argument "
                               f"'{name}'")
    dataset = given.get("dataset")
    if not isinstance(dataset, TensorDataset):
        raise DdxTypeError("ddx's DataLoader takes a TensorDataset")
    size = _int(given.get("batch_size", 1), "batch_size")
    if size <= 0:
        raise DdxValueError("batch_size should be a positive integer value, but got "
                            f"batch_size={size}")
    return DataLoader(dataset, size, bool(given.get("drop_last", False)),
                      bool(given.get("shuffle", False)))


def register() -> None:
    data = PyModule("torch.utils.data", {
        "TensorDataset": Native("TensorDataset", _tensor_dataset),
        "DataLoader": Native("DataLoader", _data_loader)})
    utils = PyModule("torch.utils", {"data": data})
    EXTRA["torch"]["utils"] = utils
    MODULES["torch.utils"] = utils
    MODULES["torch.utils.data"] = data


register()

__all__ = ["DataLoader", "TensorDataset"]
