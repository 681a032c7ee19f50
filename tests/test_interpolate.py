"""F.interpolate and nn.Upsample: nearest, nearest-exact and (bi/tri)linear resizing by size or
scale factor, values and gradients against finite differences and torch, and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
import ferrograd.nn.functional as F

from helpers import arrays, assert_raises_like_torch, check_op

LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


@settings(max_examples=40, deadline=None)
@given(spatial=st.integers(1, 3), linear=st.booleans(), by_size=st.booleans(), data=st.data())
def test_resizing_matches_torch_and_finite_differences(spatial, linear, by_size, data):
    sides = data.draw(st.lists(st.integers(1, 4), min_size=spatial, max_size=spatial))
    a = data.draw(arrays((data.draw(st.integers(1, 2)), 2, *sides)))
    mode = LINEAR[spatial] if linear else data.draw(st.sampled_from(["nearest", "nearest-exact"]))
    kw: dict = {"mode": mode}
    if linear:
        kw["align_corners"] = data.draw(st.booleans())
    if by_size:
        kw["size"] = tuple(data.draw(st.lists(st.integers(1, 6), min_size=spatial, max_size=spatial)))
    else:
        kw["scale_factor"] = data.draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.5]))
    if min(int(s * kw.get("scale_factor", 1)) for s in sides) == 0:
        return  # an empty output: torch refuses it
    check_op(lambda T, x: T.nn.functional.interpolate(x, **kw) ** 2, a)
    if linear:
        x = fg.tensor(a, requires_grad=True)
        assert fg.autograd.gradgradcheck(lambda x: F.interpolate(x, **kw) ** 3, (x,))


def test_nearest_doubling_repeats_every_element_and_names_its_node():
    x = fg.arange(6.0).reshape(1, 1, 2, 3).requires_grad_()
    y = F.interpolate(x, scale_factor=2)
    np.testing.assert_array_equal(
        y.detach().numpy()[0, 0], np.arange(6.0).reshape(2, 3).repeat(2, 0).repeat(2, 1)
    )
    assert y.grad_fn.name() == "UpsampleNearest2DBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 1, 2, 3), 4.0))
    assert F.interpolate(x, size=(3, 3), mode="bilinear").grad_fn.name() == "UpsampleBilinear2DBackward0"


def test_upsample_module():
    up = fg.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert up(fg.ones(1, 3, 4, 5)).shape == (1, 3, 8, 10)
    assert repr(fg.nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"


@pytest.mark.parametrize(
    "fn, kind, message",
    [
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), mode="bilinear"),
            ValueError,
            "either size or scale_factor should be defined",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), size=3, scale_factor=2),
            ValueError,
            "only one of size or scale_factor should be defined",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), size=3, mode="linear"),
            NotImplementedError,
            "Got 4D input, but linear mode needs 3D input",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), size=3, align_corners=True),
            ValueError,
            "align_corners option can only be set with the interpolating modes",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), size=(1, 2, 3)),
            ValueError,
            "Input and output must have the same number of spatial dimensions",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), size=3, mode="foo"),
            NotImplementedError,
            "Input Error: Only 3D, 4D and 5D input Tensors supported",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 3, 4), scale_factor=(1, 2, 3)),
            ValueError,
            "Input and scale_factor must have the same number of spatial dimensions",
        ),
    ],
)
def test_errors_match_pytorch(fn, kind, message):
    assert_raises_like_torch(fn, kind, message)
