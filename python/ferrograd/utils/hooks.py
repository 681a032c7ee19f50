"""``ferrograd.utils.hooks``: the handle that hook registrations return, for code that keeps
hooks of its own, and the marker for hooks that serialization must not store."""

from __future__ import annotations

from typing import Callable, TypeVar

from ..nn.modules import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]

F = TypeVar("F", bound=Callable)


def unserializable_hook(f: F) -> F:
    """Marks ``f`` as a hook that is not saved with the tensor it is registered on."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f
