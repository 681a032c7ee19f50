"""Ops that change a tensor's storage or layout in place: `x.data = y`, the
in-place shape ops (`t_`, `transpose_`, `squeeze_`, `unsqueeze_`,
`as_strided_`) and `resize_`. The Python object keeps its identity and
autograd record while it reads other elements or another layout."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, check_op, has_torch, shapes, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")

# Each in-place shape op with the out-of-place op it must agree with, for a
# tensor of at least two dims.
RESTRIDES = {
    "t_": (lambda y: y.t_(), lambda y: y.t()),
    "transpose_": (lambda y: y.transpose_(0, -1), lambda y: y.transpose(0, -1)),
    "swapdims_": (lambda y: y.swapdims_(-1, 0), lambda y: y.swapdims(-1, 0)),
    "swapaxes_": (lambda y: y.swapaxes_(1, 0), lambda y: y.swapaxes(1, 0)),
    "unsqueeze_": (lambda y: y.unsqueeze_(1), lambda y: y.unsqueeze(1)),
    "unsqueeze_last": (lambda y: y.unsqueeze_(-1), lambda y: y.unsqueeze(-1)),
    "squeeze_": (lambda y: y.squeeze_(), lambda y: y.squeeze()),
    "squeeze_dim": (lambda y: y.squeeze_(0), lambda y: y.squeeze(0)),
    "as_strided_": (lambda y: y.as_strided_((2,), (1,)), lambda y: y.as_strided((2,), (1,))),
}


def _restrided(name):
    inplace, _ = RESTRIDES[name]

    def program(T, x):
        y = x * 1.5  # a non-leaf, so the op is recorded
        assert inplace(y) is y
        return y * y

    return program


@pytest.mark.parametrize("name", sorted(RESTRIDES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_inplace_shape_ops_match_out_of_place_values_and_gradients(name, data):
    shape = data.draw(shapes(min_dims=2, max_dims=2, min_side=1, max_side=3))
    if name == "as_strided_":
        shape = (max(shape[0], 2), shape[1])
    x = data.draw(arrays(shape))
    inplace, out_of_place = RESTRIDES[name]
    t = fg.tensor(x)
    expected = out_of_place(t)
    version = t._version
    assert inplace(t) is t
    assert t.shape == expected.shape and t.stride() == expected.stride()
    np.testing.assert_array_equal(t.numpy(), expected.numpy())
    assert t._version == version + 1
    # Gradients through the recorded op: finite differences and torch.
    check_op(_restrided(name), x)


def test_restrided_tensor_keeps_sharing_storage_and_counter():
    x = fg.arange(6.0).view(2, 3)
    alias = x.detach()
    x.t_()
    assert x.shape == (3, 2) and x.stride() == (1, 3)
    alias[0, 1] = 10.0  # written through another tensor on the storage
    assert x[1, 0].item() == 10.0
    assert x._version == alias._version


def test_restride_of_a_view_stays_a_view_of_its_base():
    base = fg.randn(4, 6)
    v = base[:2]
    v.t_()
    assert v.shape == (6, 2) and v._base is not None and v._base.data_ptr() == base.data_ptr()
    assert base._version == 1
    v[0, 1] = 5.0
    assert base[1, 0].item() == 5.0


def test_restride_records_history_for_gradients():
    x = fg.randn(2, 3, dtype=fg.float64, requires_grad=True)
    y = x * 2
    y.t_()
    assert y.grad_fn.name() == "TBackward1" and not y.is_leaf and y._base is None
    (y * fg.arange(6.0, dtype=fg.float64).view(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0).reshape(3, 2).T)


def test_restride_of_a_leaf_that_requires_grad_is_refused_but_allowed_under_no_grad():
    x = fg.randn(2, 3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."
    ):
        x.unsqueeze_(0)
    assert x.shape == (2, 3)
    with fg.no_grad():
        x.unsqueeze_(0)
    assert x.shape == (1, 2, 3) and x.is_leaf and x.requires_grad


def test_restride_after_saving_fails_at_backward():
    x = fg.randn(2, 3, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    y.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_restride_errors_leave_the_tensor_as_it_was():
    x = fg.randn(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose_(0, 5)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        fg.randn(2, 2, 2).t_()
    assert x.shape == (2, 3) and x._version == 0


@needs_torch
@pytest.mark.parametrize(
    "program",
    [
        lambda T: T.randn(2, 3, requires_grad=True).t_(),
        lambda T: T.randn(2, 3, requires_grad=True)[0].unsqueeze_(0),
        lambda T: T.randn(2, 3, requires_grad=True).resize_(6),
        lambda T: T.randn(2, 3).resize_(-1, 2),
        lambda T: T.randn(2, 3).transpose_(0, 2),
    ],
)
def test_errors_match_torch(program):
    with pytest.raises((RuntimeError, IndexError)) as ours:
        program(fg)
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        program(torch)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def _shapes_and_versions(T):
    """A program of in-place shape ops; what it observes along the way."""
    seen = []
    x = T.arange(24.0).view(2, 3, 4)
    x.transpose_(0, 2)
    seen.append((tuple(x.shape), x.stride(), x._version))
    x.squeeze_(1) if x.shape[1] == 1 else x.unsqueeze_(1)
    seen.append((tuple(x.shape), x.stride(), x._version))
    x.squeeze_((1,))
    seen.append((tuple(x.shape), x.stride(), x._version, x.is_contiguous()))
    y = T.arange(12.0).view(3, 4)
    y.as_strided_((2, 2), (1, 2), 1)
    seen.append((tuple(y.shape), y.stride(), y.storage_offset(), y.tolist()))
    r = T.arange(6.0)
    r.resize_(2, 2)
    seen.append((tuple(r.shape), r.stride(), r.tolist(), r._version))
    r.resize_as_(T.ones(3))
    seen.append((tuple(r.shape), r.tolist()))
    c = T.zeros(1, 2, 3, 4)
    c.resize_(2, 3, 4, 5, memory_format=T.channels_last)
    seen.append((tuple(c.shape), c.stride()))
    return seen


@needs_torch
def test_programs_of_shape_ops_observe_what_torch_observes():
    assert _shapes_and_versions(fg) == _shapes_and_versions(torch)


def test_resize_shrinks_in_place_and_grows_keeping_the_old_elements():
    x = fg.arange(6.0)
    x.resize_(2, 2)
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 1
    x.resize_(3, 3)
    assert x.shape == (3, 3) and x.view(-1)[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x.fill_(1.0)
    assert x.sum().item() == 9.0
    e = fg.ones(3)
    e.resize_(0)
    assert e.shape == (0,) and e.numel() == 0


def test_resize_of_a_tensor_that_requires_grad_is_refused():
    x = fg.randn(3, requires_grad=True)
    for t in (x, x * 2):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            t.resize_(6)


def test_set_data_replaces_elements_and_keeps_the_autograd_record():
    x = fg.zeros(3, requires_grad=True)
    (x * 2).sum().backward()
    new = fg.ones(5, dtype=fg.float64)
    version = x._version
    x.data = new
    assert x.shape == (5,) and x.dtype == fg.float64 and x.tolist() == [1.0] * 5
    assert x.requires_grad and x.is_leaf and x.grad.tolist() == [2.0, 2.0, 2.0]
    new.add_(1)  # same elements, own counter
    assert x.tolist() == [2.0] * 5 and x._version == version
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0] * 5


def test_set_data_lets_old_graphs_reach_the_new_tensor():
    x = fg.zeros(3, requires_grad=True)
    loss = (x * 2).sum()
    x.data = fg.ones(3)
    loss.backward()
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_set_data_on_parameters_and_modules():
    lin = fg.nn.Linear(2, 2)
    weight = lin.weight
    lin.weight.data = fg.ones(2, 2)
    lin.bias.data = fg.zeros(2)
    assert lin.weight is weight and isinstance(weight, fg.nn.Parameter)
    out = lin(fg.tensor([[1.0, 2.0]]))
    assert out.tolist() == [[3.0, 3.0]]
    out.sum().backward()
    assert lin.weight.grad.tolist() == [[1.0, 2.0], [1.0, 2.0]]
    opt = fg.optim.SGD(lin.parameters(), lr=1.0)
    opt.step()
    assert lin.weight.tolist() == [[0.0, -1.0], [0.0, -1.0]]


def test_set_data_keeps_a_non_leaf_history_and_accepts_its_own_data():
    y = fg.randn(3, requires_grad=True) * 1
    y.data = fg.ones(3)
    assert y.grad_fn.name() == "MulBackward0" and not y.is_leaf
    p = fg.ones(3, requires_grad=True)
    storage = p.data_ptr()
    p.data -= 0.5  # writes through the alias and assigns it back
    assert p.data_ptr() == storage and p.tolist() == [0.5] * 3


def test_set_data_rejects_what_torch_rejects():
    x = fg.randn(3, requires_grad=True)
    for value in (5, None, [1.0]):
        with pytest.raises(
            TypeError, match=f"Variable data has to be a tensor, but got {type(value).__name__}"
        ):
            x.data = value
    with pytest.raises(
        RuntimeError,
        match="data set to a tensor that requires gradients must be floating point or complex dtype",
    ):
        x.data = fg.arange(3)
    i = fg.arange(3)
    i.data = fg.randn(3)  # no gradient: any dtype
    assert i.dtype == fg.float32


def test_set_data_from_a_view_is_no_view():
    h = fg.randn(2, 3)
    row = h[0]
    row.data = fg.zeros(4)
    assert row._base is None and row.shape == (4,)
    assert h.shape == (2, 3) and h.abs().sum().item() > 0


def test_replacing_while_other_threads_compute():
    # Readers take a handle of the tensor the object stands for at the
    # moment; a replacement in between never leaves them a freed one.
    w = fg.ones(256, 256)
    stop = threading.Event()
    errors = []

    def reader():
        try:
            while not stop.is_set():
                s = (w @ w).sum().item()
                assert s in (256.0**3, 4 * 256.0**3, 9 * 256.0**3)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for k in range(200):
        w.data = fg.full((256, 256), float(1 + k % 3))
        w.t_()
    stop.set()
    for t in threads:
        t.join()
    assert not errors


def test_grad_data_assignment_replaces_the_stored_gradient():
    p = fg.ones(3, requires_grad=True)
    (p * 2).sum().backward()
    p.grad.data = fg.full((3,), 7.0)
    assert p.grad.tolist() == [7.0, 7.0, 7.0]
    (p * 1).sum().backward()  # accumulates into the replacement
    assert p.grad.tolist() == [8.0, 8.0, 8.0]


def _converted_module(T):
    lin = T.nn.Linear(3, 2)
    weight = lin.weight
    opt = T.optim.SGD(lin.parameters(), lr=0.5)
    lin(T.ones(1, 3)).sum().backward()
    lin.double()
    assert lin.weight is weight and lin.weight.grad.dtype == T.float64
    opt.step()  # the optimizer holds the module's parameters still
    return lin.weight.dtype == T.float64, type(lin.weight).__name__, lin.weight.requires_grad


def test_module_conversion_keeps_its_parameter_objects():
    assert _converted_module(fg) == (True, "Parameter", True)
    if has_torch:
        assert _converted_module(fg) == _converted_module(torch)


def test_namespace_forms_return_their_input():
    x = fg.arange(6.0)
    assert fg.as_strided_(x, (2, 2), (2, 1)) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert fg.resize_as_(x, fg.ones(3)) is x and x.tolist() == [0.0, 1.0, 2.0]


def test_replacements_from_two_threads_in_anomaly_mode_all_take_effect():
    # Anomaly mode calls into Python while a replacement is made, where the
    # other thread may run: replacements of one object still go one at a time.
    x = fg.randn(2, 3, dtype=fg.float64, requires_grad=True)
    y = x * 1
    rounds = 50

    def transpose_many():
        for _ in range(rounds):
            y.t_()

    with pytest.warns(UserWarning, match="Anomaly Detection"), fg.autograd.detect_anomaly():
        threads = [threading.Thread(target=transpose_many) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert y.shape == (2, 3) and y._version == 2 * rounds
    (y * fg.arange(6.0, dtype=fg.float64).view(2, 3)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(2, 3))


def _set_program(T):
    """`set_` in its forms; every observation must equal torch's."""
    seen = []
    x = T.zeros(2)
    source = T.arange(6.0).reshape(2, 3)
    v = x._version
    assert x.set_(source) is x
    seen.append((x.tolist(), tuple(x.shape), x.stride(), x._version - v, source._version))
    x.add_(1)  # writes the shared elements, counted on x's own counter
    seen.append((source.tolist(), source._version, x._version - v))
    y = T.zeros(3)
    y.set_(T.arange(6.0), 1, (2,), (2,))
    seen.append((y.tolist(), y.stride(), y.storage_offset()))
    z = T.zeros(3)
    z.set_()
    seen.append((tuple(z.shape), z.stride(), z.numel()))
    w = T.empty(0)
    base = T.arange(4.0)
    w.set_(base.untyped_storage(), 2, (2,))
    seen.append(w.tolist())
    w.mul_(10)
    seen.append(base.tolist())
    s = T.empty(0)
    s.set_(source=T.arange(3.0))
    seen.append(s.tolist())
    with T.no_grad():
        leaf = T.zeros(2, requires_grad=True)
        leaf.set_(T.ones(4))
    seen.append((leaf.tolist(), leaf.requires_grad, leaf.is_leaf))
    view = T.zeros(4)[1:3]
    view.set_(T.ones(2))
    seen.append(view.tolist())
    return seen


def test_set_():
    observed = _set_program(fg)
    assert observed[0] == ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], (2, 3), (3, 1), 1, 0)
    assert observed[1] == ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 0, 2)
    assert observed[2] == ([1.0, 3.0], (2,), 1)
    assert observed[4] == [2.0, 3.0] and observed[5] == [0.0, 1.0, 20.0, 30.0]
    if has_torch:
        assert observed == _set_program(torch)


def test_set_ends_a_view():
    # A view given other elements no longer aliases its base, so ferrograd stops treating it
    # as a view (PyTorch keeps reporting the old `_base`).
    base = fg.zeros(4)
    view = base[1:3]
    view.set_(fg.ones(2))
    assert view._base is None
    view.mul_(3)
    assert base.tolist() == [0.0, 0.0, 0.0, 0.0] and view.tolist() == [3.0, 3.0]


@pytest.mark.parametrize(
    "call",
    [
        "M.zeros(2, requires_grad=True).set_(M.ones(3))",
        "M.zeros(2).set_(M.ones(3, dtype=M.float64))",
        "M.zeros(2).set_(5)",
    ],
)
def test_set_errors(call):
    with pytest.raises((RuntimeError, TypeError)) as ours:
        eval(call, {"M": fg})
    if has_torch:
        with pytest.raises((RuntimeError, TypeError)) as theirs:
            eval(call, {"M": torch})
        assert ours.type is theirs.type
        if ours.type is RuntimeError:
            assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_set_beyond_the_storage_is_refused():
    # PyTorch grows the storage; ferrograd storages keep their size (see the user guide).
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        fg.zeros(2).set_(fg.arange(4.0), 1, (4,), (1,))


def test_set_while_recording_refuses_backward_through_it():
    a = fg.randn(3, requires_grad=True)
    b = a * 2
    b.set_(fg.ones(3))
    assert b.requires_grad and b.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::set_ is not implemented"):
        b.sum().backward()
