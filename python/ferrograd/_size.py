"""``ferrograd.Size``: the type of ``Tensor.shape`` and ``Tensor.size()``."""

from __future__ import annotations

import functools
import math
import operator
from typing import Any, SupportsIndex

__all__ = ["Size"]


class Size(tuple):
    """A tensor's shape: a tuple of ints with ``numel()``, printed as ``torch.Size([2, 3])`` so that
    messages quoting shapes read as PyTorch's do. Slicing, ``+`` and ``*`` give a ``Size`` again;
    it compares and hashes as the plain tuple."""

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        items = tuple(sizes)
        try:
            return tuple.__new__(cls, [operator.index(s) for s in items])
        except TypeError:
            for i, s in enumerate(items):
                if not hasattr(type(s), "__index__"):
                    raise TypeError(
                        f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')"
                    ) from None
            raise

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for ``Size([])``)."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        item = tuple.__getitem__(self, key)
        return _from_ints(item) if isinstance(key, slice) else item

    def __add__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, tuple):
            return NotImplemented
        return _from_ints(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Any:
        if not isinstance(other, tuple):
            return NotImplemented
        return _from_ints(tuple.__add__(other, self))

    def __mul__(self, count: SupportsIndex) -> Size:  # type: ignore[override]
        return _from_ints(tuple.__mul__(self, count))

    __rmul__ = __mul__

    def __reduce__(self) -> tuple[type[Size], tuple[tuple[int, ...]]]:
        return (Size, (tuple(self),))


# A Size from a tuple known to hold ints (the core's shapes), without the checks of ``Size()``.
_from_ints = functools.partial(tuple.__new__, Size)
