"""In-place ops on views and bases: CopySlices, regenerated view histories,
torch's errors, index assignment, index_add_, `.data`, `_base`, `_version`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, check_op, has_torch

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


def errors_of(call):
    """The message `call(T)` raises, for ferrograd and (when importable) torch."""
    with pytest.raises(RuntimeError) as ours:
        call(fg)
    if has_torch:
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        assert str(ours.value) == str(theirs.value)
    return str(ours.value)


# --- history rewriting -------------------------------------------------------


def test_inplace_on_view_rewrites_base_history():
    x = fg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x * 1
    v = b[1:3]
    assert v.grad_fn.name() == "SliceBackward0" and v._base is not None
    v.mul_(3)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert b.tolist() == [1.0, 6.0, 9.0, 4.0]
    assert v._version == b._version == 1
    (b * fg.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 30.0, 300.0, 1000.0]


def test_gradient_through_view_reaches_other_operand():
    x = fg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = fg.tensor(2.0, requires_grad=True)
    b = x * 3
    b[0].mul_(w)
    b.sum().backward()
    assert x.grad.tolist() == [[6.0, 6.0], [3.0, 3.0]]
    assert w.grad.item() == 9.0
    # exp saves its result: writing into it (even through a view) is caught.
    b = x.exp()
    b[0].mul_(w)
    with pytest.raises(RuntimeError, match="which is output 0 of Exp, is at version 1"):
        b.sum().backward()


def test_chained_views_share_the_root_base():
    x = fg.arange(12.0).reshape(3, 4).requires_grad_()
    b = x * 1
    v = b[1:]
    vv = v.t()[::2]
    assert vv._base is not None and vv._base.data_ptr() == b.data_ptr()
    assert vv._base.shape == (3, 4)
    vv.zero_()
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    (b * b).sum().backward()
    expected = 2 * np.arange(12.0).reshape(3, 4)
    expected[1:, ::2] = 0
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_views_see_inplace_on_base_and_regenerate():
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    v = b[:2]
    w = v.unsqueeze(0)
    b.mul_(x)
    assert v.tolist() == [1.0, 4.0] and w.tolist() == [[1.0, 4.0]]
    assert v.grad_fn.name() == "AsStridedBackward0"
    (v.sum() + 10 * w.sum()).backward()
    # v = x[:2]**2 read twice (weights 1 and 10).
    assert x.grad.tolist() == [22.0, 44.0, 0.0]


def test_view_of_tensor_without_grad_gets_history_from_other_operand():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    b = fg.zeros(4)
    v = b[1:3]
    v.copy_(w * 3)
    assert b.requires_grad and b.grad_fn.name() == "torch::autograd::CopySlices"
    assert v.requires_grad and v.grad_fn.name() == "AsStridedBackward0"
    (b * fg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert w.grad.tolist() == [6.0, 9.0]


def test_saved_view_modified_through_base_fails():
    x = fg.ones(4, requires_grad=True)
    b = x * 1
    v = b[:2]
    y = v.sin()
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_inplace_through_views_against_finite_differences(data):
    a = data.draw(arrays((3, 4)))
    b = data.draw(arrays((2,)))
    op = data.draw(st.sampled_from(["mul_", "add_", "copy_", "sin_", "setitem"]))

    def fn(T, x, y):
        z = x * 1
        v = z[1:3, ::2]  # shape (2, 2): y broadcasts along rows
        col = z.t()[1]
        if op == "setitem":
            z[0, 1:3] = y
        elif op == "sin_":
            v.sin_()
        else:
            getattr(v, op)(y)
        col.mul_(y.sum())
        return z * col.unsqueeze(0).t()

    check_op(fn, a, b)


# Views written in place, each as a function of the base: the windows that
# CopySlices moves gradients through by strided copies.
VIEW_KINDS = {
    "strided_rows": lambda z: z[1::2],
    "select_last": lambda z: z.select(-1, z.shape[-1] - 1),
    "transpose": lambda z: z.transpose(0, -1),
    "flat_view": lambda z: z.view(-1),
    "reshape_pairs": lambda z: z.reshape(z.shape[0], -1),
    "narrow_then_step": lambda z: z.narrow(-1, 1, z.shape[-1] - 1)[..., ::2],
    "diagonal": lambda z: z.reshape(z.shape[0], -1).diagonal(),
    "unsqueeze_slice": lambda z: z.unsqueeze(0)[:, :, 1:],
}
INPLACE_OPS = {
    "mul_": lambda v, y: v.mul_(y),
    "add_scaled": lambda v, y: v.add_(y, alpha=-0.5),
    "sin_": lambda v, y: v.sin_(),
    "copy_": lambda v, y: v.copy_(y * 2),
    "tanh_": lambda v, y: v.tanh_(),
}


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(2, 4), min_size=2, max_size=4).map(tuple),
    view=st.sampled_from(sorted(VIEW_KINDS)),
    op=st.sampled_from(sorted(INPLACE_OPS)),
    data=st.data(),
)
def test_inplace_on_any_view_of_a_non_leaf(shape, view, op, data):
    a = data.draw(arrays(shape))
    b = data.draw(arrays(shape))

    def fn(T, x, w):
        z = x * w
        v = VIEW_KINDS[view](z)
        INPLACE_OPS[op](v, VIEW_KINDS[view](w).cos())
        # The base's new history joins its untouched elements to the
        # written ones; both are reused below.
        return z * x + v.sum()

    check_op(fn, a, b)


@settings(max_examples=20, deadline=None)
@given(view=st.sampled_from(sorted(VIEW_KINDS)), data=st.data())
def test_second_order_through_inplace_on_views(view, data):
    a = data.draw(arrays((3, 4, 2), low=-1.0, high=1.0))

    def fn(x):
        z = x * x
        VIEW_KINDS[view](z).mul_(x.sum())
        return z.tanh()

    x = fg.tensor(a, requires_grad=True)
    assert fg.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("view", sorted(VIEW_KINDS))
def test_inplace_on_views_without_grad_writes_the_base(view):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 5))
    z = fg.tensor(a)
    v = VIEW_KINDS[view](z)
    v.mul_(3.0)
    v.add_(1.0)
    v.relu_()
    # The same view of the elements' flat indices tells which were written.
    covered = VIEW_KINDS[view](fg.arange(a.size).reshape(a.shape)).numpy().ravel()
    expected = a.copy().ravel()
    expected[covered] = np.maximum(expected[covered] * 3.0 + 1.0, 0.0)
    expected = expected.reshape(a.shape)
    np.testing.assert_array_equal(z.numpy(), expected)
    assert z._version == 3


def test_regenerated_history_of_an_expanded_view():
    # An expanded view covers its base's elements several times: its
    # gradient adds up at each of them.
    x = fg.tensor([[1.0], [2.0]], requires_grad=True)
    z = x * 1
    e = z.expand(2, 3)
    z.mul_(2)
    assert e.grad_fn.name() == "AsStridedBackward0"
    (e * fg.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[12.0], [12.0]])


@needs_torch
def test_double_backward_through_copy_slices():
    for T in (fg, torch):
        x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
        b = x * x
        b[1:].mul_(x[:2])
        (g,) = T.autograd.grad(b.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        if T is fg:
            ours = (g.detach().numpy(), gg.numpy())
        else:
            np.testing.assert_allclose(ours[0], g.detach().numpy())
            np.testing.assert_allclose(ours[1], gg.numpy())


# --- errors -------------------------------------------------------------------------


def test_leaf_errors():
    assert errors_of(lambda T: T.ones(3, requires_grad=True).mul_(2)) == (
        "a leaf Variable that requires grad is being used in an in-place operation."
    )
    assert errors_of(lambda T: T.ones(3, requires_grad=True)[1:].mul_(2)) == (
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )
    assert errors_of(lambda T: T.ones(3, 2, requires_grad=True).t()[0].add_(1)).startswith("a view of a leaf")

    def setitem(T):
        x = T.ones(3, requires_grad=True)
        x[0] = 2.0

    assert errors_of(setitem).startswith("a view of a leaf")


def test_no_grad_view_error():
    def call(T):
        b = T.ones(3, requires_grad=True) * 1
        with T.no_grad():
            v = b[:2]
        v.mul_(2)

    assert errors_of(call).startswith("A view was created in no_grad mode and is being modified inplace")

    def other_requires_grad(T):
        b = T.ones(3)
        with T.no_grad():
            v = b[:2]
        v.mul_(T.ones(2, requires_grad=True))

    errors_of(other_requires_grad)

    # Both inside no_grad: allowed and untracked.
    b = fg.ones(3, requires_grad=True) * 1
    with fg.no_grad():
        v = b[:2]
        v.mul_(2)
    assert b.tolist() == [2.0, 2.0, 1.0] and b.grad_fn.name() == "MulBackward0"


@pytest.mark.parametrize("base_kind", ["leaf", "non-leaf", "no grad", "detached"])
@pytest.mark.parametrize("view", [lambda t: t[:2], lambda t: t.t(), lambda t: t.view(-1)])
def test_views_made_under_no_grad_require_grad_as_their_base(base_kind, view):
    """Such a view requires grad when its base does, has no history, and ops
    on it are recorded while the gradient they send it is dropped."""

    def run(T):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=base_kind != "no grad")
        base = {"leaf": x, "non-leaf": x * 1, "no grad": x, "detached": x.detach()}[base_kind]
        with T.no_grad():
            v = view(base)
        y = (v * 2).sum()
        seen = [v.requires_grad, v.is_leaf, v.grad_fn is None, y.requires_grad]
        if y.requires_grad:
            y.backward()
            seen += [x.grad is None, v.grad is None]
        return seen

    expected = {"leaf": True, "non-leaf": True}.get(base_kind, False)
    ours = run(fg)
    assert ours[0] is expected and ours[1] and ours[2] and ours[3] is expected
    if expected:
        assert ours[4:] == [True, True]
    if has_torch:
        assert ours == run(torch)


def test_a_view_follows_its_base_starting_to_require_grad():
    x = fg.zeros(3)
    v = x[1:]
    assert not v.requires_grad
    x.requires_grad_()
    assert v.requires_grad and v.grad_fn is None
    # A view of a leaf that requires grad is not written in place.
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        v.mul_(2)


@pytest.mark.parametrize(
    "split",
    [
        lambda t: t.unbind(0)[1],
        lambda t: t.split(1)[2],
        lambda t: t.split([1, 2])[1],
        lambda t: t.chunk(3)[0],
    ],
)
def test_multi_view_output_error(split):
    def call(T):
        split(T.ones(3, 2, requires_grad=True) * 1).mul_(2)

    msg = errors_of(call)
    assert (
        "is a view and is being modified inplace. This view is the output of a function that returns multiple views."
        in msg
    )
    # Without autograd the write goes through.
    b = fg.zeros(3, 2)
    split(b).fill_(1)
    assert b.sum().item() > 0


def test_overlapping_write_error():
    errors_of(lambda T: T.zeros(1).expand(3).add_(1))

    def partial(T):
        a = T.arange(4.0).reshape(2, 2)
        a.mul_(a.t())

    assert errors_of(partial).startswith("unsupported operation: some elements of the input tensor")
    a = fg.arange(4.0)
    a.add_(a.detach())  # the same memory exactly: allowed
    a[:2].add_(a[2:])  # disjoint: allowed
    assert a.tolist() == [4.0, 8.0, 4.0, 6.0]


# --- index assignment and index_add_ ------------------------------------------


@needs_torch
@pytest.mark.parametrize(
    "assign, name",
    [
        (lambda T, z, v: z.__setitem__(slice(1, 3), v[:2]), "CopySlices"),
        (lambda T, z, v: z.__setitem__(T.tensor([0, 3]), v[:2]), "IndexPutBackward0"),
        (lambda T, z, v: z.__setitem__(z > 0, v.sum()), "IndexPutBackward0"),
        (lambda T, z, v: z.__setitem__(1, v[0]), "CopySlices"),
        (lambda T, z, v: z.index_put_((T.tensor([1, 1]),), v[:2], accumulate=True), "IndexPutBackward0"),
    ],
)
def test_setitem_records_and_differentiates(assign, name):
    x0 = np.array([0.5, -1.0, 2.0, -0.25])
    v0 = np.array([3.0, 4.0, 5.0])
    grads = []
    for T in (fg, torch):
        x = T.tensor(x0, requires_grad=True)
        v = T.tensor(v0, requires_grad=True)
        z = x * 2
        assign(T, z, v)
        node = type(z.grad_fn).__name__
        assert node == name
        (z * T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)).sum().backward()
        grads.append((x.grad.numpy(), v.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_index_add_gradients(data):
    a = data.draw(arrays((4, 3)))
    s = data.draw(arrays((3, 3)))
    s2 = data.draw(arrays((4, 2)))
    idx = data.draw(st.lists(st.integers(0, 2), min_size=3, max_size=3))
    alpha = data.draw(st.sampled_from([1, -2.5]))

    def inplace(T, x, y):
        z = x * 1
        z.index_add_(0, T.tensor(idx), y, alpha=alpha)
        return z

    def out_of_place(T, x, y):
        return x.index_add(1, T.tensor(idx[:2]), y, alpha=alpha)

    check_op(inplace, a, s)
    check_op(out_of_place, a, s2)
    z = fg.tensor(a, requires_grad=True) * 1
    z.index_add_(0, fg.tensor(idx), fg.tensor(s))
    assert z.grad_fn.name() == "IndexAddBackward0"


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.zeros(3, 4).index_add_(0, T.tensor([0.0, 1.0]), T.ones(2, 4)),
        lambda T: T.zeros(3, 4).index_add_(0, T.tensor([0, 1, 2]), T.ones(2, 4)),
        lambda T: T.zeros(3, 4).index_add_(0, T.tensor([0, 1]), T.ones(2, 3)),
        lambda T: T.zeros(3, 4).index_add_(0, T.tensor([0, 5]), T.ones(2, 4)),
        lambda T: T.zeros(3, 4).index_add_(0, T.tensor([0, 1]), T.ones(2, 4, dtype=T.float64)),
    ],
)
def test_index_add_errors_match_torch(call):
    errors_of(call)


def test_clamp_masked_fill_on_views():
    x = fg.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
    b = x * 1
    b[1:].clamp_(-1, 1)
    b[:3].masked_fill_(b[:3] < 0, 0.0)
    b.sum().backward()
    assert b.tolist() == [0.0, 0.0, 0.5, 1.0]
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0]


# --- .data, _base, _version ------------------------------------------------------


def test_data_shares_storage_not_version_or_history():
    x = fg.ones(3, requires_grad=True)
    y = x * 2
    d = y.data
    assert not d.requires_grad and d.grad_fn is None and d._base is None
    assert d.data_ptr() == y.data_ptr()
    v0 = y._version
    d.add_(1)  # the footgun: y's version does not change
    assert y._version == v0 and d._version == 1
    assert y.tolist() == [3.0, 3.0, 3.0]
    y.sum().backward()  # y's saved state was not invalidated
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    det = y.detach()
    det.add_(1)
    assert y._version == v0 + 1 and det._base is None


def _sgd_through_data(T):
    """The update of older training code: `p.data -= lr * p.grad` writes
    through the alias `p.data` and then assigns the alias back."""
    p = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (p * p).sum().backward()
    ptr, version = p.data_ptr(), p._version
    p.data -= 0.25 * p.grad
    p.data *= 3
    p.data = p.data
    assert p.data_ptr() == ptr and p.is_leaf and p.requires_grad
    return p.tolist(), p._version - version


def test_data_assignment_of_its_own_alias_keeps_the_update():
    assert _sgd_through_data(fg) == ([1.5, 3.0, 4.5], 0)


@needs_torch
def test_data_assignment_of_its_own_alias_matches_torch():
    assert _sgd_through_data(fg) == _sgd_through_data(torch)


def _data_replaced(T, replacement):
    """What a parameter reads after `p.data = replacement(T, p)`."""
    p = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (p * 2).sum().backward()
    p.data = replacement(T, p)
    return (
        p.tolist(),
        str(p.dtype).split(".")[-1],
        tuple(p.shape),
        p._version,
        p.requires_grad,
        p.grad.tolist(),
    )


DATA_REPLACEMENTS = [
    lambda T, p: T.zeros(3),
    lambda T, p: p.data[:2],
    lambda T, p: p.data.double(),
]


@pytest.mark.parametrize("replacement", DATA_REPLACEMENTS)
def test_data_assignment_of_other_elements_takes_them(replacement):
    expected = replacement(fg, fg.tensor([1.0, 2.0, 3.0]))
    values, _, shape, version, requires_grad, grad = _data_replaced(fg, replacement)
    assert values == expected.tolist() and shape == tuple(expected.shape)
    assert version == 0 and requires_grad and grad == [2.0, 2.0, 2.0]


@needs_torch
@pytest.mark.parametrize("replacement", DATA_REPLACEMENTS)
def test_data_assignment_of_other_elements_matches_torch(replacement):
    assert _data_replaced(fg, replacement) == _data_replaced(torch, replacement)


def test_data_assignment_of_a_non_tensor_is_a_type_error():
    p = fg.ones(2)
    with pytest.raises(TypeError):
        p.data = [0.0, 0.0]


def test_base_and_version():
    b = fg.zeros(2, 3)
    assert b._base is None
    v = b[0]
    vv = v[1:]
    assert vv._base.data_ptr() == b.data_ptr() and vv._base.shape == (2, 3)
    assert b._version == 0
    vv.add_(1)
    b[1] = 5.0
    b += 1
    with fg.no_grad():
        b.mul_(2)
    assert b._version == v._version == vv._version == 4
    assert b.tolist() == [[2.0, 4.0, 4.0], [12.0, 12.0, 12.0]]


@needs_torch
def test_version_counts_match_torch():
    def program(T):
        b = T.zeros(4)
        v = b[1:]
        v.add_(1)
        b[0] = 2.0
        b[T.tensor([1, 2])] = 3.0
        b.index_add_(0, T.tensor([0]), T.ones(1))
        b.clamp_(0, 2)
        b.masked_fill_(b > 1, 0.5)
        return b._version, v._version

    assert program(fg) == program(torch)


@needs_torch
def test_setitem_with_full_slice_and_index_is_one_index_put():
    grads = []
    for T in (fg, torch):
        x = T.arange(12.0, dtype=T.float64).reshape(4, 3).requires_grad_()
        v = T.tensor([[1.0], [2.0], [3.0], [4.0]], dtype=T.float64, requires_grad=True)
        z = x * 1
        z[:, T.tensor([0, 2])] = v
        node = type(z.grad_fn).__name__
        assert node == "IndexPutBackward0"
        (z * z).sum().backward()
        grads.append((x.grad.numpy(), v.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])
