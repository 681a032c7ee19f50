"""The transforms SoftplusTransform, LowerCholeskyTransform, IndependentTransform,
ReshapeTransform and CumulativeDistributionTransform (values, inverses and log-abs-det-Jacobians
against torch and finite differences), and biject_to / transform_to: each constraint's transform
lands in its set, inverts, and matches torch's; custom rules register as in PyTorch."""

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.distributions import biject_to, constraints, transform_to, transforms

from helpers import check_op, has_torch, torch

X = np.array([[0.3, -1.2, 2.0], [-0.5, 0.8, 1.5], [1.1, -2.0, 0.1]])

TRANSFORMS = {
    "softplus": lambda T: T.distributions.transforms.SoftplusTransform(),
    "independent_exp": lambda T: T.distributions.transforms.IndependentTransform(
        T.distributions.transforms.ExpTransform(), 1
    ),
    "reshape": lambda T: T.distributions.transforms.ReshapeTransform((3,), (3, 1)),
    "cdf_normal": lambda T: T.distributions.transforms.CumulativeDistributionTransform(
        T.distributions.Normal(T.tensor(0.5, dtype=T.float64), T.tensor(2.0, dtype=T.float64))
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_values_inverses_and_jacobians(name):
    check_op(lambda T, x: TRANSFORMS[name](T)(x), X, atol=1e-10, rtol=1e-10)

    def jacobian(T, x):
        t = TRANSFORMS[name](T)
        return t.log_abs_det_jacobian(x, t(x))

    check_op(jacobian, X, atol=1e-10, rtol=1e-10, grad=name != "reshape")
    t = TRANSFORMS[name](fg)
    x = fg.tensor(X)
    np.testing.assert_allclose(t.inv(t(x)).numpy(), X, atol=1e-9)


def test_lower_cholesky_transform():
    check_op(lambda T, x: T.distributions.transforms.LowerCholeskyTransform()(x), X, atol=1e-12, rtol=1e-12)
    t = transforms.LowerCholeskyTransform()
    y = t(fg.tensor(X))
    # Not bijective: the inverse recovers the lower triangle only.
    assert bool(constraints.lower_cholesky.check(y)) and np.allclose(t.inv(y).numpy(), np.tril(X))


def test_reshape_and_independent_shapes():
    reshape = transforms.ReshapeTransform((2, 3), (6,))
    assert reshape.forward_shape((5, 2, 3)) == (5, 6) and reshape.inverse_shape((5, 6)) == (5, 2, 3)
    with pytest.raises(ValueError, match="different numbers of elements"):
        transforms.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        reshape.forward_shape((5, 3, 2))
    independent = transforms.IndependentTransform(transforms.ExpTransform(), 2)
    assert independent.event_dim == 2 and independent.bijective and independent.sign == 1
    assert independent.log_abs_det_jacobian(fg.tensor(X), fg.tensor(X).exp()).shape == ()


CONSTRAINTS = {
    "real": lambda C: C.real,
    "positive": lambda C: C.positive,
    "nonnegative": lambda C: C.nonnegative,
    "greater_than": lambda C: C.greater_than(2.0),
    "less_than": lambda C: C.less_than(-1.0),
    "unit_interval": lambda C: C.unit_interval,
    "interval": lambda C: C.interval(-1.0, 3.0),
    "half_open_interval": lambda C: C.half_open_interval(0.0, 2.0),
    "simplex": lambda C: C.simplex,
    "positive_vector": lambda C: C.independent(C.positive, 1),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_land_in_the_constraint(name, registry):
    constraint = CONSTRAINTS[name](constraints)
    t = {"biject_to": biject_to, "transform_to": transform_to}[registry](constraint)
    x = fg.tensor(X)
    y = t(x)
    assert bool(constraint.check(y).all())
    if t.bijective:
        np.testing.assert_allclose(t.inv(y).numpy(), X, atol=1e-9)
    if has_torch:
        from torch.distributions import constraint_registry as reference_registry
        from torch.distributions import constraints as torch_constraints

        reference = getattr(reference_registry, registry)(CONSTRAINTS[name](torch_constraints))
        np.testing.assert_allclose(y.numpy(), reference(torch.tensor(X)).numpy(), rtol=1e-12, atol=1e-12)
        if t.bijective:
            np.testing.assert_allclose(
                t.log_abs_det_jacobian(x, y).numpy(),
                reference.log_abs_det_jacobian(torch.tensor(X), reference(torch.tensor(X))).numpy(),
                rtol=1e-10,
                atol=1e-12,
            )


def test_registering_rules():
    registry = type(biject_to)()

    class Even(constraints.Constraint):
        def check(self, value):
            return value % 2 == 0

    @registry.register(Even)
    def _to_even(constraint):
        return transforms.AffineTransform(0.0, 2.0)

    assert isinstance(registry(Even()), transforms.AffineTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        biject_to(constraints.lower_cholesky)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        registry.register(int, _to_even)
    assert isinstance(transform_to(constraints.lower_cholesky), transforms.LowerCholeskyTransform)
