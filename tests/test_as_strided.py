"""`as_strided`: views of a tensor's storage with any sizes and strides, overlapping ones
included, their gradients (added up where windows overlap), in-place writes through them,
and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op, has_torch

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


@st.composite
def strided_reads(draw):
    """A storage length and a size/stride/offset that stays inside it."""
    n = draw(st.integers(1, 12))
    ndim = draw(st.integers(0, 3))
    size = [draw(st.integers(0, 4)) for _ in range(ndim)]
    stride = [draw(st.integers(0, 3)) for _ in range(ndim)]
    span = sum((s - 1) * t for s, t in zip(size, stride)) if all(size) else 0
    offset = draw(st.integers(0, max(0, n - 1 - span))) if span < n else 0
    if span >= n:
        size = [0] * ndim
    return n, size, stride, offset


@settings(max_examples=40, deadline=None)
@given(strided_reads(), st.integers(0, 2**31 - 1))
def test_values_and_gradients_match_fd_and_torch(read, seed):
    n, size, stride, offset = read
    x = np.random.default_rng(seed).standard_normal(n)
    check_op(lambda T, a: T.as_strided(a, size, stride, offset), x)
    check_op(lambda T, a: a.as_strided(size, stride, offset) * 2, x)


def test_sliding_windows_share_storage_and_add_up_gradients():
    x = fg.arange(6.0, requires_grad=True)
    windows = x[1:].as_strided((3, 2), (1, 1))
    assert windows.grad_fn.name() == "AsStridedBackward0"
    assert windows._base.data_ptr() == x.data_ptr() and windows._base.shape == x.shape
    assert windows.tolist() == [[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]]
    windows.sum().backward()
    # Each element counts once per window it appears in.
    assert x.grad.tolist() == [0.0, 1.0, 2.0, 2.0, 1.0, 0.0]


def test_default_offset_is_the_tensors_own_and_an_explicit_one_is_absolute():
    x = fg.arange(6.0)
    tail = x[2:]
    assert tail.as_strided((2,), (1,)).tolist() == [2.0, 3.0]
    assert tail.as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]
    assert tail.as_strided((2,), (1,), 0).storage_offset() == 0


def test_writes_through_the_view_reach_the_base():
    x = fg.zeros(4)
    v = x.as_strided((2, 2), (1, 1))
    v[1, 1] = 5.0
    assert x.tolist() == [0.0, 0.0, 5.0, 0.0]
    assert v.tolist() == [[0.0, 0.0], [0.0, 5.0]]


@needs_torch
def test_inplace_through_a_view_rewrites_the_base_history_like_torch():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64, requires_grad=True)
        b = x * 1
        v = b.as_strided((2,), (2,), 1)
        v.mul_(3)
        (b * T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)).sum().backward()
        return type(b.grad_fn).__name__, x.grad.tolist(), b.tolist()

    assert run(fg) == run(torch)


@needs_torch
def test_double_backward_matches_torch():
    def run(T):
        x = T.tensor([0.5, -1.0, 2.0, 1.5], dtype=T.float64, requires_grad=True)
        y = (x.as_strided((3, 2), (1, 1)) ** 3).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g.tolist(), gg.tolist()

    assert run(fg) == run(torch)


@pytest.mark.parametrize(
    "args",
    [
        ((4,), (2,)),
        ((2,), (1, 1)),
        ((2,), (-1,)),
        ((2,), (1,), 3),
        ((2,), (1,), -1),
        ((-1,), (1,)),
    ],
)
def test_errors_match_torch(args):
    with pytest.raises(RuntimeError) as ours:
        fg.arange(4.0).as_strided(*args)
    if has_torch:
        with pytest.raises(RuntimeError) as theirs:
            torch.arange(4.0).as_strided(*args)
        assert str(ours.value) == str(theirs.value)


def test_reading_outside_the_input_is_refused_only_when_recording():
    x = fg.arange(6.0, requires_grad=True)
    tail = x[2:].detach()
    assert tail.as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="outside"):
        (x * 1)[2:].as_strided((2,), (1,), 0)
