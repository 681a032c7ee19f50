"""linear_cross_entropy and nn.LinearCrossEntropyLoss: cross entropy of linearly mapped inputs,
checked against the composition it stands for, finite differences and torch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
import ferrograd.nn.functional as F


def composed(x, w, target, bias=None, **kwargs):
    """The reference: logits reshaped to (N, C, *out_features), then cross_entropy."""
    logits = (x @ w.reshape(-1, w.shape[-1]).t()).reshape(*x.shape[:-1], *w.shape[:-1])
    if bias is not None:
        logits = logits + bias
    if kwargs.get("ignore_index") is None:
        kwargs["ignore_index"] = -100
    return F.cross_entropy(logits, target, **kwargs)


@st.composite
def cases(draw):
    batched = draw(st.booleans())
    out_features = draw(st.sampled_from([(), (2,), (2, 3)])) if batched else ()
    n, c, d = draw(st.integers(1, 4)), draw(st.integers(2, 4)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, d) if batched else (d,))
    w = rng.standard_normal((c, *out_features, d))
    bias = rng.standard_normal((c, *out_features)) if draw(st.booleans()) else None
    lead = (n,) if batched else ()
    if draw(st.booleans()):
        target = fg.tensor(rng.integers(0, c, size=(*lead, *out_features)))
    else:
        target = fg.tensor(rng.dirichlet(np.ones(c), size=(*lead, *out_features)), dtype=fg.float64)
        target = target.movedim(-1, len(lead)) if batched else target.reshape(c)
    kwargs = {
        "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
        "label_smoothing": draw(st.sampled_from([0.0, 0.2])),
        "weight": fg.tensor(rng.uniform(0.5, 2, c), dtype=fg.float64) if draw(st.booleans()) else None,
    }
    return x, w, bias, target, kwargs


def tensors(*arrays):
    return [None if a is None else fg.tensor(a, dtype=fg.float64, requires_grad=True) for a in arrays]


@settings(max_examples=40, deadline=None)
@given(cases())
def test_matches_the_composition_and_its_gradients(case):
    x, w, bias, target, kwargs = case
    x, w, bias = tensors(x, w, bias)
    got = F.linear_cross_entropy(x, w, target, linear_bias=bias, **kwargs)
    expect = composed(x, w, target, bias, **kwargs)
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-12, atol=1e-12)
    leaves = [t for t in (x, w, bias) if t is not None]
    got_grads = fg.autograd.grad(got.sum(), leaves)
    expect_grads = fg.autograd.grad(expect.sum(), leaves)
    for a, b in zip(got_grads, expect_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_gradcheck_with_bias_class_weights_and_ignored_targets():
    x, w, b = tensors(*(np.random.default_rng(0).standard_normal(s) for s in ((3, 4), (5, 2, 4), (5, 2))))
    target = fg.tensor([[0, 4], [-100, 2], [1, 1]])
    weight = fg.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=fg.float64)

    def loss(x, w, b):
        return F.linear_cross_entropy(x, w, target, linear_bias=b, weight=weight, ignore_index=-100)

    assert fg.autograd.gradcheck(loss, (x, w, b))
    assert fg.autograd.gradgradcheck(loss, (x, w, b))


def test_the_module_holds_a_flat_linear_and_views_it_per_class():
    fg.manual_seed(0)
    loss_fn = fg.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, label_smoothing=0.1)
    assert loss_fn.linear.weight.shape == (6, 4) and loss_fn.linear.bias.shape == (6,)
    assert "num_classes=3, out_features=(2,), bias=True" in repr(loss_fn)
    x, target = fg.randn(5, 4), fg.randint(0, 3, (5, 2))
    loss = loss_fn(x, target)
    expect = composed(
        x,
        loss_fn.linear.weight.reshape(3, 2, 4),
        target,
        loss_fn.linear.bias.reshape(3, 2),
        label_smoothing=0.1,
    )
    assert abs(loss.item() - expect.item()) < 1e-6
    loss.backward()
    assert loss_fn.linear.weight.grad.shape == (6, 4)


def test_options_are_validated_and_leave_the_result_alone():
    options = fg.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method="aspect_ratio:2")
    assert "batch_chunk_size=2" in repr(options)
    x, w, target = fg.randn(5, 3), fg.randn(4, 3), fg.randint(0, 4, (5,))
    assert (
        F.linear_cross_entropy(x, w, target, options=options).item()
        == F.linear_cross_entropy(x, w, target).item()
    )
    for kwargs, message in [
        ({"acc_policy": "fast"}, "invalid acc_policy: 'fast'"),
        ({"chunking_method": "rows"}, "invalid chunking_method: 'rows'"),
        ({"batch_chunk_size": 0}, "batch_chunk_size must be positive int or None, got 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            fg.nn.LinearCrossEntropyOptions(**kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (((2, 3, 4), (5, 4)), {}, "expected input with dimensionality 1 or 2, got 3"),
        (((2, 4), (4,)), {}, "expected linear_weight with dimensionality at least 2, got 1"),
        (((2, 4), (5, 3)), {}, "expected equal input and linear_weight last dimensions"),
        (((2, 4), (5, 4)), {"linear_bias": (4,)}, r"expected linear_bias shape \(5,\), got \(4,\)"),
        (((4,), (5, 2, 4)), {}, "K-dimensional loss defined by linear_weight shape"),
    ],
)
def test_errors(args, kwargs, message):
    x, w = (fg.randn(*s) for s in args)
    if "linear_bias" in kwargs:
        kwargs = {"linear_bias": fg.randn(*kwargs["linear_bias"])}
    with pytest.raises(RuntimeError, match=message):
        F.linear_cross_entropy(x, w, fg.zeros(2, dtype=fg.int64), **kwargs)
    with pytest.raises(
        RuntimeError, match="ignore_index cannot be specified when target contains probabilities"
    ):
        F.linear_cross_entropy(fg.randn(2, 4), fg.randn(3, 4), fg.rand(2, 3), ignore_index=0)
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(3,\), got \(2,\)"):
        fg.nn.LinearCrossEntropyLoss(4, 3, weight=fg.ones(2))


def test_agrees_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((6, 4)), rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2))
    target = rng.integers(0, 3, (6, 2))
    target[0, 0] = -1
    kwargs = {"ignore_index": -1, "label_smoothing": 0.15, "reduction": "mean"}
    ours = tensors(x, w, b)
    loss = F.linear_cross_entropy(ours[0], ours[1], fg.tensor(target), linear_bias=ours[2], **kwargs)
    loss.backward()
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    expect = torch.nn.functional.linear_cross_entropy(
        theirs[0], theirs[1], torch.tensor(target), linear_bias=theirs[2], **kwargs
    )
    expect.backward()
    assert abs(loss.item() - expect.item()) < 1e-12
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
