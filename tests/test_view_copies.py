"""The ``*_copy`` functions: what the view does, as new contiguous tensors that share no memory
with the input; values and gradients as torch's, gradients against finite differences."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

CASES = [
    ("alias_copy", ()),
    ("as_strided_copy", ((2, 2), (1, 2))),
    ("diagonal_copy", (0, 1, 2)),
    ("expand_copy", ((2, 2, 3, 4),)),
    ("narrow_copy", (2, 1, 2)),
    ("permute_copy", ((2, 0, 1),)),
    ("select_copy", (1, 2)),
    ("slice_copy", (2, 1, None, 2)),
    ("slice_copy", (-1,)),
    ("split_copy", (2, 2)),
    ("split_with_sizes_copy", ([1, 3], 2)),
    ("squeeze_copy", ()),
    ("transpose_copy", (0, 2)),
    ("unbind_copy", (1,)),
    ("unfold_copy", (2, 2, 1)),
    ("unsqueeze_copy", (1,)),
    ("view_copy", ((6, 4),)),
]


def run(T, name, args, values):
    x = T.tensor(values, requires_grad=True)
    result = getattr(T, name)(x, *args)
    parts = result if isinstance(result, tuple) else (result,)
    sum((p * (i + 1)).sum() for i, p in enumerate(parts)).backward()
    return x, parts


@pytest.mark.parametrize("name, args", CASES)
def test_copies_are_fresh_and_differentiable(name, args):
    values = np.random.default_rng(0).normal(size=(2, 3, 4))
    x, parts = run(fg, name, args, values)
    for part in parts:
        assert part.is_contiguous() and part.data_ptr() != x.data_ptr() and part._base is None
    view = getattr(x.detach(), name.removesuffix("_copy"), None)
    if view is not None and name != "slice_copy":
        expected = view(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for part, want in zip(parts, expected):
            np.testing.assert_array_equal(part.detach().numpy(), want.numpy())
    first = fg.tensor(values, requires_grad=True)
    assert fg.autograd.gradcheck(lambda t: getattr(fg, name)(t, *args), (first,))
    if has_torch:
        reference, reference_parts = run(torch, name, args, values)
        for part, want in zip(parts, reference_parts):
            np.testing.assert_allclose(part.detach().numpy(), want.detach().numpy())
        np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy())


def test_writes_to_a_copy_leave_the_input_alone():
    x = fg.arange(6.0).reshape(2, 3)
    copy = fg.t_copy(x)
    copy[0, 0] = 100.0
    assert x[0, 0].item() == 0.0 and copy.shape == (3, 2)
    assert not fg.detach_copy(x.requires_grad_()).requires_grad
    assert fg.view_as_real_copy(fg.tensor([1 + 2j])).tolist() == [[1.0, 2.0]]
    assert fg.view_as_complex_copy(fg.tensor([[1.0, 2.0]])).tolist() == [1 + 2j]
