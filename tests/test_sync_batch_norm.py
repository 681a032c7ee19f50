"""nn.SyncBatchNorm in one process: BatchNorm over the local batch, and the conversion of a
model's BatchNorm layers that distributed training scripts run."""

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import nn


def test_matches_batch_norm_in_training_and_eval():
    fg.manual_seed(0)
    x = fg.randn(4, 3, 5, 2, requires_grad=True)
    sync, plain = nn.SyncBatchNorm(3, momentum=0.3), nn.BatchNorm2d(3, momentum=0.3)
    for mode in ("train", "eval"):
        getattr(sync, mode)()
        getattr(plain, mode)()
        a, b = sync(x), plain(x)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
        ga = fg.autograd.grad((a * a).sum(), (x, sync.weight))
        gb = fg.autograd.grad((b * b).sum(), (x, plain.weight))
        for u, v in zip(ga, gb):
            np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-5, atol=1e-5)
    assert sync.running_mean.tolist() == plain.running_mean.tolist()
    assert sync.num_batches_tracked.item() == 1


def test_takes_any_input_of_two_or_more_dims_with_channels():
    layer = nn.SyncBatchNorm(2, process_group="group")
    assert layer.process_group == "group"
    for shape in [(3, 2), (3, 2, 4), (2, 2, 1, 2, 2)]:
        assert layer(fg.randn(*shape)).shape == shape
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        layer(fg.randn(2))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(fg.randn(3, 0))


def test_convert_sync_batchnorm_replaces_nested_layers_and_shares_their_state():
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3),
        nn.BatchNorm2d(4),
        nn.Sequential(nn.Flatten(), nn.BatchNorm1d(16, affine=False)),
    )
    model[1](fg.randn(2, 4, 3, 3))
    model.eval()
    x = fg.randn(2, 1, 4, 4)
    before = model(x).detach().numpy()
    batch_norm = model[1]
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="pg")
    assert isinstance(converted[1], nn.SyncBatchNorm) and isinstance(converted[2][1], nn.SyncBatchNorm)
    assert isinstance(converted[0], nn.Conv2d)
    assert converted[1].weight is batch_norm.weight and converted[1].running_mean is batch_norm.running_mean
    assert converted[1].num_batches_tracked.item() == 1 and not converted[1].training
    assert converted[2][1].weight is None and converted[1].process_group == "pg"
    np.testing.assert_allclose(converted(x).detach().numpy(), before, rtol=1e-6)
    no_bias = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3, bias=False))
    assert no_bias.bias is None and no_bias.weight.shape == (3,)
