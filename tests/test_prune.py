"""nn.utils.prune: the masks that L1/Ln, random and custom pruning choose (alone, in turn on one
parameter, and globally across modules) match torch's on the same weights; the reparametrisation
(``<name>_orig``, ``<name>_mask``, the forward pre-hook) trains only the kept entries; ``remove``
makes pruning permanent; torch's errors."""

import numpy as np
import pytest

import ferrograd as fg
import ferrograd.nn.utils.prune as prune

try:
    import torch
    import torch.nn.utils.prune as torch_prune
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")


def linear_pair(rng, inputs, outputs):
    """The same Linear layer in ferrograd and (when present) torch."""
    weight = rng.normal(size=(outputs, inputs)).astype(np.float32)
    bias = rng.normal(size=outputs).astype(np.float32)
    layer = fg.nn.Linear(inputs, outputs)
    with fg.no_grad():
        layer.weight.copy_(fg.tensor(weight))
        layer.bias.copy_(fg.tensor(bias))
    if torch is None:
        return layer, None
    reference = torch.nn.Linear(inputs, outputs)
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(weight))
        reference.bias.copy_(torch.tensor(bias))
    return layer, reference


STEPS = {
    "l1_share": lambda p, m: p.l1_unstructured(m, "weight", amount=0.4),
    "l1_count": lambda p, m: p.l1_unstructured(m, "weight", amount=5),
    "l1_then_ln_rows": lambda p, m: (
        p.l1_unstructured(m, "weight", amount=0.3),
        p.ln_structured(m, "weight", amount=2, n=2, dim=0),
    ),
    "ln_columns_then_l1": lambda p, m: (
        p.ln_structured(m, "weight", amount=0.5, n=1, dim=1),
        p.l1_unstructured(m, "weight", amount=0.25),
    ),
    "ln_inf_last_dim": lambda p, m: p.ln_structured(m, "weight", amount=1, n=float("inf"), dim=-1),
    "l1_twice": lambda p, m: (
        p.l1_unstructured(m, "weight", amount=0.25),
        p.l1_unstructured(m, "weight", amount=0.25),
    ),
    "l1_bias": lambda p, m: p.l1_unstructured(m, "bias", amount=2),
    "identity": lambda p, m: p.identity(m, "weight"),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(STEPS))
def test_masks_match_torch(name):
    layer, reference = linear_pair(np.random.default_rng(7), 6, 5)
    STEPS[name](prune, layer)
    STEPS[name](torch_prune, reference)
    for attr in ("weight", "bias"):
        if hasattr(reference, attr + "_mask"):
            np.testing.assert_array_equal(
                getattr(layer, attr + "_mask").numpy(), getattr(reference, attr + "_mask").numpy()
            )
        np.testing.assert_array_equal(
            getattr(layer, attr).detach().numpy(), getattr(reference, attr).detach().numpy()
        )
    assert sorted(layer.state_dict()) == sorted(reference.state_dict())
    assert [n for n, _ in layer.named_parameters()] == [n for n, _ in reference.named_parameters()]


@needs_torch
def test_global_pruning_matches_torch():
    rng = np.random.default_rng(3)
    first, first_ref = linear_pair(rng, 4, 6)
    second, second_ref = linear_pair(rng, 6, 2)
    for p, layers in ((prune, (first, second)), (torch_prune, (first_ref, second_ref))):
        p.l1_unstructured(layers[0], "weight", amount=3)
        p.global_unstructured([(m, "weight") for m in layers], pruning_method=p.L1Unstructured, amount=0.5)
    for layer, reference in ((first, first_ref), (second, second_ref)):
        np.testing.assert_array_equal(layer.weight_mask.numpy(), reference.weight_mask.numpy())
    total = sum(int((m.weight_mask == 0).sum()) for m in (first, second))
    assert total == 3 + round(0.5 * (24 + 12 - 3))


def test_pruned_entries_get_no_gradient_and_stay_zero():
    fg.manual_seed(0)
    model = fg.nn.Sequential(fg.nn.Linear(5, 8), fg.nn.ReLU(), fg.nn.Linear(8, 2))
    prune.l1_unstructured(model[0], "weight", amount=0.5)
    mask = model[0].weight_mask.clone()
    assert int((mask == 0).sum()) == 20
    optimizer = fg.optim.SGD(model.parameters(), lr=0.1)
    x, y = fg.randn(16, 5), fg.randn(16, 2)
    for _ in range(3):
        optimizer.zero_grad()
        fg.nn.functional.mse_loss(model(x), y).backward()
        grad = model[0].weight_orig.grad
        assert bool((grad[mask == 0] == 0).all()) and bool((grad[mask == 1] != 0).any())
        optimizer.step()
        model(x)  # the pre-hook recomputes the pruned weight from the updated original
        assert bool((model[0].weight[mask == 0] == 0).all())
    assert prune.is_pruned(model) and not prune.is_pruned(fg.nn.Linear(2, 2))
    prune.remove(model[0], "weight")
    assert not prune.is_pruned(model)
    weight = model[0].weight
    assert isinstance(weight, fg.nn.Parameter) and bool((weight[mask == 0] == 0).all())
    assert sorted(model[0].state_dict()) == ["bias", "weight"] and not model[0]._forward_pre_hooks


def test_random_pruning_counts_and_composition():
    fg.manual_seed(1)
    layer = fg.nn.Linear(5, 5)
    prune.random_unstructured(layer, "weight", amount=0.3)
    assert int((layer.weight_mask == 0).sum()) == round(0.3 * 25)
    prune.random_unstructured(layer, "weight", amount=4)
    assert int((layer.weight_mask == 0).sum()) == round(0.3 * 25) + 4  # among the entries still kept
    conv = fg.nn.Conv2d(3, 6, 3)
    prune.random_structured(conv, "weight", amount=2, dim=0)
    pruned_channels = (conv.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()
    assert int(pruned_channels) == 2
    container = conv._forward_pre_hooks[next(iter(conv._forward_pre_hooks))]
    assert isinstance(container, prune.RandomStructured)
    prune.ln_structured(conv, "weight", amount=1, n=2, dim=0)
    assert int((conv.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()) == 3
    hook = next(iter(conv._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2


def test_custom_mask_and_importance_scores():
    layer = fg.nn.Linear(3, 2)
    prune.custom_from_mask(layer, "bias", fg.tensor([0, 1]))
    assert layer.bias_mask.tolist() == [0.0, 1.0] and float(layer.bias[0]) == 0.0
    layer(fg.randn(4, 3)).sum().backward()
    assert layer.bias_orig.grad.tolist() == [0.0, 4.0]
    scored = fg.nn.Linear(2, 2)
    scores = fg.tensor([[4.0, 1.0], [3.0, 2.0]])
    prune.l1_unstructured(scored, "weight", amount=2, importance_scores=scores)
    assert scored.weight_mask.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match="same shape"):
        prune.l1_unstructured(fg.nn.Linear(2, 2), "weight", amount=1, importance_scores=fg.ones(3))
    method = prune.L1Unstructured(amount=1)
    assert method.prune(fg.tensor([3.0, -1.0, 2.0])).tolist() == [3.0, 0.0, 2.0]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: prune.l1_unstructured(fg.nn.Linear(2, 2), "weight", amount=1.5),
            ValueError,
            "float in the range",
        ),
        (
            lambda: prune.l1_unstructured(fg.nn.Linear(2, 2), "weight", amount=-1),
            ValueError,
            "non-negative integer",
        ),
        (lambda: prune.l1_unstructured(fg.nn.Linear(2, 2), "weight", amount=5), ValueError, "prune=4"),
        (lambda: prune.l1_unstructured(fg.nn.Linear(2, 2), "weight", amount="a"), TypeError, "Invalid type"),
        (lambda: prune.l1_unstructured(fg.nn.Linear(2, 2), "nope", amount=1), AttributeError, "nope"),
        (lambda: prune.remove(fg.nn.Linear(2, 2), "weight"), ValueError, "has to be pruned before"),
        (
            lambda: prune.ln_structured(fg.nn.Linear(2, 2), "weight", 1, n=2, dim=5),
            IndexError,
            "Invalid index 5",
        ),
        (
            lambda: prune.ln_structured(fg.nn.Linear(2, 2), "bias", 1, n=2, dim=0),
            ValueError,
            "multidimensional",
        ),
        (
            lambda: prune.global_unstructured(
                [(fg.nn.Linear(2, 2), "weight")], pruning_method=prune.RandomStructured, amount=1
            ),
            TypeError,
            "unstructured",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
