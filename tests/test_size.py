"""``ferrograd.Size``: the type of ``Tensor.shape`` and ``Tensor.size()``, a tuple of ints that
prints, slices, concatenates and pickles as PyTorch's ``torch.Size`` does."""

import pickle

import pytest

import ferrograd as fg

from helpers import has_torch, torch

MODULES = [fg, torch] if has_torch else [fg]


def test_shape_and_size_are_sizes_equal_to_tuples():
    x = fg.zeros(2, 3, 4)
    for s in (x.shape, x.size()):
        assert type(s) is fg.Size and isinstance(s, tuple)
        assert s == (2, 3, 4) and hash(s) == hash((2, 3, 4))
        assert s.numel() == 24 == x.numel()
    assert fg.zeros(()).shape == () and fg.zeros(()).shape.numel() == 1
    assert x.size(1) == 3 and type(x.size(1)) is int
    assert type(x.stride()) is tuple  # strides stay a plain tuple, as in PyTorch


@pytest.mark.parametrize("T", MODULES)
def test_size_operations_match_torch(T):
    s = T.Size([2, 3])
    assert repr(s) == str(s) == "torch.Size([2, 3])"
    assert repr(T.Size()) == "torch.Size([])" and T.Size().numel() == 1
    assert type(s[1:]) is T.Size and s[1:] == (3,) and type(s[0]) is int
    for combined, expected in [
        (s + (4,), (2, 3, 4)),
        ((1,) + s, (1, 2, 3)),
        (s * 2, (2, 3, 2, 3)),
        (2 * s, (2, 3, 2, 3)),
    ]:
        assert type(combined) is T.Size and combined == expected
    assert s.count(2) == 1 and s.index(3) == 1
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is T.Size
    assert T.Size((T.tensor(3), 4)) == (3, 4)  # 0-d integer tensors count as ints


@pytest.mark.parametrize("T", MODULES)
def test_size_rejects_non_integers(T):
    with pytest.raises(TypeError, match=r"torch.Size\(\) takes an iterable of 'int' \(item 1 is 'float'\)"):
        T.Size([2, 2.5])


def test_size_is_accepted_wherever_a_shape_is():
    x = fg.arange(6.0)
    shape = fg.zeros(2, 3).shape
    assert x.reshape(shape).shape == (2, 3) and x.view(shape).shape == (2, 3)
    assert fg.zeros(shape).shape == (2, 3) and fg.ones(fg.Size([3])).shape == (3,)
    assert x.reshape(2, 3).expand(fg.Size([4, 2, 3])).shape == (4, 2, 3)
