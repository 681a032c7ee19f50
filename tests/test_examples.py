"""The custom Function examples in examples/ check their gradients with
gradcheck/gradgradcheck and train; here they run with fewer steps."""

import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "final_below"),
    [("logsumexp", 0.5), ("straight_through", 1e-12), ("inplace_custom_op", 0.01)],
)
def test_example_checks_gradients_and_trains(name, final_below):
    losses = load(name).main(verbose=False)
    assert losses[-1] < final_below and losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])


def test_logsumexp_example_is_stable_and_matches_the_composite():
    import ferrograd as fg

    lse = load("logsumexp").logsumexp
    x = fg.tensor([[1e4, 1e4 - 1.0, -1e4]], dtype=fg.float64, requires_grad=True)
    y = lse(x)
    assert abs(y.item() - (1e4 + 0.31326168751822286)) < 1e-9
    y.backward()
    z = fg.tensor([[0.3, -1.0, 2.0]], dtype=fg.float64, requires_grad=True)
    assert abs(lse(z).item() - z.exp().sum().log().item()) < 1e-12


def test_in_place_example_refuses_leaves():
    import ferrograd as fg

    op = load("inplace_custom_op").ScaledTanh_
    leaf = fg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        op.apply(leaf, 1.5)


def test_resnet_example_takes_the_tutorial_step_and_trains_only_the_new_head():
    loss, trained = load("resnet_finetune").main(verbose=False)
    assert loss == loss and abs(loss) < 1e6
    assert trained == ["fc.weight", "fc.bias"]
