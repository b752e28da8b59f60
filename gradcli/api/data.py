"""``torch.utils.data`` for programs: datasets, samplers, ``DataLoader``, ``default_collate`` and ``random_split``.

The classes follow torch/utils/data (dataset.py, sampler.py, dataloader.py, _utils/collate.py of PyTorch 2.13)
and draw their random numbers as PyTorch does, so that after ``torch.manual_seed`` the batches are PyTorch's:

* each ``iter(loader)`` first draws one int64 from the loader's generator (the global one when none was given),
  as ``_BaseDataLoaderIter.__init__`` draws ``_base_seed``, shuffled or not;
* a :class:`RandomSampler` without a generator seeds a generator of its own with
  ``int(torch.empty((), dtype=torch.int64).random_())`` (``random64() % 2**63``) when its iteration starts, then
  takes ``randperm(n)`` from it (twice when the number of samples is ``n``: PyTorch's loop draws the tail's
  permutation too);
* :func:`random_split` takes ``randperm(sum(lengths))`` from its generator (the global one by default).

A program's ``class MyData(Dataset)`` with ``__len__``/``__getitem__`` is an ordinary program object: the loader
reads it through ``len()`` and ``[]``, which reach the program's methods. Workers (``num_workers``) and pinned
memory have no meaning in gradcli: the loader accepts them and reads the dataset in the program's own process,
which gives the same batches in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..engine import context, dtypes
from ..engine.generator import Generator as _EngineGenerator
from ..engine.tensor import Tensor
from ..ops import REGISTRY

_INT64_RANGE = np.uint64(1 << 63)


# ------------------------------------------------------------------------------------------ generators
def _generator_of(generator) -> _EngineGenerator:
    """The engine generator behind ``generator=`` (None: the run's global generator, ``torch.default_generator``).

    Raises:
        TypeError: for a value that is not a generator.
    """
    return context.generator_of(generator)


def _draw_int64(gen: _EngineGenerator) -> int:
    """``int(torch.empty((), dtype=torch.int64).random_(generator=gen))``: one ``random64() % 2**63``."""
    return int(gen.random64(1)[0] % _INT64_RANGE)


def _randperm(n: int, gen: _EngineGenerator) -> list:
    return gen.randperm(n, np.dtype(np.int64)).tolist()


# ------------------------------------------------------------------------------------------ datasets
class Dataset:
    """``torch.utils.data.Dataset``: the base of map-style datasets (``__getitem__`` and usually ``__len__``);
    a program's class may derive it. ``a + b`` concatenates (:class:`ConcatDataset`)."""

    program_base = True  # a program's class may derive it (see gradcli.language.builtins.is_builtin_base)
    program_attributes: tuple = ()

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataset.{type(self).__name__} object at {id(self):#x}>"


class TensorDataset(Dataset):
    """``TensorDataset(*tensors)``: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Raises:
        AssertionError: "Size mismatch between tensors" when the first dimensions differ (PyTorch's).
    """

    program_attributes = ("tensors",)

    def __init__(self, *tensors):
        if not all(tensors[0].shape[0] == t.shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """``Subset(dataset, indices)``: the samples of ``dataset`` at ``indices``, in that order."""

    program_attributes = ("dataset", "indices")

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """``ConcatDataset(datasets)``: the samples of each dataset in turn.

    Raises:
        AssertionError: for no datasets (PyTorch's message); ValueError for an index out of range.
    """

    program_attributes = ("datasets", "cumulative_sizes")

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        for i, end in enumerate(self.cumulative_sizes):
            if idx < end:
                start = self.cumulative_sizes[i - 1] if i else 0
                return self.datasets[i][idx - start]
        raise IndexError("list index out of range")


def random_split(dataset, lengths, generator=None) -> list:
    """``random_split(dataset, lengths, generator=None)``: disjoint :class:`Subset` s of the given lengths, or of
    fractions summing to 1 (``floor(frac * len)`` each, the remainder added one by one from the first), from
    ``randperm(sum(lengths), generator=generator)``, as torch.utils.data.random_split.

    Raises:
        ValueError: a fraction outside [0, 1], or lengths whose sum is not the dataset's length (PyTorch's texts).
    """
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(n * frac))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(sum(lengths), _generator_of(generator))
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out


# ------------------------------------------------------------------------------------------ samplers
class Sampler:
    """``torch.utils.data.Sampler``: the base of index samplers."""

    program_attributes: tuple = ()

    def __repr__(self) -> str:
        return f"<torch.utils.data.sampler.{type(self).__name__} object at {id(self):#x}>"


class SequentialSampler(Sampler):
    """``SequentialSampler(data_source)``: the indices ``0 .. len - 1`` in order."""

    program_attributes = ("data_source",)

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """``RandomSampler(data_source, replacement=False, num_samples=None, generator=None)``: indices drawn as
    PyTorch's sampler draws them (see the module docstring).

    Raises:
        ValueError: a ``num_samples`` that is not a positive integer, a ``replacement`` that is not a bool.
    """

    program_attributes = ("data_source", "replacement", "num_samples", "generator")

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            gen = _EngineGenerator(_draw_int64(context.generator()))
        else:
            gen = _generator_of(self.generator)
        if self.replacement:
            for size in [32] * (self.num_samples // 32) + [self.num_samples % 32]:
                yield from gen.random_from_to((size,), 0, n, np.dtype(np.int64)).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _randperm(n, gen)
            yield from _randperm(n, gen)[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """``SubsetRandomSampler(indices, generator=None)``: ``indices`` in the order of ``randperm(len(indices))``
    from ``generator`` (the global one by default), as PyTorch's."""

    program_attributes = ("indices", "generator")

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in _randperm(len(self.indices), _generator_of(self.generator)):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """``BatchSampler(sampler, batch_size, drop_last)``: lists of ``batch_size`` indices of ``sampler`` (the
    last one shorter unless ``drop_last``).

    Raises:
        ValueError: a ``batch_size`` that is not a positive integer or a ``drop_last`` that is not a bool.
    """

    program_attributes = ("sampler", "batch_size", "drop_last")

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


# ------------------------------------------------------------------------------------------ collate
def _elem_name(elem) -> str:
    t = type(elem)
    return f"<class '{t.__name__}'>" if t.__module__ == "builtins" else f"<class 'gradcli.{t.__name__}'>"


def default_collate(batch):
    """``default_collate(batch)``: tensors stacked along a new first dimension, NumPy arrays likewise (as
    tensors), floats into a float64 tensor, ints (and bools) into an int64 (bool) tensor, strings kept as a
    list, dicts collated key by key, named tuples field by field, tuples and lists position by position (a
    tuple's batch is a list, as PyTorch's), from torch/utils/data/_utils/collate.py.

    Raises:
        RuntimeError: for sequences of different lengths; TypeError for elements it cannot collate (PyTorch's
            texts).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return REGISTRY["stack"](list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                            f"lists; found {elem.dtype}")
        return REGISTRY["stack"]([REGISTRY["tensor"](a) for a in batch], 0)
    if isinstance(elem, np.generic):
        return REGISTRY["tensor"](list(batch))
    if isinstance(elem, float):
        return REGISTRY["tensor"](list(batch), dtype=dtypes.NAMES["float64"])
    if isinstance(elem, int):
        return REGISTRY["tensor"](list(batch))
    if isinstance(elem, str):
        return batch
    if isinstance(elem, Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        return type(elem)(out) if type(elem) is not dict else out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {_elem_name(elem)}")


def default_convert(data):
    """``default_convert(data)``: NumPy arrays to tensors, inside dicts, tuples and lists too (what the loader
    gives without batching, ``batch_size=None``)."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return REGISTRY["tensor"](data)
    if isinstance(data, Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


# ------------------------------------------------------------------------------------------ DataLoader
class DataLoader:
    """``DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
    collate_fn=None, pin_memory=False, drop_last=False, ..., generator=None)``: batches of ``dataset``'s samples,
    collated by ``collate_fn`` (:func:`default_collate`); ``len()`` is the number of batches. Shuffling draws
    PyTorch's numbers (see the module docstring).

    Raises:
        ValueError: PyTorch's messages for a ``sampler`` with ``shuffle``, a ``batch_sampler`` with batch
            options, or a negative ``num_workers``.
    """

    program_attributes = ("dataset", "batch_size", "drop_last", "sampler", "batch_sampler", "num_workers",
                          "collate_fn", "generator", "pin_memory", "timeout")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        _draw_int64(_generator_of(self.generator))  # _BaseDataLoaderIter's _base_seed: drawn at iter()
        return self._batches()

    def _batches(self):
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataloader.DataLoader object at {id(self):#x}>"


#: The members of ``torch.utils.data`` in programs, by PyTorch's names.
NAMES = {c.__name__: c for c in (Dataset, TensorDataset, Subset, ConcatDataset, Sampler, SequentialSampler,
                                 RandomSampler, SubsetRandomSampler, BatchSampler, DataLoader)}
NAMES.update(random_split=random_split, default_collate=default_collate, default_convert=default_convert)


def is_data_object(obj) -> bool:
    """Whether ``obj`` is one of this module's datasets, samplers or loaders (whose ``program_attributes`` a
    program reads)."""
    return isinstance(obj, (Dataset, Sampler, DataLoader))
