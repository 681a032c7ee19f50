"""From constraints to transforms: ``biject_to(constraint)`` is a bijection from unconstrained
reals onto the constraint's set (for parameters optimised in an unconstrained space, and for
densities in it), ``transform_to(constraint)`` a transform onto it that need not be bijective.
``register`` adds a rule for a constraint type, as a call or a decorator."""

from __future__ import annotations

from typing import Any, Callable

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Rules mapping each constraint type to a factory of transforms."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], transforms.Transform]] = {}

    def register(self, constraint, factory: Callable[[Any], transforms.Transform] | None = None):
        """Registers ``factory(constraint)`` for ``constraint``'s type (or the type given)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _identity(constraint) -> transforms.Transform:
    return transforms.identity_transform


def _independent(registry: ConstraintRegistry):
    def factory(constraint) -> transforms.Transform:
        return transforms.IndependentTransform(
            registry(constraint.base_constraint), constraint.reinterpreted_batch_ndims
        )

    return factory


def _above(constraint) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


def _below(constraint) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


def _interval(constraint) -> transforms.Transform:
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)) and (lower, upper) == (0, 1):
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(lower, upper - lower)]
    )


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _identity)
    _registry.register(constraints.independent, _independent(_registry))
    # `positive` and `nonnegative` are instances of these two types: exp shifted by zero.
    _registry.register(constraints.greater_than, _above)
    _registry.register(constraints.greater_than_eq, _above)
    _registry.register(constraints.less_than, _below)
    _registry.register(constraints.interval, _interval)
    _registry.register(constraints.half_open_interval, _interval)
del _registry
biject_to.register(constraints.simplex, lambda constraint: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda constraint: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda constraint: transforms.LowerCholeskyTransform())
