"""Tensor.untyped_storage() and Tensor.storage(): the memory a tensor and its views share."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ferrograd as fg


def typed_storage(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return t.storage()


def test_views_share_one_storage_and_copies_do_not():
    x = fg.arange(6.0).reshape(2, 3)
    row, col, flat = x[1], x[:, 2], x.t().reshape(-1)
    base = x.untyped_storage().data_ptr()
    assert row.untyped_storage().data_ptr() == base
    assert col.untyped_storage().data_ptr() == base
    assert flat.untyped_storage().data_ptr() != base  # reshape of a transpose copies
    assert x.clone().untyped_storage().data_ptr() != base
    assert row.data_ptr() - base == 3 * 4


def test_untyped_storage_holds_the_whole_buffers_bytes():
    x = fg.arange(6.0, dtype=fg.float32)
    s = x[2:4].untyped_storage()
    assert s.nbytes() == s.size() == len(s) == 24 and s.element_size() == 1
    assert bytes(s.tolist()) == np.arange(6, dtype=np.float32).tobytes()
    assert s[7] == 0x3F and s[-1] == 0x40
    assert s[4:8].tolist() == list(np.float32(1.0).tobytes())
    assert s.device == fg.device("cpu") and not s.is_shared() and not s.is_pinned()
    with pytest.raises(IndexError, match="index 24 out of range for storage of size 24"):
        s[24]
    assert repr(s).endswith("[ferrograd.storage.UntypedStorage(device=cpu) of size 24]")


def test_writes_through_the_untyped_storage_reach_the_tensor():
    x = fg.zeros(2, dtype=fg.int64)
    s = x.untyped_storage()
    s[8] = 5
    assert x.tolist() == [0, 5]
    s.fill_(0)
    assert x.tolist() == [0, 0]
    s.copy_(fg.tensor([3, 4]).untyped_storage())
    assert x.tolist() == [3, 4]
    copy = s.clone()
    copy.fill_(1)
    assert x.tolist() == [3, 4] and copy.data_ptr() != s.data_ptr()
    with pytest.raises(RuntimeError, match="cannot be resized"):
        s.resize_(0)


def test_typed_storage_counts_elements_of_the_dtype():
    x = fg.arange(6.0).reshape(2, 3)
    ts = typed_storage(x[1])
    assert isinstance(ts, fg.TypedStorage)
    assert ts.size() == len(ts) == 6 and ts.dtype == fg.float32
    assert ts.element_size() == 4 and ts.nbytes() == 24
    assert ts.data_ptr() == x.data_ptr() and ts[4] == 4.0 and ts[-1] == 5.0
    assert ts.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert ts.untyped().data_ptr() == x.untyped_storage().data_ptr()
    with pytest.raises(IndexError, match="index 6 out of range for storage of size 6"):
        ts[6]
    assert repr(ts).endswith(
        "[ferrograd.storage.TypedStorage(dtype=ferrograd.float32, device=cpu) of size 6]"
    )


def test_writes_through_the_typed_storage_bump_the_version():
    x = fg.zeros(3)
    version = x._version
    ts = typed_storage(x)
    ts[1] = 2.0
    assert x.tolist() == [0.0, 2.0, 0.0] and x._version > version
    version = x._version
    ts.fill_(7.0)
    assert x.tolist() == [7.0, 7.0, 7.0] and x._version > version


def test_storages_of_tensors_that_require_grad_and_of_read_only_memory():
    w = fg.ones(3, requires_grad=True)
    assert typed_storage(w).tolist() == [1.0, 1.0, 1.0]
    assert w.untyped_storage().nbytes() == 12
    array = np.arange(3.0)
    array.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = fg.from_numpy(array)
    with pytest.raises(ValueError):
        t.untyped_storage()[0] = 1
    with pytest.raises(RuntimeError, match="read-only"):
        typed_storage(t).fill_(1.0)
    assert array.tolist() == [0.0, 1.0, 2.0]


def test_complex_views_share_the_complex_storage():
    z = fg.zeros(2, dtype=fg.complex64)
    assert fg.view_as_real(z).untyped_storage().data_ptr() == z.untyped_storage().data_ptr()
    assert z.untyped_storage().nbytes() == fg.view_as_real(z).untyped_storage().nbytes() == 16


def test_storage_warns_once_that_typed_storage_is_deprecated():
    code = (
        "import warnings, ferrograd as fg\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    fg.ones(2).storage(); fg.ones(2).storage()\n"
        "print([str(w.message)[:26] for w in caught])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['TypedStorage is deprecated']"


def test_agrees_with_torch_on_sizes_and_sharing():
    torch = pytest.importorskip("torch")
    for make in (lambda m: m.arange(12.0).reshape(3, 4)[1:, ::2], lambda m: m.zeros(5, dtype=m.int64)[2:]):
        ours, theirs = make(fg), make(torch)
        assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
        assert ours.untyped_storage().tolist() == theirs.untyped_storage().tolist()
        assert (ours.data_ptr() - ours.untyped_storage().data_ptr()) == (
            theirs.data_ptr() - theirs.untyped_storage().data_ptr()
        )
