"""In-place ops: results, identity, version counters and autograd rules."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, broadcastable_pair, check_op, has_torch, shapes

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

BINARY = {
    "add_": lambda x, y: x.add_(y),
    "add_alpha": lambda x, y: x.add_(y, alpha=-0.3),
    "sub_": lambda x, y: x.sub_(y),
    "sub_alpha": lambda x, y: x.sub_(y, alpha=2),
    "mul_": lambda x, y: x.mul_(y),
    "div_": lambda x, y: x.div_(y * y + 1),
    "iadd": lambda x, y: x.__iadd__(y),
    "isub": lambda x, y: x.__isub__(y),
    "imul": lambda x, y: x.__imul__(y),
    "itruediv": lambda x, y: x.__itruediv__(y + 10),
    "copy_": lambda x, y: x.copy_(y),
    "pow_": lambda x, y: x.add_(3.5).pow_(y),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_binary_inplace_values_and_gradients(name, data):
    sa, sb = data.draw(broadcastable_pair())
    out_shape = np.broadcast_shapes(sa, sb)
    a = data.draw(arrays(out_shape))
    b = data.draw(arrays(sb))
    op = BINARY[name]

    def fn(T, x, y):
        # The in-place op on a non-leaf: the result must differentiate to both.
        z = x * 1
        r = op(z, y)
        assert r is z
        return z

    check_op(fn, a, b)


UNARY = {
    "neg_": lambda x: x.neg_(),
    "abs_": lambda x: x.abs_(),
    "exp_": lambda x: x.exp_(),
    "log_": lambda x: x.add_(3.5).log_(),
    "sqrt_": lambda x: x.add_(3.5).sqrt_(),
    "sin_": lambda x: x.sin_(),
    "cos_": lambda x: x.cos_(),
    "tanh_": lambda x: x.tanh_(),
    "sigmoid_": lambda x: x.sigmoid_(),
    "relu_": lambda x: x.relu_(),
    "clamp_": lambda x: x.clamp_(-1, 1),
    "clamp_min": lambda x: x.clamp_(min=0.5),
    "pow_scalar": lambda x: x.pow_(3),
    "fill_": lambda x: x.fill_(2.5),
    "zero_": lambda x: x.zero_(),
    "masked_fill_": lambda x: x.masked_fill_(x > 0.5, -1.0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_unary_inplace_values_and_gradients(name, data):
    a = data.draw(arrays(data.draw(shapes())))
    if name in ("abs_", "relu_", "clamp_", "clamp_min", "masked_fill_"):
        a = np.where(np.abs(a) < 1e-2, 0.3, a)
        a = np.where(np.abs(np.abs(a) - 1) < 1e-2, 0.3, a)
        a = np.where(np.abs(a - 0.5) < 1e-2, 0.3, a)
    op = UNARY[name]

    def fn(T, x):
        z = x * 1
        assert op(z) is z
        return z * 1

    check_op(fn, a)


def test_returns_self_and_bumps_version():
    x = fg.ones(3)
    v = x._version
    assert x.add_(1) is x and x._version == v + 1
    assert x.mul_(2).sub_(1).div_(3) is x and x._version == v + 4
    y = x
    x += 1
    assert x is y and x._version == v + 5
    d = x.detach()
    d.zero_()
    assert x._version == d._version == v + 6 and (x.numpy() == 0).all()
    view = x.narrow(0, 1, 2)
    view.fill_(7)
    assert x.tolist() == [0.0, 7.0, 7.0] and x._version == view._version


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.ones(3, requires_grad=True).add_(1),
        lambda T: T.ones(3, requires_grad=True).narrow(0, 0, 2).add_(1),
        lambda T: T.ones(3).long().add_(1.5),
        lambda T: T.ones(3).long().div_(2),
        lambda T: T.ones(3).long().exp_(),
        lambda T: T.ones(3).add_(T.ones(2, 3)),
        lambda T: T.ones(3).copy_(T.ones(2, 3)),
        lambda T: T.ones(3).masked_fill_(T.ones(3), 1),
        lambda T: T.ones(3).masked_fill_(T.ones(3).long(), 1),
        lambda T: T.ones(3).clamp_(),
        lambda T: T.zeros(3).narrow(0, 0, 2).detach_(),
    ],
)
def test_errors_match_torch(call):
    with pytest.raises(RuntimeError) as ours:
        call(fg)
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    assert str(ours.value) == str(theirs.value)


def test_modified_saved_output_fails_at_backward():
    x = fg.ones(4, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[ferrograd.FloatTensor [4]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "ferrograd.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def _version_error(T, program, anomaly=False):
    with T.autograd.set_detect_anomaly(anomaly), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as e:
            program(T)
    return str(e.value).replace("torch", "ferrograd")


def _saved_then_written(T, make, write):
    x = T.ones(2, 2, requires_grad=True)
    y = make(x)
    z = y.sin()  # saves y
    write(y)
    z.sum().backward()


def _add_without_grad(T, y):
    # Bumps the version and leaves the history as it was.
    with T.no_grad():
        y.add_(1)


def _inplace_result_written(T, op):
    y = T.ones(3, requires_grad=True).clone()
    getattr(y, op)()  # saves its own result: y at version 1
    y.add_(1)
    y.sum().backward()


@needs_torch
@pytest.mark.parametrize(
    "program",
    [
        lambda T: _saved_then_written(T, lambda x: x * 2, lambda y: y.add_(1)),
        lambda T: _saved_then_written(T, lambda x: x.sum(0), lambda y: y.mul_(2)),
        lambda T: _saved_then_written(T, lambda x: x.clone(), lambda y: y[0].mul_(2)),
        lambda T: _saved_then_written(T, lambda x: x.exp().log1p(), lambda y: _add_without_grad(T, y)),
        lambda T: _inplace_result_written(T, "sigmoid_"),
        lambda T: _inplace_result_written(T, "exp_"),
        lambda T: _inplace_result_written(T, "tanh_"),
    ],
)
@pytest.mark.parametrize("anomaly", [False, True])
def test_version_errors_name_the_operation_and_versions_as_torch(program, anomaly):
    # The node without "Backward", the versions as the written tensor counts
    # them, and the hint for the anomaly mode in force.
    assert _version_error(fg, program, anomaly) == _version_error(torch, program, anomaly)


@needs_torch
def test_grad_fn_names():
    cases = {
        "AddBackward0": lambda T, z: z.add_(1),
        "MulBackward0": lambda T, z: z.mul_(2),
        "ExpBackward0": lambda T, z: z.exp_(),
        "FillBackward2": lambda T, z: z.fill_(1),
        "ZeroBackward0": lambda T, z: z.zero_(),
        "MaskedFillBackward0": lambda T, z: z.masked_fill_(z > 0, 2),
        "CopyBackwards": lambda T, z: z.copy_(T.ones(3)),
        "ClampBackward1": lambda T, z: z.clamp_(0, 1),
    }
    for name, op in cases.items():
        z = fg.ones(3, requires_grad=True) * 1
        op(fg, z)
        assert type(z.grad_fn).__name__ == name
        tz = torch.ones(3, requires_grad=True) * 1
        op(torch, tz)
        assert type(tz.grad_fn).__name__ == name
        assert z.grad_fn.name() == tz.grad_fn.name()


def test_non_requires_grad_self_with_requires_grad_other():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    z = fg.zeros(2)
    z.add_(w * 3)
    assert z.requires_grad and not z.is_leaf
    z.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    z = fg.zeros(2)
    z.copy_(w)
    z.pow(2).sum().backward()
    assert w.grad.tolist() == [5.0, 7.0]


def test_views_under_autograd_rewrite_history_and_work_without():
    x = fg.ones(4, requires_grad=True)
    y = x * 1
    y.narrow(0, 0, 2).mul_(2)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 1.0, 1.0]
    base = fg.zeros(2, 3)
    base.t().add_(fg.tensor([1.0, 2.0]))
    assert base.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    with fg.no_grad():
        x.narrow(0, 1, 2).mul_(5)
        x.add_(1)
    assert x.tolist() == [2.0, 6.0, 6.0, 2.0]


def test_inplace_saving_its_result_detects_later_writes():
    x = fg.ones(3, requires_grad=True)
    y = x * 1
    y.exp_()
    y.add_(1)  # exp_ saved y itself, now modified
    with pytest.raises(RuntimeError, match="which is output 0 of Exp, is at version 2; expected version 1"):
        y.sum().backward()
    z = x * 1
    z.exp_()
    z.sum().backward()  # unmodified since: fine
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, np.e), rtol=1e-6)


def test_detach_():
    x = fg.ones(2, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


@needs_torch
@pytest.mark.parametrize("n", [5, 100003])
def test_sgd_update_matches_torch_bitwise(n):
    rng = np.random.default_rng(0)
    p0, g0, b0 = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    res = []
    for T in (fg, torch):
        p, g, buf = T.tensor(p0.copy()), T.tensor(g0.copy()), T.tensor(b0.copy())
        for _ in range(3):
            buf.mul_(0.9).add_(g, alpha=1 - 0.1)
            p.add_(buf, alpha=-0.01)
            p.sub_(g, alpha=0.003)
            p.div_(1.0001)
        res.append(p.numpy().copy())
    np.testing.assert_array_equal(res[0], res[1])


def test_copy_converts_and_broadcasts():
    x = fg.zeros(2, 3, dtype=fg.int64)
    x.copy_(fg.tensor([1.7, 2.2, -3.9]))
    assert x.tolist() == [[1, 2, -3], [1, 2, -3]]
    y = fg.arange(6.0).view(2, 3)
    y.copy_(y.t().t() * 2)
    assert y.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_integer_inplace():
    x = fg.arange(5)
    x.add_(2).mul_(3)
    assert x.tolist() == [6, 9, 12, 15, 18] and x.dtype == fg.int64
    x.masked_fill_(x > 10, 0)
    assert x.tolist() == [6, 9, 0, 0, 0]
