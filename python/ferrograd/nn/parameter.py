"""torch.nn.Parameter.

Relies on: ferrograd.Tensor (subclassable, bound before ``ferrograd.nn`` is
imported), Tensor._make_subclass(cls, data, requires_grad), ferrograd.empty(0),
Tensor.detach(), Tensor.clone(), Tensor.requires_grad, Tensor.__repr__.
"""

from __future__ import annotations

from typing import Any

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
