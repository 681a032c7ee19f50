"""Lazy modules and CTC loss against torch.

Lazy modules: the placeholders before the first forward (state_dict, repr, errors), the
inferred shapes and the class they become, training with an optimizer built after a dry run,
loading a state_dict into a lazy module. F.ctc_loss / nn.CTCLoss: values and gradients for
padded and concatenated targets, every reduction, zero_infinity, unbatched input and the
argument errors."""

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import nn

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")

LAZY_CASES = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"groups": 2, "stride": 2}, (2, 4, 6, 6)),
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (2, 3), {"bias": False}, (3, 4, 4)),
    ("LazyBatchNorm1d", (), {}, (6, 3)),
    ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"affine": False}, (2, 3, 2, 2, 2)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(LAZY_CASES)]


def describe_state(state):
    return [
        (k, type(v).__name__, None if "Uninitialized" in type(v).__name__ else tuple(v.shape))
        for k, v in state.items()
    ]


@needs_torch
@pytest.mark.parametrize("name,args,kwargs,shape", LAZY_CASES, ids=IDS)
def test_lazy_module_initialises_like_torch(name, args, kwargs, shape):
    ref = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    assert describe_state(ours.state_dict()) == describe_state(ref.state_dict())
    assert ours.has_uninitialized_params() and ref.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape)
    ref_out = ref(torch.tensor(x, dtype=torch.float32))
    ours(fg.tensor(x, dtype=fg.float32))
    assert type(ours).__name__ == type(ref).__name__
    assert not ours.has_uninitialized_params() if hasattr(ours, "has_uninitialized_params") else True
    assert describe_state(ours.state_dict()) == describe_state(ref.state_dict())
    assert repr(ours) == repr(ref)
    # With torch's values, the same forward and running statistics.
    ours.load_state_dict({k: fg.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    out = ours(fg.tensor(x, dtype=fg.float32))
    ref_out = ref(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    for key, value in ref.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("name,args,kwargs,shape", [c for c in LAZY_CASES if "Instance" not in c[0]])
def test_loading_a_state_dict_into_a_lazy_module_matches_torch(name, args, kwargs, shape):
    source = getattr(torch.nn, name)(*args, **kwargs)
    x = np.random.default_rng(2).standard_normal(shape)
    source(torch.tensor(x, dtype=torch.float32))
    ref = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    ref.load_state_dict(source.state_dict())
    ours.load_state_dict({k: fg.tensor(v.numpy()) for k, v in source.state_dict().items()})
    assert describe_state(ours.state_dict()) == describe_state(ref.state_dict())
    assert type(ours).__name__ == type(ref).__name__  # still lazy until a forward
    ours.eval()
    ref.eval()
    out = ours(fg.tensor(x, dtype=fg.float32))
    ref_out = ref(torch.tensor(x, dtype=torch.float32))
    assert type(ours).__name__ == type(ref).__name__
    assert repr(ours) == repr(ref)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "Adafactor"])
def test_optimizer_built_after_a_dry_run_trains_like_torch(optimizer):
    def build(T):
        d = T.float64
        net = T.nn.Sequential(
            T.nn.LazyConv1d(4, 3, bias=False, dtype=d),
            T.nn.LazyBatchNorm1d(dtype=d),
            T.nn.Flatten(),
            T.nn.LazyLinear(2, dtype=d),
        )
        net(T.zeros(2, 3, 6, dtype=T.float64))  # dry run
        return net

    ref, ours = build(torch), build(fg)
    ours.load_state_dict({k: fg.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in ref]
    opts = [getattr(T.optim, optimizer)(net.parameters(), lr=0.05) for T, net in ((torch, ref), (fg, ours))]
    rng = np.random.default_rng(1)
    for _ in range(4):
        x, y = rng.standard_normal((5, 3, 6)), rng.standard_normal((5, 2))
        for T, net, opt in ((torch, ref, opts[0]), (fg, ours, opts[1])):
            opt.zero_grad()
            ((net(T.tensor(x)) - T.tensor(y)) ** 2).mean().backward()
            opt.step()
        for (key, a), b in zip(ours.named_parameters(), ref.parameters()):
            np.testing.assert_allclose(
                a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9, err_msg=key
            )


def test_lazy_placeholders_and_errors():
    layer = nn.LazyLinear(3)
    assert isinstance(layer.weight, nn.UninitializedParameter)
    assert isinstance(layer.weight, nn.Parameter)
    assert repr(layer.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        _ = layer.weight.shape
    state = layer.state_dict()
    assert state["weight"] is layer.weight  # saved as the placeholder, as torch
    params = list(layer.parameters())
    layer(fg.ones(2, 4))
    assert type(layer) is nn.Linear
    assert [tuple(p.shape) for p in layer.parameters()] == [(3, 4), (3,)]
    assert all(type(p) is nn.Parameter for p in layer.parameters())
    assert not any(p is q for p in params for q in layer.parameters())
    buffer = nn.UninitializedBuffer()
    assert repr(buffer) == "<UninitializedBuffer>" and not buffer.requires_grad

    class Incomplete(nn.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.UninitializedParameter()

        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented for Incomplete"):
        Incomplete()(fg.ones(1))


def test_custom_lazy_module_materializing_its_own_parameter():
    class Scale(nn.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.UninitializedParameter(dtype=fg.float64)

        def initialize_parameters(self, x):
            self.weight.materialize(x.shape[-1:])
            with fg.no_grad():
                self.weight.fill_(2.0)

        def forward(self, x):
            return x * self.weight

    module = Scale()
    out = module(fg.ones(2, 3, dtype=fg.float64))
    assert type(module) is Scale and not module.has_uninitialized_params()
    assert tuple(module.weight.shape) == (3,) and module.weight.dtype == fg.float64
    np.testing.assert_array_equal(out.detach().numpy(), np.full((2, 3), 2.0))


@needs_torch
def test_lazy_conv_errors_match_torch():
    for T in (torch, fg):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            T.nn.LazyConv2d(4, 3, groups=2)(T.zeros(1, 3, 5, 5))
    with pytest.raises(RuntimeError) as ref:
        torch.nn.LazyConv2d(4, 3)(torch.zeros(5, 5))
    with pytest.raises(RuntimeError) as ours:
        nn.LazyConv2d(4, 3)(fg.zeros(5, 5))
    assert str(ours.value).split("size:")[0] == str(ref.value).split("size:")[0]


# ---- CTC ---------------------------------------------------------------------------------


def ctc_problem(seed, T_=8, N=4, C=5, S=4):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T_, N, C))
    targets = rng.integers(1, C, (N, S))
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank between
    input_lengths = [T_, T_ - 1, T_ - 3, T_]
    target_lengths = [S, S - 1, 2, 0]
    return logits, targets, input_lengths, target_lengths


def run_ctc(
    T, logits, targets, input_lengths, target_lengths, concatenated=False, as_tensors=False, **kwargs
):
    x = T.tensor(logits, requires_grad=True)
    tg = T.tensor(targets)
    if concatenated:
        tg = T.cat([tg[i, :n] for i, n in enumerate(target_lengths)])
    if as_tensors:
        input_lengths, target_lengths = T.tensor(input_lengths), T.tensor(target_lengths)
    loss = T.nn.functional.ctc_loss(x.log_softmax(-1), tg, input_lengths, target_lengths, **kwargs)
    weights = T.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
    (loss * weights).sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


@needs_torch
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc_loss_values_and_gradients_match_torch(reduction, concatenated):
    problem = ctc_problem(0)
    ours = run_ctc(fg, *problem, concatenated=concatenated, as_tensors=concatenated, reduction=reduction)
    ref = run_ctc(torch, *problem, concatenated=concatenated, as_tensors=concatenated, reduction=reduction)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], ref[1], rtol=1e-8, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("blank", [0, 2])
def test_ctc_loss_blank_and_module_match_torch(blank):
    logits, targets, il, tl = ctc_problem(1, C=6)
    targets[targets == blank] = 5
    losses = []
    for T in (torch, fg):
        x = T.tensor(logits)
        losses.append(T.nn.CTCLoss(blank=blank)(x.log_softmax(-1), T.tensor(targets), il, tl).numpy())
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-10)


@needs_torch
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_impossible_alignments_match_torch(zero_infinity):
    logits, targets, _, tl = ctc_problem(2)
    il = [8, 2, 0, 0]  # sample 1: 3 labels in 2 frames; sample 2: 2 labels in no frame
    ours = run_ctc(fg, logits, targets, il, tl, reduction="none", zero_infinity=zero_infinity)
    ref = run_ctc(torch, logits, targets, il, tl, reduction="none", zero_infinity=zero_infinity)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-10)
    if zero_infinity:
        np.testing.assert_allclose(ours[1], ref[1], rtol=1e-8, atol=1e-12)
    else:  # the possible samples' gradients
        np.testing.assert_allclose(ours[1][:, [0, 3]], ref[1][:, [0, 3]], rtol=1e-8, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_loss_unbatched_matches_torch(reduction):
    logits, targets, _, _ = ctc_problem(3)
    results = []
    for T in (torch, fg):
        x = T.tensor(logits[:, 0], requires_grad=True)
        loss = T.nn.functional.ctc_loss(
            x.log_softmax(-1), T.tensor(targets[0, :3]), T.tensor(7), T.tensor(3), reduction=reduction
        )
        loss.backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    assert results[1][0].shape == results[0][0].shape
    for a, b in zip(results[1], results[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize(
    "change",
    [
        {"input_lengths": [9, 8, 8, 8]},
        {"target_lengths": [5, 1, 1, 1]},
        {"input_lengths": [8, 8, 8]},
        {"target_lengths": [1, 1, 1]},
        {"blank": 5},
        {"input_lengths": [8, -1, 8, 8]},
        {"target_lengths": [1, -1, 1, 1]},
        {"reduction": "avg"},
    ],
)
def test_ctc_loss_errors_match_torch(change):
    logits, targets, il, tl = ctc_problem(4)
    kwargs = {"input_lengths": il, "target_lengths": tl, **change}

    def call(T):
        T.nn.functional.ctc_loss(T.tensor(logits).log_softmax(-1), T.tensor(targets), **kwargs)

    with pytest.raises((RuntimeError, ValueError)) as ref:
        call(torch)
    with pytest.raises(ref.type) as ours:
        call(fg)
    assert str(ours.value) == str(ref.value)
