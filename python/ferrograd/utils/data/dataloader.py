"""``DataLoader``: iterates over a dataset in (optionally shuffled) batches."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


def get_worker_info():
    """Always ``None``: ferrograd's ``DataLoader`` loads in the calling process."""
    return None


class DataLoader:
    """Batches of ``dataset`` in sampler order, merged with ``collate_fn``.

    The arguments and their checks are PyTorch's. Loading always happens in the
    calling process: ``num_workers``, ``prefetch_factor``, ``persistent_workers``,
    ``pin_memory``, ``timeout`` and ``multiprocessing_context`` are accepted and do not
    change the batches or their order; ``worker_init_fn`` is not called.
    """

    def __init__(
        self,
        dataset: Dataset | Iterable,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (False, None):
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None and not self._is_iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._is_iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        elif (
            batch_size is not None
            and self._is_iterable
            and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0)
        ):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._is_iterable and self.batch_size is not None)

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return _SingleProcessDataLoaderIter(self)

    def _batches(self):
        if self._is_iterable:
            yield from self._iter_iterable()
            return
        dataset = self.dataset
        for index in self._index_sampler:  # type: ignore[union-attr]
            if self._auto_collation:
                getitems = getattr(dataset, "__getitems__", None)
                samples = getitems(index) if getitems is not None else [dataset[i] for i in index]  # type: ignore[index]
                yield self.collate_fn(samples)
            else:
                yield self.collate_fn(dataset[index])  # type: ignore[index]

    def _iter_iterable(self):
        if self.batch_size is None:
            for sample in self.dataset:  # type: ignore[union-attr]
                yield self.collate_fn(sample)
            return
        batch: list = []
        for sample in self.dataset:  # type: ignore[union-attr]
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                length = length / self.batch_size
                length = math.floor(length) if self.drop_last else math.ceil(length)
            return int(length)
        return len(self._index_sampler)  # type: ignore[arg-type]


class _SingleProcessDataLoaderIter:
    """An iteration over a ``DataLoader``'s batches (PyTorch's class of the same name): an
    iterator with ``len``, the number of batches its sampler gives; without a sampler (an
    ``IterableDataset``) ``len`` raises PyTorch's ``TypeError``."""

    def __init__(self, loader: DataLoader) -> None:
        self._index_sampler = loader._index_sampler
        self._batches = loader._batches()

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def __len__(self) -> int:
        if self._index_sampler is None:
            # PyTorch gives an IterableDataset's loader a sampler of this name, without len.
            raise TypeError("object of type '_InfiniteConstantSampler' has no len()")
        return len(self._index_sampler)
