"""``default_collate``: merges a list of samples into a batch as PyTorch does."""

from __future__ import annotations

import collections.abc
import re

import numpy as np

import ferrograd

__all__ = ["default_collate", "default_convert"]

_NP_STR_OBJ = re.compile(r"[SaUO]")
_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """Turn NumPy arrays (inside containers too) into tensors; leave everything else alone."""
    if isinstance(data, ferrograd.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        if (isinstance(data, np.ndarray) or data.shape == ()) and _NP_STR_OBJ.search(data.dtype.str):
            return data
        return ferrograd.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples into a batch: tensors, NumPy arrays and numbers become one
    tensor with a new leading dimension (Python floats as float64, ints as int64), strings
    stay a list, and dicts, namedtuples, tuples and lists are collated field by field
    (tuples give lists, as in PyTorch)."""
    elem = batch[0]
    if isinstance(elem, ferrograd.Tensor):
        return ferrograd.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _NP_STR_OBJ.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([ferrograd.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        if _NP_STR_OBJ.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        return ferrograd.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return ferrograd.tensor(batch, dtype=ferrograd.float64)
    if isinstance(elem, int):
        return ferrograd.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))
