"""DLPack exchange and frombuffer: other libraries' memory viewed without copying, both ways."""

from __future__ import annotations

import array
import gc
import mmap
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.utils.dlpack import DLDeviceType

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")

DTYPES = ["float32", "float64", "complex64", "complex128", "int64", "int32", "bool"]


def _sample(dtype: str, shape=(2, 3)) -> fg.Tensor:
    values = np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2
    return fg.tensor(values).to(getattr(fg, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_and_writes_the_exported_memory(dtype):
    t = _sample(dtype)
    a = np.from_dlpack(t)
    assert a.dtype == t.numpy().dtype and a.shape == (2, 3)
    np.testing.assert_array_equal(a, t.numpy())
    a[1, 2] = 1
    assert t[1, 2].item() == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_views_a_numpy_array(dtype):
    a = _sample(dtype).numpy().copy()
    t = fg.from_dlpack(a)
    assert t.dtype == getattr(fg, dtype) and not t.requires_grad and t.is_leaf
    t[0, 0] = 1
    assert a[0, 0] == 1


def test_views_keep_their_strides_and_offset():
    base = fg.arange(24.0).reshape(4, 6)
    for view in (base.t(), base[1:, ::2], base[2], base.unsqueeze(0).expand(3, 4, 6)):
        back = fg.from_dlpack(np.from_dlpack(view))
        assert back.shape == view.shape and back.stride() == view.stride()
        assert back.data_ptr() == view.data_ptr()
        np.testing.assert_array_equal(back.numpy(), view.numpy())


def test_a_ferrograd_tensor_round_trips_to_the_same_memory():
    t = fg.randn(3, 4)
    u = fg.from_dlpack(t)
    assert u.data_ptr() == t.data_ptr()
    u.add_(1.0)
    assert fg.equal(u, t)


def test_the_capsule_keeps_the_memory_alive():
    t = fg.arange(5.0, dtype=fg.float64)
    capsule = fg.utils.dlpack.to_dlpack(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(fg.from_dlpack(capsule).numpy(), np.arange(5.0))


def test_export_refuses_tensors_that_require_grad_and_streams():
    t = fg.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient, use tensor.detach()"):
        t.__dlpack__()
    with pytest.raises(RuntimeError, match="require gradient"):
        np.from_dlpack(t)
    np.testing.assert_array_equal(np.from_dlpack(t.detach()), t.detach().numpy())
    with pytest.raises(TypeError, match="stream must be"):
        t.detach().__dlpack__(stream="default")
    with pytest.raises(AssertionError, match="stream should be None on cpu."):
        t.detach().__dlpack__(stream=3)
    with pytest.raises(BufferError):
        t.detach().__dlpack__(dl_device=(DLDeviceType.kDLCUDA, 0))
    assert t.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


def test_versioned_export_and_copy():
    t = fg.ones(3)
    versioned = np.from_dlpack(t)  # NumPy 2 asks for a versioned capsule
    copied = np.from_dlpack(t, copy=True)
    t.fill_(2.0)
    assert versioned[0] == 2.0 and copied[0] == 1.0


def test_import_refuses_other_devices():
    class OnGpu:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be asked for a capsule")

        def __dlpack_device__(self):
            return (DLDeviceType.kDLCUDA, 0)

    with pytest.raises(BufferError, match="device type 2"):
        fg.from_dlpack(OnGpu())


@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    dtype=st.sampled_from(DTYPES),
    transpose=st.booleans(),
)
def test_round_trip_through_numpy_keeps_values(shape, dtype, transpose):
    t = _sample(dtype, tuple(shape))
    if transpose and t.ndim >= 2:
        t = t.transpose(0, -1)
    back = fg.from_dlpack(np.from_dlpack(t))
    assert back.dtype == t.dtype and back.shape == t.shape
    assert fg.equal(back, t)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64", "bool"])
def test_torch_and_ferrograd_share_memory_both_ways(dtype):
    t = _sample(dtype)
    seen_by_torch = torch.from_dlpack(t)
    assert str(seen_by_torch.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(seen_by_torch.numpy(), t.numpy())
    seen_by_torch[0, 1] = 1
    assert t[0, 1].item() == 1

    theirs = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    ours = fg.from_dlpack(theirs)
    ours[1, 0] = 1
    assert theirs[1, 0].item() == 1


@needs_torch
def test_capsules_cross_between_the_libraries():
    ours = fg.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4.0)))
    np.testing.assert_array_equal(ours.numpy(), np.arange(4.0, dtype=np.float32))
    theirs = torch.utils.dlpack.from_dlpack(fg.utils.dlpack.to_dlpack(fg.arange(3)))
    assert theirs.tolist() == [0, 1, 2]
    stepped = torch.arange(12.0).reshape(3, 4)[:, 1::2]
    mirror = fg.from_dlpack(stepped)
    assert mirror.stride() == stepped.stride()
    np.testing.assert_array_equal(mirror.numpy(), stepped.numpy())


def test_frombuffer_shares_the_buffer():
    raw = bytearray(16)
    t = fg.frombuffer(raw, dtype=fg.float32)
    assert t.shape == (4,) and t.dtype == fg.float32
    t.fill_(1.0)
    assert raw[:4] == np.float32(1.0).tobytes()
    raw[4:8] = np.float32(3.5).tobytes()
    assert t[1].item() == 3.5


def test_frombuffer_count_offset_and_buffer_kinds():
    doubles = array.array("d", [1.0, 2.0, 3.0, 4.0])
    assert fg.frombuffer(doubles, dtype=fg.float64, offset=8, count=2).tolist() == [2.0, 3.0]
    assert fg.frombuffer(memoryview(bytearray(b"\x01\x00\x00\x00" * 2)), dtype=fg.int32).tolist() == [1, 1]
    with mmap.mmap(-1, 16) as mapped:
        t = fg.frombuffer(mapped, dtype=fg.int64)
        t[1] = 7
        assert mapped[8] == 7
        del t
    grad = fg.frombuffer(bytearray(8), dtype=fg.float32, requires_grad=True)
    assert grad.requires_grad and grad.is_leaf


def test_frombuffer_warns_once_for_read_only_buffers(monkeypatch):
    monkeypatch.setattr(fg._compat, "_warned_unwritable_buffer", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fg.frombuffer(b"\x00" * 8, dtype=fg.int32).tolist() == [0, 0]
        fg.frombuffer(b"\x00" * 8, dtype=fg.int32)
    assert [str(w.message).startswith("The given buffer is not writable") for w in caught] == [True]


FROMBUFFER_ERRORS = [
    (bytearray(12), {"offset": -1}),
    (bytearray(12), {"offset": 12}),
    (bytearray(12), {"offset": 1}),
    (bytearray(12), {"count": 5}),
    (bytearray(12), {"count": 0}),
    (bytearray(0), {}),
    ([1.0, 2.0], {}),
]


@pytest.mark.parametrize("buffer, kwargs", FROMBUFFER_ERRORS)
def test_frombuffer_errors(buffer, kwargs):
    with pytest.raises(ValueError) as ours:
        fg.frombuffer(buffer, dtype=fg.float32, **kwargs)
    if has_torch:
        with pytest.raises(ValueError) as theirs:
            torch.frombuffer(buffer, dtype=torch.float32, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_frombuffer_needs_a_dtype():
    with pytest.raises(TypeError):
        fg.frombuffer(bytearray(8))
