"""torch.utils.data's TensorDataset and DataLoader, the part tutorials use: a dataset of
tensors indexed along their first dimension, and batches of it in order (PyTorch's default
collate: a list of the tensors' stacked samples, the same values as a slice), each iterator
drawing its seed from torch's generator as PyTorch's does. A shuffled DataLoader takes
PyTorch's order: its RandomSampler draws a seed from torch's generator when the first batch is
asked for, seeds a generator of its own with it and takes torch.randperm(n) of that one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DdxRuntimeError, DdxTypeError, DdxValueError
from ..graph.create_random import DEFAULT_GENERATOR, DEFAULT_SEED, GeneratorHandle
from ..graph.tensor import Tensor
from ..ops.rng import Generator
from . import pydata_user
from .pyerrors import PyException
from .pymodules import EXTRA, MODULES, Native, PyModule
from .pyvalues import number_of
from .values import Device


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


class Subset:
    """random_split's parts: a dataset seen through a list of its indexes."""

    def __init__(self, dataset, indices: list) -> None:
        self.dataset, self.indices = dataset, indices

    def __repr__(self) -> str:
        return "<torch.utils.data.dataset.Subset object>"

    def py_len(self) -> int:
        return len(self.indices)

    def rows(self, key: Any) -> tuple:
        if isinstance(key, slice):
            return tuple(self.take(np.arange(self.py_len())[key]))
        key = _int(key, "index")
        if not -self.py_len() <= key < self.py_len():
            raise PyException.error("IndexError", "list index out of range")
        return self.dataset.rows(self.indices[key])

    def take(self, order: np.ndarray) -> list:
        return self.dataset.take(np.asarray(self.indices, dtype=np.int64)[order])

    def py_getitem(self, key: Any) -> tuple:
        return self.rows(key)

    def py_attr(self, ev, node, name: str) -> Any:
        if name in ("dataset", "indices"):
            return getattr(self, name)
        raise DdxTypeError(f"'Subset' object has no attribute '{name}'")


DATASETS = (TensorDataset, Subset)


class DataLoader:
    def __init__(self, dataset, batch_size: int, drop_last: bool, shuffle: bool,
                 generator: GeneratorHandle | None = None) -> None:
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.shuffle, self.generator = shuffle, generator

    def _rng(self):
        return (self.generator or DEFAULT_GENERATOR).rng

    def __repr__(self) -> str:
        return "<torch.utils.data.dataloader.DataLoader object>"

    def py_len(self) -> int:
        n, b = self.dataset.py_len(), self.batch_size
        return n // b if self.drop_last else -(-n // b)

    def py_iter_ev(self, ev):
        """iter(loader) in a statement: a dataset of the user's is read by its evaluator."""
        if isinstance(self.dataset, pydata_user.UserDataset):
            self.dataset.ev = ev
        return self.py_iter()

    def py_iter(self):
        # (each iterator PyTorch makes draws its base seed, torch.empty((), dtype=torch.int64)
        # .random_(), from the default generator, even with no workers: so does ddx's)
        self._rng().words64(1)
        return LoaderIter(self._batches())

    def _batches(self):
        b, n = self.batch_size, self.dataset.py_len()
        if not self.shuffle:
            for i in range(self.py_len()):
                got = self.dataset.rows(slice(i * b, (i + 1) * b))
                yield got if isinstance(self.dataset, pydata_user.UserDataset) else list(got)
            return
        # RandomSampler.__iter__, run at the first batch: seed = int(torch.empty((),
        # dtype=torch.int64).random_().item()) (a 64-bit word modulo 2**63), a generator
        # seeded with it, and torch.randperm(n, generator=that)
        # (with the loader's own generator=, that generator, with no seed drawn)
        if self.generator is None:
            sampler = Generator()
            sampler.manual_seed(int(self._rng().words64(1)[0]) % (1 << 63))
        else:
            sampler = self.generator.rng
        order = sampler.permutation(n)
        for i in range(self.py_len()):
            yield self.dataset.take(order[i * b:(i + 1) * b])

    def py_attr(self, ev, node, name: str) -> Any:
        if name in ("dataset", "batch_size", "drop_last", "generator"):
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
_USED = {"dataset", "batch_size", "shuffle", "drop_last", "generator"}


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
                                      "takes dataset, batch_size, shuffle, drop_last and "
                                      "generator")
            raise DdxTypeError("DataLoader.__init__() got an unexpected keyword argument "
                               f"'{name}'")
    dataset = given.get("dataset")
    if not isinstance(dataset, DATASETS) and pydata_user.readable(dataset):
        dataset = pydata_user.UserDataset(dataset, ev)  # (the user's own: __getitem__)
    elif not isinstance(dataset, DATASETS):
        raise DdxTypeError("ddx's DataLoader takes a dataset: a TensorDataset, a Subset, a "
                           "list, or an object with __len__ and __getitem__")
    generator = given.get("generator")
    if generator is not None and not isinstance(generator, GeneratorHandle):
        raise DdxTypeError("DataLoader(generator=...) takes a torch.Generator")
    size = _int(given.get("batch_size", 1), "batch_size")
    if size <= 0:
        raise DdxValueError("batch_size should be a positive integer value, but got "
                            f"batch_size={size}")
    return DataLoader(dataset, size, bool(given.get("drop_last", False)),
                      bool(given.get("shuffle", False)), generator)


def _lengths(lengths: list, n: int) -> list[int]:
    """random_split's lengths: counts, or fractions summing to 1 (floors, then what is left
    one by one from the first part on)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        return counts
    if any(isinstance(v, float) and not v.is_integer() for v in lengths):
        raise DdxValueError("Sum of input lengths does not equal the length of the input "
                            "dataset!")
    return [int(v) for v in lengths]


def _random_split(ev, node, args: list, kw: dict) -> list:
    given = dict(zip(("dataset", "lengths", "generator"), args))
    given.update({k: v for k, (v, _) in kw.items()})
    unknown = sorted(set(given) - {"dataset", "lengths", "generator"})
    if unknown:
        raise DdxTypeError(f"random_split() got an unexpected keyword argument '{unknown[0]}'")
    if len(args) > 3:
        raise DdxTypeError(f"random_split() takes from 2 to 3 positional arguments but "
                           f"{len(args)} were given")
    dataset, generator = given.get("dataset"), given.get("generator", DEFAULT_GENERATOR)
    if not isinstance(dataset, DATASETS) or "lengths" not in given:
        raise DdxTypeError("ddx's random_split takes a TensorDataset (or a Subset) and lengths")
    if not isinstance(generator, GeneratorHandle):
        raise DdxTypeError("random_split(generator=...) takes a torch.Generator")
    raw = given["lengths"]
    values = [number_of(v) for v in raw] if isinstance(raw, (list, tuple)) else None
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                             for v in values):
        raise DdxTypeError("random_split(): lengths must be a list of numbers")
    n = dataset.py_len()
    counts = _lengths(values, n)
    if sum(counts) != n:
        raise DdxValueError("Sum of input lengths does not equal the length of the input "
                            "dataset!")
    rng = generator.rng
    if ev.journal is not None:
        ev.journal.keep(rng, "state")
    indices = rng.permutation(n).tolist()
    parts, start = [], 0
    for count in counts:
        parts.append(Subset(dataset, indices[start:start + count]))
        start += count
    return parts


class TorchGenerator(GeneratorHandle):
    """A torch.Generator as the REPL sees it: GeneratorHandle's methods and its device."""

    def py_attr(self, ev, node, name: str) -> Any:
        if name == "device":
            return Device("cpu")
        if name in GENERATOR_METHODS:  # (a method as a value: f = g.set_state)
            return Native(name, lambda ev, node, args, kw: self.py_method(ev, node, name, args,
                                                                          kw))
        raise DdxTypeError(f"'torch._C.Generator' object has no attribute '{name}'")


GENERATOR_METHODS = ("manual_seed", "seed", "initial_seed", "get_state", "set_state")


_MADE: list[int] = []  # torch.Generator()s made (each repr has an address of its own)


def _new_generator(ev, node, args: list, kw: dict) -> GeneratorHandle:
    device = args[0] if args else kw.get("device", (None,))[0]
    if len(args) > 1 or set(kw) - {"device"}:
        raise DdxTypeError("Generator() takes device= only")
    if device is not None and str(getattr(device, "kind", device)) != "cpu":
        raise DdxRuntimeError(f"Generator(device={device!r}): ddx computes on the CPU only "
                              "(device='cpu')")
    rng = Generator()
    rng.manual_seed(DEFAULT_SEED)
    _MADE.append(1)
    return TorchGenerator(rng, len(_MADE))


UTILS = PyModule("torch.utils", {})  # (torch.utils.checkpoint adds itself: pycheckpoint.py)


def register() -> None:
    data = PyModule("torch.utils.data", {
        "Dataset": pydata_user.DATASET,
        "TensorDataset": Native("TensorDataset", _tensor_dataset),
        "DataLoader": Native("DataLoader", _data_loader),
        "Subset": Native("Subset", lambda ev, node, args, kw: Subset(*args)),
        "random_split": Native("random_split", _random_split)})
    utils = UTILS
    utils.members["data"] = data
    EXTRA["torch"]["utils"] = utils
    MODULES["torch.utils"] = utils
    MODULES["torch.utils.data"] = data
    EXTRA["torch"]["Generator"] = Native("Generator", _new_generator)
    # (torch.manual_seed returns torch.default_generator itself: the graph layer's handle,
    # given the REPL's view of it)
    DEFAULT_GENERATOR.__class__ = TorchGenerator
    EXTRA["torch"]["default_generator"] = DEFAULT_GENERATOR


register()

__all__ = ["DataLoader", "Subset", "TensorDataset"]
