"""torch.nn.Parameter, and the placeholders of lazy modules: UninitializedParameter and
UninitializedBuffer.

Relies on: ferrograd.Tensor (subclassable, bound before ``ferrograd.nn`` is
imported), Tensor._make_subclass(cls, data, requires_grad), ferrograd.empty(0),
ferrograd.empty(shape, dtype=), Tensor.detach(), Tensor.clone(), Tensor.requires_grad,
Tensor.dtype, Tensor.__repr__.
"""

from __future__ import annotations

from typing import Any, ClassVar

import ferrograd


class Parameter(ferrograd.Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it."""

    def __new__(cls, data: ferrograd.Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = ferrograd.empty(0)
        return ferrograd.Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.detach().clone(), self.requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, protocol: int) -> tuple[Any, ...]:
        return type(self), (self.detach(), self.requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class UninitializedTensorMixin:
    """A placeholder whose shape is not known yet (torch's mixin of the same name).

    ``materialize(shape)`` makes the real tensor. PyTorch swaps the storage and class of the
    placeholder itself; ferrograd tensors cannot change shape in place, so the new tensor is
    recorded on the placeholder and lazy modules put it in the placeholder's place (see
    ``nn.modules.LazyModuleMixin``).
    """

    cls_to_become: ClassVar[type]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        data = ferrograd.empty(tuple(shape), dtype=self.dtype if dtype is None else dtype)  # type: ignore[attr-defined]
        self._materialized = self._become(data)

    def _become(self, data: ferrograd.Tensor) -> ferrograd.Tensor:
        raise NotImplementedError

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: int) -> tuple[Any, ...]:
        return type(self), (self.requires_grad,)  # type: ignore[attr-defined]

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)  # type: ignore[attr-defined, call-arg]
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first forward: no shape yet."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        return ferrograd.Tensor._make_subclass(cls, ferrograd.empty(0, dtype=dtype), requires_grad)

    def _become(self, data: ferrograd.Tensor) -> ferrograd.Tensor:
        return Parameter(data, self.requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, ferrograd.Tensor):
    """A buffer of a lazy module before its first forward: no shape yet."""

    cls_to_become = ferrograd.Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None, persistent: bool = True
    ):
        buffer = ferrograd.Tensor._make_subclass(cls, ferrograd.empty(0, dtype=dtype), requires_grad)
        buffer.persistent = persistent
        buffer._is_buffer = True
        return buffer

    def _become(self, data: ferrograd.Tensor) -> ferrograd.Tensor:
        return data.requires_grad_(self.requires_grad)


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is a placeholder of a lazy module (possibly materialized already)."""
    return isinstance(param, UninitializedTensorMixin)
