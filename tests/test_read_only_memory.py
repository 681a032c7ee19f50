"""Tensors over read-only memory (a non-writable NumPy array, a read-only mmap, bytes):
reads and out-of-place ops work, every in-place write raises instead of writing."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ferrograd as fg

READ_ONLY = "memory is read-only"


def read_only_array(values, dtype=np.float64):
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


def quiet_from_numpy(array):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fg.from_numpy(array)


IN_PLACE_WRITES = {
    "add_": lambda t: t.add_(1),
    "mul_ on a view": lambda t: t[1:].mul_(2),
    "fill_": lambda t: t.fill_(0),
    "zero_": lambda t: t.zero_(),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "setitem by mask": lambda t: t.__setitem__(t > 0, 5.0),
    "index_put_": lambda t: t.index_put_((fg.tensor([0]),), fg.tensor([9.0], dtype=fg.float64)),
    "copy_": lambda t: t.copy_(fg.ones(3, dtype=fg.float64)),
    "normal_": lambda t: t.normal_(),
    "scatter_": lambda t: t.scatter_(0, fg.tensor([1]), fg.tensor([4.0], dtype=fg.float64)),
    "clamp_": lambda t: t.clamp_(max=0.5),
}


@pytest.mark.parametrize("write", IN_PLACE_WRITES.values(), ids=IN_PLACE_WRITES.keys())
def test_in_place_writes_raise_and_change_nothing(write):
    array = read_only_array([1.0, 2.0, 3.0])
    t = quiet_from_numpy(array)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        write(t)
    assert array.tolist() == [1.0, 2.0, 3.0]
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_read_only_complex_memory_refuses_writes_through_its_real_view():
    t = quiet_from_numpy(read_only_array([1 + 2j, 3 - 1j], dtype=np.complex128))
    with pytest.raises(RuntimeError, match=READ_ONLY):
        fg.view_as_real(t).add_(1)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        t.real.zero_()
    assert t.tolist() == [1 + 2j, 3 - 1j]


def test_reads_and_out_of_place_ops_work_and_copies_are_writable():
    array = read_only_array([[1.0, 2.0], [3.0, 4.0]])
    t = quiet_from_numpy(array)
    assert (t * 2 + 1).tolist() == [[3.0, 5.0], [7.0, 9.0]]
    assert (t @ t).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert t.t().contiguous().tolist() == [[1.0, 3.0], [2.0, 4.0]]
    copy = t.clone()
    copy.add_(1)
    assert copy.tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert array.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_numpy_view_of_a_read_only_tensor_is_read_only():
    t = quiet_from_numpy(read_only_array([1.0, 2.0]))
    view = t.numpy()
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 7.0
    assert fg.ones(2).numpy().flags.writeable


def test_a_read_only_view_still_sees_writes_through_its_writable_base():
    base = np.zeros(3)
    view = base.view()
    view.flags.writeable = False
    t = quiet_from_numpy(view)
    base[1] = 5.0
    assert t.tolist() == [0.0, 5.0, 0.0]
    with pytest.raises(RuntimeError, match=READ_ONLY):
        t.add_(1)


def test_gradients_flow_through_read_only_leaves_and_accumulate_beside_a_read_only_grad():
    x = quiet_from_numpy(read_only_array([1.0, 2.0, 3.0])).requires_grad_()
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    x.grad = quiet_from_numpy(read_only_array([10.0, 10.0, 10.0]))
    (x * x).sum().backward()
    # The read-only gradient is replaced by the sum, not written to.
    assert x.grad.tolist() == [12.0, 14.0, 16.0]
    assert x.grad.numpy().flags.writeable


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_reads_a_read_only_grad_and_refuses_a_read_only_parameter(momentum):
    p = fg.nn.Parameter(fg.ones(4, dtype=fg.float64))
    p.grad = quiet_from_numpy(read_only_array([1.0, 2.0, 3.0, 4.0]))
    fg.optim.SGD([p], lr=0.5, momentum=momentum).step()
    assert p.tolist() == [0.5, 0.0, -0.5, -1.0]
    frozen = fg.nn.Parameter(quiet_from_numpy(read_only_array([1.0, 1.0])))
    frozen.grad = fg.ones(2, dtype=fg.float64)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        fg.optim.SGD([frozen], lr=0.5, momentum=momentum).step()
    assert frozen.tolist() == [1.0, 1.0]


def test_frombuffer_over_bytes_refuses_writes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = fg.frombuffer(b"\x01\x00\x00\x00\x02\x00\x00\x00", dtype=fg.int32)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        t[0] = 3
    assert t.tolist() == [1, 2]


def run_fresh(code):
    """Runs ``code`` in a new interpreter (a fresh warn-once flag; a crash fails only it)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_from_numpy_warns_once_per_program_for_non_writable_arrays():
    result = run_fresh(
        """
        import warnings, numpy as np, ferrograd as fg
        a = np.zeros(2); a.flags.writeable = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fg.from_numpy(np.zeros(2))
            fg.from_numpy(a)
            fg.from_numpy(a)
            fg.as_tensor(a)
        print([str(w.message)[:37] for w in caught])
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['The given NumPy array is not writable']"


def test_writing_to_a_read_only_memory_map_raises_instead_of_crashing(tmp_path):
    path = tmp_path / "values.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    result = run_fresh(
        f"""
        import warnings, numpy as np, ferrograd as fg
        warnings.simplefilter("ignore")
        t = fg.from_numpy(np.memmap({str(path)!r}, dtype=np.float32, mode="r"))
        for write in (lambda: t.add_(1), lambda: t.__setitem__(0, 9.0), lambda: t.uniform_()):
            try:
                write()
            except RuntimeError as e:
                print("refused" if "read-only" in str(e) else e)
        print(t.tolist())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:4] == ["refused", "refused", "refused", "[0.0, 1.0, 2.0, 3.0]"]
