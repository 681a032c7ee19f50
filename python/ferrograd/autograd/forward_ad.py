"""Forward-mode AD: inside a dual level a tensor carries a tangent, and every op gives its
outputs the Jacobian-vector products of their inputs' tangents."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from .. import _C
from .._C import Tensor
from .grad_mode import _GradMode

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

# The open level's index, -1 while none is open: levels do not nest.
_current_level = -1


def enter_dual_level() -> int:
    """Opens a forward AD level and makes it the default of ``make_dual`` and
    ``unpack_dual``."""
    global _current_level
    new_level = _C._enter_dual_level()
    if new_level != _current_level + 1:
        raise RuntimeError(
            "Entering a new forward AD level but the current level is not valid. "
            "Make sure you did not modify it directly."
        )
    _current_level = new_level
    return new_level


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """Closes the open level: every tangent made at it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _C._exit_dual_level(level)
    _current_level = level - 1


def make_dual(tensor: Tensor, tangent: Tensor, *, level: Optional[int] = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent``, at the open level."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, "
            "make sure to enter_dual_level() first."
        )
    return _C._make_dual(tensor, tangent, level)


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent."""

    primal: Tensor
    tangent: Optional[Tensor]


def unpack_dual(tensor: Tensor, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """``tensor``'s primal, as a view without tangent, and its tangent (``None`` if it has
    none)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _C._unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_GradMode):
    """A context manager (and decorator) in which forward AD computation happens: it opens a
    level on entry and closes it, dropping every tangent, on exit."""

    def __enter__(self) -> int:  # type: ignore[override]
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


_is_fwd_grad_enabled = _C._is_fwd_grad_enabled


class _set_fwd_grad_enabled(_GradMode):
    """Turns tangent propagation on or off on this thread for a scope."""

    def __init__(self, mode: bool) -> None:
        self.prev = _is_fwd_grad_enabled()
        self.mode = mode
        _C._set_fwd_grad_enabled(mode)

    def _args(self) -> tuple:
        return (self.mode,)

    def __enter__(self) -> None:  # type: ignore[override]
        pass

    def __exit__(self, *exc: Any) -> None:
        _C._set_fwd_grad_enabled(self.prev)


def _input_tangents(args: tuple) -> Optional[list]:
    """The tangents of a custom Function's arguments at the open level, or ``None`` when no
    argument has one. A tensor argument without a tangent gets zeros, any other argument
    ``None``, as ``jvp`` receives them."""
    if _current_level < 0:
        return None
    tangents = [unpack_dual(a).tangent if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    return [
        t if t is not None or not isinstance(a, Tensor) else a.new_zeros(a.shape)
        for a, t in zip(args, tangents)
    ]


def _set_output_tangents(outputs: tuple, tangents: Any) -> None:
    """Gives a custom Function's tensor outputs the tangents its ``jvp`` returned."""
    tangents = tangents if isinstance(tangents, tuple) else (tangents,)
    if len(tangents) != len(outputs):
        raise RuntimeError(
            f"jvp should return exactly as many tangents as there are outputs of forward, "
            f"expected {len(outputs)} but got {len(tangents)}"
        )
    for out, tangent in zip(outputs, tangents):
        if isinstance(out, Tensor) and tangent is not None and (out.is_floating_point() or out.is_complex()):
            _C._set_fwd_grad(out, tangent, _current_level)
