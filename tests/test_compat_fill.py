"""Smaller PyTorch API pieces (``_compat.py``, ``nn.init``'s deprecated names, ``StackDataset`` and
``WeightedRandomSampler``): values, dtypes and gradients against torch, and torch's errors."""

import re
import warnings

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.utils.data import DataLoader, StackDataset, TensorDataset, WeightedRandomSampler

from helpers import assert_raises_like_torch, check_op, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")
RNG = np.random.default_rng(7)
MODULES = [fg] + ([torch] if has_torch else [])


def rand(*shape):
    return RNG.standard_normal(shape)


def raises_like_torch(fn, kind, message):
    """``fn(T)`` raises ``kind`` with ``message`` (a literal prefix) for ferrograd and torch."""
    assert_raises_like_torch(lambda _F, T: fn(T), kind, re.escape(message))


# ----------------------------------------------------------------------------- attributes


@pytest.mark.parametrize("T", MODULES)
def test_constant_attributes(T):
    x = T.zeros(2, 3)
    for name in "is_sparse is_sparse_csr is_quantized is_meta is_nested is_mkldnn is_xpu is_mps".split():
        assert getattr(x, name) is False, name
    assert x.is_neg() is False and T.is_neg(x) is False
    assert x.resolve_neg() is x and T.resolve_neg(x) is x
    assert x.is_pinned() is False and x.is_shared() is False or T is torch
    assert x.share_memory_() is x
    assert T.is_storage(x) is False and T.is_inference(x) is False


def test_pin_memory_and_is_inference_errors():
    raises_like_torch(lambda T: T.zeros(2).pin_memory(), RuntimeError, "Cannot access accelerator device")
    raises_like_torch(
        lambda T: T.is_inference(1),
        TypeError,
        "is_inference(): argument 'input' (position 1) must be Tensor, not int",
    )


def test_set_flush_denormal_typename():
    # ferrograd never changes the CPU's floating-point mode, so it reports no support.
    assert fg.set_flush_denormal(True) is False and fg.set_flush_denormal(False) is False
    assert fg.typename(fg.zeros(2)) == "ferrograd.FloatTensor"
    assert fg.typename(fg.zeros(2, dtype=fg.int64)) == "ferrograd.LongTensor"
    assert fg.typename(fg.zeros(2, dtype=fg.complex128)) == "ferrograd.ComplexDoubleTensor"
    assert fg.typename(fg.nn.Linear(1, 1)).endswith(".Linear")
    assert fg.typename(fg.nn.Linear) == fg.typename(fg.nn.Linear(1, 1))
    for obj in (1, None, int, len, "s"):
        assert fg.typename(obj) == (torch.typename(obj) if has_torch else fg.typename(obj))
    assert [fg.typename(o) for o in (1, None, int, len)] == ["int", "NoneType", "int", "len"]


# ----------------------------------------------------------------------------- splits and copies


def test_unsafe_splits_match_and_differentiate():
    a = rand(7, 3)
    for fn in (
        lambda T, x: T.cat([p * (i + 1) for i, p in enumerate(x.unsafe_chunk(3))]),
        lambda T, x: T.cat([p * (i + 1) for i, p in enumerate(T.unsafe_chunk(x, 2, dim=1))], 1),
        lambda T, x: T.cat([p * (i + 1) for i, p in enumerate(x.unsafe_split(3))]),
        lambda T, x: T.cat([p.exp() for p in T.unsafe_split(x, 2, 1)], 1),
        lambda T, x: T.cat([p * (i + 1) for i, p in enumerate(x.unsafe_split_with_sizes([2, 5]))]),
        lambda T, x: T.cat([p.sin() for p in T.unsafe_split_with_sizes(x, [1, 2], 1)], 1),
    ):
        check_op(fn, a)
    parts = fg.arange(6.0).unsafe_split(4)
    assert isinstance(parts, tuple) and [p.tolist() for p in parts] == [[0, 1, 2, 3], [4, 5]]


def test_unsafe_split_errors():
    raises_like_torch(
        lambda T: T.zeros(6).unsafe_split([2, 4]),
        TypeError,
        "unsafe_split(): argument 'split_size' (position 1) must be int, not list",
    )
    raises_like_torch(
        lambda T: T.zeros(6).unsafe_chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0"
    )
    raises_like_torch(
        lambda T: T.zeros(6).unsafe_split_with_sizes([2, 3]),
        RuntimeError,
        "split_with_sizes expects split_sizes to sum exactly to 6",
    )


def test_narrow_copy():
    check_op(lambda T, x: x.narrow_copy(1, 1, 2) * 3, rand(3, 4))
    check_op(lambda T, x: T.narrow_copy(x, 0, 1, 2).exp(), rand(3, 4))
    assert fg.arange(5).narrow_copy(0, -2, 2).tolist() == [3, 4]
    x = fg.arange(12.0).reshape(3, 4)
    c = x.narrow_copy(1, 1, 2)
    assert c.is_contiguous() and c.tolist() == [[1, 2], [5, 6], [9, 10]]
    c.fill_(0)
    assert x[0, 1].item() == 1.0  # a copy, not a view
    raises_like_torch(
        lambda T: T.arange(6.0).narrow_copy(0, 5, 2),
        RuntimeError,
        "start (5) + length (2) exceeds dimension size (6).",
    )


# ----------------------------------------------------------------------------- legacy constructor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_new_forms(dtype):
    for T in MODULES:
        x = T.zeros(2, dtype=getattr(T, dtype))
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2, 3).dtype == x.dtype
        assert tuple(x.new(4).shape) == (4,)
        assert tuple(x.new().shape) == (0,) and x.new().dtype == x.dtype
        assert tuple(x.new([]).shape) == (0,)
        data = x.new([1, 0, 1])
        assert data.dtype == x.dtype and data.tolist() == np.array([1, 0, 1]).astype(dtype).tolist()
        assert tuple(x.new(x.new(3, 1).shape).shape) == (3, 1)  # a shape: a size
        assert x.new((3, 1)).tolist() == np.array([3, 1]).astype(dtype).tolist()  # a tuple: data
        assert not x.new([1, 2]).requires_grad


def test_new_from_tensor_is_a_view():
    for T in MODULES:
        x = T.zeros(1)
        t = T.ones(3, requires_grad=True)
        n = x.new(t)
        assert n is not t and n.requires_grad and n.data_ptr() == t.data_ptr()
        (n * 2).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), [2.0, 2.0, 2.0])


def test_new_errors():
    raises_like_torch(
        lambda T: T.zeros(1).new(T.arange(2)), TypeError, "expected TensorOptions(dtype=float, device=cpu"
    )
    raises_like_torch(lambda T: T.zeros(1).new(2.5), TypeError, "new(): data must be a sequence (got float)")
    raises_like_torch(lambda T: T.zeros(1).new("a"), TypeError, "new(): invalid data type 'str'")
    raises_like_torch(
        lambda T: T.zeros(1).new(-1), RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"
    )
    raises_like_torch(
        lambda T: T.zeros(1).new(2, [3]),
        TypeError,
        "new(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple of ints,but got list\"",
    )
    raises_like_torch(
        lambda T: T.zeros(1).new(2, 3, requires_grad=True),
        TypeError,
        "new() received an invalid combination of arguments - got (int, int, requires_grad=bool), but expected one of:",
    )


def test_new_empty_strided():
    for T in MODULES:
        x = T.zeros(1, dtype=T.float64)
        e = x.new_empty_strided((2, 3), (3, 1))
        assert tuple(e.shape) == (2, 3) and e.dtype == T.float64
        assert x.new_empty_strided((2,), (1,), dtype=T.int64).dtype == T.int64
        assert x.new_empty_strided((2,), (1,), requires_grad=True).requires_grad
    raises_like_torch(
        lambda T: T.zeros(1).new_empty_strided((2, 3), (1,)),
        RuntimeError,
        "dimensionality of sizes (2) must match dimensionality of strides (1)",
    )


# ----------------------------------------------------------------------------- apply_ and map_


def element_types(T):
    seen = []
    T.tensor([True, False]).apply_(lambda v: seen.append(type(v)) or v)
    T.arange(2).apply_(lambda v: seen.append(type(v)) or v)
    T.tensor([1j]).apply_(lambda v: seen.append(type(v)) or v)
    return seen


def test_apply_and_map_values():
    for T in MODULES:
        x = T.arange(6.0).reshape(2, 3).t()  # a non-contiguous view
        base = x
        assert x.apply_(lambda v: v * v + 1) is x
        np.testing.assert_array_equal(x.numpy(), (np.arange(6.0).reshape(2, 3).T) ** 2 + 1)
        y = T.ones(3)
        y[1:].apply_(lambda v: 7.0)
        assert y.tolist() == [1.0, 7.0, 7.0]
        assert base.map_(T.tensor([10.0, 20.0]), lambda a, b: a - b).tolist() == [
            [-9, -10],
            [-8, -3],
            [-5, 6],
        ]
        assert T.arange(3).apply_(lambda v: v * 1.7).tolist() == [0, 1, 3]
        seen = element_types(T)
        assert seen == [bool, bool, int, int, complex]
        assert T.tensor([True, True]).apply_(lambda v: 0.0).tolist() == [False, False]
        assert T.tensor([1j]).apply_(lambda v: 2).tolist() == [2 + 0j]


def test_map2_combines_three_tensors_elementwise():
    for T in MODULES:
        a = T.arange(6.0).reshape(2, 3)[:, 1:]  # a non-contiguous view
        out = a.map2_(T.tensor([10.0, 20.0]), T.tensor([[100.0], [200.0]]), lambda v, x, y: v + x + y)
        assert out is a and a.tolist() == [[111.0, 122.0], [214.0, 225.0]]
    assert_raises_like_torch(
        lambda _F, T: T.ones(2).map2_(T.ones(2), T.ones(2, dtype=T.float64), lambda *v: 0),
        TypeError,
        r"map2_: expected \w+\.FloatTensor for argument 'y' \(got \w+\.DoubleTensor\)",
    )
    raises_like_torch(
        lambda T: T.ones(2).map2_(1, T.ones(2), lambda *v: 0),
        TypeError,
        "map2_(): argument 'x' (position 1) must be Tensor, not int",
    )
    raises_like_torch(
        lambda T: T.ones(2).map2_(T.ones(2), T.ones(2, requires_grad=True), lambda *v: 0),
        RuntimeError,
        "Can't call map2_() on Variable that requires grad. Use var.detach().map2_() instead.",
    )


def test_apply_and_map_bump_the_version_counter():
    # ferrograd counts these writes like every in-place op (PyTorch does not for these two).
    x = fg.ones(3)
    v0 = x._version
    x.apply_(lambda v: v + 1)
    v1 = x._version
    x.map_(fg.ones(3), lambda a, b: a + b)
    assert v0 < v1 < x._version and x.tolist() == [3.0, 3.0, 3.0]
    w = fg.ones(3, requires_grad=True)
    h = w.detach()
    y = w * w  # saves w
    h.apply_(lambda v: 5.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_apply_and_map_errors():
    raises_like_torch(
        lambda T: T.ones(2, requires_grad=True).apply_(lambda v: v),
        RuntimeError,
        "Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.",
    )
    raises_like_torch(
        lambda T: T.ones(2).map_(T.ones(2, requires_grad=True), lambda a, b: a),
        RuntimeError,
        "Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.",
    )
    raises_like_torch(
        lambda T: T.ones(2).map_(3, lambda a, b: a),
        TypeError,
        "map_(): argument 'other' (position 1) must be Tensor, not int",
    )
    assert_raises_like_torch(
        lambda _F, T: T.ones(2).map_(T.ones(2, dtype=T.float64), lambda a, b: a),
        TypeError,
        r"map_: expected \w+\.FloatTensor for 'other' \(got \w+\.DoubleTensor\)",
    )
    raises_like_torch(lambda T: T.ones(2).apply_(lambda v: "s"), TypeError, "must be real number, not str")
    raises_like_torch(lambda T: T.ones(2).apply_(lambda v: 1j), TypeError, "must be real number, not complex")
    raises_like_torch(
        lambda T: T.ones(2, dtype=T.int64).apply_(lambda v: None),
        TypeError,
        "'NoneType' object cannot be interpreted as an integer",
    )
    raises_like_torch(
        lambda T: T.ones(2, dtype=T.int64).apply_(lambda v: 2**70),
        ValueError,
        "Overflow when unpacking long long",
    )
    raises_like_torch(lambda T: T.ones(2).apply_(1), TypeError, "'int' object is not callable")
    x = fg.ones(2)
    with pytest.raises(TypeError):
        x.apply_(lambda v: "s")
    assert x.tolist() == [1.0, 1.0]  # nothing written when a value is bad


# ----------------------------------------------------------------------------- top-level forms


def test_zero_fill_index_add_index_put():
    for T in MODULES:
        x = T.ones(2, 3)
        assert T.zero_(x) is x and x.sum().item() == 0
        assert T.fill(T.ones(3, dtype=T.int64), 2.7).tolist() == [2, 2, 2]
        assert T.fill(T.ones(2), T.tensor(4.0)).tolist() == [4.0, 4.0]
        got = T.index_add(T.zeros(3), 0, T.tensor([0, 2, 0]), T.tensor([1.0, 2.0, 3.0]), alpha=2)
        assert got.tolist() == [8.0, 0.0, 4.0]
        got = T.index_put(T.zeros(3), (T.tensor([1]),), T.tensor([5.0]))
        assert got.tolist() == [0.0, 5.0, 0.0]
    for T in MODULES:
        a = T.ones(3, requires_grad=True)
        v = T.tensor(2.0, requires_grad=True)
        out = T.fill(a, v)
        assert out.tolist() == [2.0, 2.0, 2.0]
        (out * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        assert a.grad.tolist() == [0.0, 0.0, 0.0] and v.grad.item() == 6.0
    raises_like_torch(
        lambda T: T.fill(T.ones(3), T.ones(2)),
        RuntimeError,
        "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
    )
    check_op(lambda T, x, y: T.index_add(x, 0, T.tensor([1, 0, 1]), y), rand(2, 3), rand(3, 3))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_range_values_and_dtypes():
    for start, end, step, kw in [
        (0, 3, 1, {}),
        (0, 1, 0.25, {}),
        (3, 0, -1, {}),
        (0, 2.5, 1, {}),
        (0.5, 3, 1, {"dtype": "int64"}),
        (-1, 1, 0.5, {"dtype": "float64"}),
        (1, 1, 1, {}),
    ]:
        got = fg.range(start, end, step, **{k: getattr(fg, v) for k, v in kw.items()})
        want = np.arange(int(start), int(end) + 1) if kw.get("dtype") == "int64" else None
        if want is None:
            want = start + step * np.arange(int(np.floor((end - start) / step)) + 1)
        np.testing.assert_allclose(got.numpy(), want)
        assert got.dtype == getattr(fg, kw.get("dtype", "float32"))
        if has_torch:
            t = torch.range(start, end, step, **{k: getattr(torch, v) for k, v in kw.items()})
            np.testing.assert_allclose(got.numpy(), t.numpy())
            assert str(got.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert fg.range(0, 2, requires_grad=True).requires_grad


def test_range_warns_and_errors():
    for T in MODULES:
        with pytest.warns(UserWarning, match="range is deprecated and will be removed in a future release"):
            T.range(0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(
            lambda T: T.range(3), TypeError, 'range() missing 1 required positional arguments: "end"'
        )
        raises_like_torch(lambda T: T.range(0, 3, 0), RuntimeError, "step must be nonzero")
        raises_like_torch(
            lambda T: T.range(3, 0), RuntimeError, "upper bound and lower bound inconsistent with step sign"
        )
        raises_like_torch(lambda T: T.range(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf")
        raises_like_torch(
            lambda T: T.range(0, 3, dtype=T.bool),
            NotImplementedError,
            "\"range_cpu\" not implemented for 'Bool'",
        )


def test_top_level_losses_match_functional_and_torch():
    a, b, c = rand(4, 3), rand(4, 3), rand(4, 3)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    for reduction in (0, 1, 2):
        kw = {"reduction": reduction}
        check_op(
            lambda T, x, p, n, kw_=kw: T.triplet_margin_loss(x, p, n, 0.5, 2.0, 1e-6, False, **kw_), a, b, c
        )
        check_op(lambda T, x, p, n, kw_=kw: T.triplet_margin_loss(x, p, n, swap=True, **kw_), a, b, c)
        check_op(
            lambda T, x1, x2, kw_=kw: T.margin_ranking_loss(x1, x2, T.tensor(y), 0.3, **kw_), a[:, 0], b[:, 0]
        )
        check_op(lambda T, x, kw_=kw: T.hinge_embedding_loss(x, T.tensor(y), 0.7, **kw_), a[:, 0])
        check_op(lambda T, x1, x2, kw_=kw: T.cosine_embedding_loss(x1, x2, T.tensor(y), 0.1, **kw_), a, b)
        check_op(
            lambda T, x, r=reduction: T.poisson_nll_loss(x, T.tensor(np.abs(b)), True, False, 1e-8, r), a
        )
        check_op(
            lambda T, x, r=reduction: T.poisson_nll_loss(
                x.abs() + 0.1, T.tensor(np.abs(b) * 3), False, True, 1e-8, r
            ),
            a,
        )
    # Left out, the integer reduction means none (PyTorch 2.13's top-level default).
    out = fg.margin_ranking_loss(fg.tensor(a[:, 0]), fg.tensor(b[:, 0]), fg.tensor(y))
    assert tuple(out.shape) == (4,)
    ref = fg.nn.functional.cosine_embedding_loss(fg.tensor(a), fg.tensor(b), fg.tensor(y), reduction="sum")
    np.testing.assert_allclose(
        fg.cosine_embedding_loss(fg.tensor(a), fg.tensor(b), fg.tensor(y), 0.0, 2).numpy(), ref.numpy()
    )
    # The top-level form takes any margin, as PyTorch's does.
    check_op(lambda T, x, p, n: T.triplet_margin_loss(x, p, n, 0.0), a, b, c)
    raises_like_torch(
        lambda T: T.triplet_margin_loss(
            T.ones(2, 3), T.ones(2, 3), T.ones(2, 3), 1.0, 2.0, 1e-6, False, "mean"
        ),
        TypeError,
        "triplet_margin_loss(): argument 'reduction' (position 8) must be int, not str",
    )
    raises_like_torch(
        lambda T: T.poisson_nll_loss(T.ones(2), T.ones(2), True, False, 1e-8, "mean"),
        TypeError,
        "poisson_nll_loss(): argument 'reduction' (position 6) must be int, not str",
    )


def test_bilinear_and_ctc_loss():
    check_op(lambda T, x1, x2, w, b: T.bilinear(x1, x2, w, b), rand(3, 4), rand(3, 2), rand(5, 4, 2), rand(5))
    check_op(lambda T, x1, x2, w: T.bilinear(x1, x2, w), rand(2, 3, 4), rand(2, 3, 2), rand(1, 4, 2))
    logits = rand(6, 2, 4)
    targets = np.array([[1, 2], [3, 3]])
    for reduction in (0, 1, 2):
        check_op(
            lambda T, x, r=reduction: T.ctc_loss(x.log_softmax(2), T.tensor(targets), [6, 5], [2, 2], 0, r),
            logits,
            fd_atol=1e-4,
        )
    out = fg.ctc_loss(
        fg.tensor(logits).log_softmax(2), fg.tensor(targets), fg.tensor([6, 6]), fg.tensor([2, 1])
    )
    assert tuple(out.shape) == (2,)


# ----------------------------------------------------------------------------- sampling


def test_tensor_bernoulli():
    p = fg.tensor([0.0, 1.0, 0.0, 1.0], dtype=fg.float64)
    assert p.bernoulli().tolist() == [0.0, 1.0, 0.0, 1.0] and p.bernoulli().dtype == fg.float64
    assert fg.zeros(3).bernoulli(1.0).tolist() == [1.0, 1.0, 1.0]
    assert fg.arange(3).bernoulli(0.0).tolist() == [0, 0, 0]
    g = fg.Generator().manual_seed(3)
    first = fg.full((200,), 0.3).bernoulli(generator=g)
    again = fg.full((200,), 0.3).bernoulli(generator=fg.Generator().manual_seed(3))
    assert first.tolist() == again.tolist() and 0.15 < first.mean().item() < 0.45
    fg.manual_seed(5)
    a = fg.full((50,), 0.5).bernoulli(0.5)
    fg.manual_seed(5)
    assert a.tolist() == fg.full((50,), 0.5).bernoulli(0.5).tolist()


def test_tensor_bernoulli_autograd_and_errors():
    for T in MODULES:
        for sample in (lambda p: p.bernoulli(), T.bernoulli):
            p = T.full((3,), 0.5, requires_grad=True)
            out = sample(p)
            assert out.requires_grad and out.grad_fn.name() == "BernoulliBackward0"
            out.sum().backward()
            assert p.grad.tolist() == [0.0, 0.0, 0.0]
        for sample in (lambda p: p.bernoulli(0.3), lambda p, T=T: T.bernoulli(p, 0.3)):
            p = T.full((3,), 0.5, requires_grad=True)
            out = sample(p)
            assert out.requires_grad and out.grad_fn.name() == "torch::autograd::NotImplemented"
            with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not implemented"):
                out.sum().backward()
        with T.no_grad():
            assert T.bernoulli(T.full((3,), 0.5, requires_grad=True)).grad_fn is None
    raises_like_torch(
        lambda T: T.zeros(3).bernoulli(T.ones(3)), TypeError, "bernoulli() received an invalid combination"
    )
    raises_like_torch(
        lambda T: T.zeros(3).bernoulli(2.0), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=2"
    )
    raises_like_torch(
        lambda T: T.arange(3).bernoulli(),
        NotImplementedError,
        "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
    )
    raises_like_torch(
        lambda T: T.tensor([1j]).bernoulli(0.5),
        NotImplementedError,
        "\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'",
    )


def test_poisson():
    rates = fg.tensor([0.0, 1.0, 4.0, 50.0], dtype=fg.float64)
    draws = np.stack([fg.poisson(rates).numpy() for _ in range(400)])
    assert fg.poisson(rates).dtype == fg.float64 and (draws[:, 0] == 0).all()
    assert (draws >= 0).all() and (draws == np.round(draws)).all()
    assert (np.abs(draws.mean(0) - [0.0, 1.0, 4.0, 50.0]) <= [0, 0.2, 0.4, 1.5]).all()
    np.testing.assert_allclose(draws.var(0)[1:], [1.0, 4.0, 50.0], rtol=0.3)
    g1, g2 = fg.Generator().manual_seed(11), fg.Generator().manual_seed(11)
    assert fg.poisson(rates, g1).tolist() == fg.poisson(rates, generator=g2).tolist()
    for T in MODULES:
        r = T.tensor([1.0, 2.0], requires_grad=True)
        out = T.poisson(r)
        assert out.requires_grad and out.dtype == T.float32
        out.sum().backward()
        assert r.grad.tolist() == [0.0, 0.0]
    raises_like_torch(
        lambda T: T.poisson(T.tensor([-1.0])),
        RuntimeError,
        "invalid Poisson rate, expected rate to be non-negative",
    )
    raises_like_torch(lambda T: T.poisson(T.tensor([float("nan")])), RuntimeError, "invalid Poisson rate")
    raises_like_torch(
        lambda T: T.poisson(T.tensor([1, 2])),
        NotImplementedError,
        "\"poisson_cpu\" not implemented for 'Long'",
    )


def test_binomial():
    count = fg.tensor([0.0, 10.0, 10.0, 10.0, 20.0])
    prob = fg.tensor([0.5, 0.0, 1.0, 1.5, 0.25])
    out = fg.binomial(count, prob)
    assert out.dtype == fg.float32 and out.tolist()[:4] == [0.0, 0.0, 10.0, 10.0]
    draws = np.stack(
        [
            fg.binomial(fg.full((1,), 20.0, dtype=fg.float64), fg.tensor([0.25], dtype=fg.float64)).numpy()
            for _ in range(400)
        ]
    )
    assert ((draws >= 0) & (draws <= 20)).all() and abs(draws.mean() - 5.0) < 0.5
    assert np.isnan(fg.binomial(fg.tensor([10.0]), fg.tensor([float("nan")])).item())
    assert tuple(fg.binomial(fg.tensor([10.0]), fg.tensor([0.5, 0.2])).shape) == (2,)
    g1, g2 = fg.Generator().manual_seed(2), fg.Generator().manual_seed(2)
    assert fg.binomial(count, prob, g1).tolist() == fg.binomial(count, prob, generator=g2).tolist()
    for T in MODULES:
        c = T.tensor([10.0, 5.0], requires_grad=True)
        sample = T.binomial(c, T.tensor([0.5, 0.2]))
        assert sample.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            sample.sum().backward()
    raises_like_torch(
        lambda T: T.binomial(T.tensor([10]), T.tensor([0.5])),
        ValueError,
        "binomial only supports floating-point dtypes for count, got: Long",
    )
    raises_like_torch(
        lambda T: T.binomial(T.tensor([10.0]), T.tensor([1])),
        ValueError,
        "binomial only supports floating-point dtypes for prob, got: Long",
    )
    raises_like_torch(
        lambda T: T.binomial(T.tensor([10.0]), T.tensor([0.5], dtype=T.float64)),
        RuntimeError,
        "Found dtype Double but expected Float",
    )


# ----------------------------------------------------------------------------- nn.init deprecated names

INIT_NAMES = "uniform normal constant xavier_uniform xavier_normal kaiming_uniform kaiming_normal orthogonal eye dirac sparse"


@pytest.mark.parametrize("name", INIT_NAMES.split())
def test_deprecated_init_names(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (4, 2, 3) if name == "dirac" else (4, 5)
    for T in MODULES:
        old, new = getattr(T.nn.init, name), getattr(T.nn.init, name + "_")
        assert old.__name__ == name and name in T.nn.init.__all__
        T.manual_seed(0)
        expected = new(T.empty(*shape), *args)
        T.manual_seed(0)
        w = T.empty(*shape)
        with pytest.warns(
            FutureWarning,
            match=re.escape(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`."),
        ):
            assert old(w, *args) is w
        np.testing.assert_array_equal(w.numpy(), expected.numpy())


# ----------------------------------------------------------------------------- data


def test_weighted_random_sampler():
    weights = [0.0, 1.0, 0.0, 3.0]
    sampler = WeightedRandomSampler(weights, 400, generator=fg.Generator().manual_seed(1))
    drawn = list(sampler)
    assert len(sampler) == 400 and len(drawn) == 400 and set(drawn) <= {1, 3}
    assert 0.6 < drawn.count(3) / 400 < 0.9
    assert sampler.weights.dtype == fg.float64 and sampler.replacement is True
    again = list(WeightedRandomSampler(weights, 400, generator=fg.Generator().manual_seed(1)))
    assert drawn == again and list(sampler) != drawn  # fresh draws each epoch
    unique = list(WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False))
    assert sorted(unique) == [0, 1, 2]
    loader = DataLoader(
        TensorDataset(fg.arange(4)), batch_size=2, sampler=WeightedRandomSampler([0, 0, 1, 0], 4)
    )
    assert [b[0].tolist() for b in loader] == [[2, 2], [2, 2]]


@pytest.mark.parametrize("module", ["fg", "torch"])
def test_weighted_random_sampler_errors(module):
    if module == "torch" and not has_torch:
        pytest.skip("torch is not installed")
    cls = WeightedRandomSampler if module == "fg" else torch.utils.data.WeightedRandomSampler
    for bad in (0, -1, True, 2.0):
        with pytest.raises(
            ValueError,
            match=re.escape(f"num_samples should be a positive integer value, but got num_samples={bad}"),
        ):
            cls([1.0, 2.0], bad)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        cls([1.0, 2.0], 2, replacement=1)
    with pytest.raises(
        ValueError, match=re.escape("weights should be a 1d sequence but given weights have shape (2, 1)")
    ):
        cls([[1.0], [2.0]], 2)


def test_stack_dataset():
    a, b = TensorDataset(fg.arange(3)), [10, 20, 30]
    tup = StackDataset(a, b)
    assert len(tup) == 3 and tup[1][0][0].item() == 1 and tup[1][1] == 20
    named = StackDataset(x=a, y=b)
    assert named[2]["y"] == 30 and named[2]["x"][0].item() == 2
    assert [s[1] for s in tup.__getitems__([2, 0])] == [30, 10]

    class Batched:
        def __len__(self):
            return 3

        def __getitem__(self, i):
            raise AssertionError("read one by one")

        def __getitems__(self, indices):
            return [i * 100 for i in indices]

    assert StackDataset(b, Batched()).__getitems__([0, 2]) == [(10, 0), (30, 200)]
    assert StackDataset(k=Batched()).__getitems__([1]) == [{"k": 100}]
    loader = DataLoader(StackDataset(x=fg.arange(4.0), y=fg.arange(4)), batch_size=2)
    batches = list(loader)
    assert batches[1]["x"].tolist() == [2.0, 3.0] and batches[1]["y"].dtype == fg.int64

    class Short(Batched):
        def __getitems__(self, indices):
            return [0]

    for T in [fg] + ([torch] if has_torch else []):
        S = T.utils.data.StackDataset
        with pytest.raises(ValueError, match="At least one dataset should be passed"):
            S()
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            S([1, 2], [1])
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            S(x=[1, 2], y=[1])
        with pytest.raises(ValueError, match=re.escape("but both types are given.")):
            S([1], y=[1])
        with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
            S([1, 2, 3], Short()).__getitems__([0, 1])
