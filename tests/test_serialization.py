"""save/load: tensors, parameters, state dicts and optimizer state round-trip."""

from __future__ import annotations

import collections
import copy
import io
import pickle

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch


def _round_trip(obj, tmp_path=None, **load_kwargs):
    if tmp_path is None:
        buf = io.BytesIO()
        fg.save(obj, buf)
        buf.seek(0)
        return fg.load(buf, **load_kwargs)
    path = tmp_path / "ckpt.pt"
    fg.save(obj, path)
    return fg.load(str(path), **load_kwargs)


def _train(model, opt, steps=3):
    fg.manual_seed(1)
    x, y = fg.randn(8, 4), fg.randn(8, 2)
    for _ in range(steps):
        opt.zero_grad()
        fg.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return x, y


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
def test_tensor_dtypes_round_trip(dtype):
    rng = np.random.default_rng(0)
    arr = rng.standard_normal((3, 2)) + (
        1j * rng.standard_normal((3, 2)) if dtype.startswith("complex") else 0
    )
    t = fg.tensor(arr.astype(np.dtype(dtype) if dtype != "bool" else np.bool_))
    back = _round_trip(t)
    assert isinstance(back, fg.Tensor) and back.dtype == getattr(fg, dtype)
    assert back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_requires_grad_views_and_zero_d(tmp_path):
    leaf = fg.randn(4, 3, requires_grad=True)
    obj = {"leaf": leaf, "view": fg.ones(3, 4).t(), "scalar": fg.tensor(2.5), "empty": fg.zeros(0, 2)}
    back = _round_trip(obj, tmp_path)
    assert back["leaf"].requires_grad and back["leaf"].is_leaf
    assert not back["view"].requires_grad and back["view"].shape == (4, 3)
    assert back["scalar"].dim() == 0 and back["scalar"].item() == 2.5
    assert back["empty"].shape == (0, 2)
    np.testing.assert_array_equal(back["leaf"].detach().numpy(), leaf.detach().numpy())
    assert back["leaf"] is not leaf


def test_nested_containers_and_shared_objects():
    t = fg.arange(5)
    obj = collections.OrderedDict(a=[t, (t, 3)], b={"c": None, "d": 1.5, "e": "x", "f": {1, 2}}, g=fg.float64)
    back = _round_trip(obj)
    assert isinstance(back, collections.OrderedDict) and list(back) == ["a", "b", "g"]
    assert back["a"][0] is back["a"][1][0]  # the same tensor object stays one object
    assert back["a"][1][1] == 3 and back["b"] == {"c": None, "d": 1.5, "e": "x", "f": {1, 2}}
    assert back["g"] == fg.float64


def test_model_state_dict_round_trip(tmp_path):
    model = fg.nn.Sequential(fg.nn.Linear(4, 5), fg.nn.ReLU(), fg.nn.Linear(5, 2))
    opt = fg.optim.SGD(model.parameters(), lr=0.1)
    x, _ = _train(model, opt)
    fg.save(model.state_dict(), tmp_path / "model.pt")
    fresh = fg.nn.Sequential(fg.nn.Linear(4, 5), fg.nn.ReLU(), fg.nn.Linear(5, 2))
    assert not np.allclose(fresh(x).detach().numpy(), model(x).detach().numpy())
    state = fg.load(tmp_path / "model.pt")
    assert list(state) == list(model.state_dict())
    fresh.load_state_dict(state)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_whole_module_and_parameter_need_weights_only_false():
    model = fg.nn.Linear(3, 2)
    p = _round_trip(model.weight)
    assert isinstance(p, fg.nn.Parameter) and p.requires_grad
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _round_trip(model)
    back = _round_trip(model, weights_only=False)
    assert isinstance(back, fg.nn.Linear)
    np.testing.assert_array_equal(back.weight.detach().numpy(), model.weight.detach().numpy())


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: fg.optim.Adam(ps, lr=0.01),
        lambda ps: fg.optim.SGD(ps, lr=0.05, momentum=0.9),
    ],
)
def test_optimizer_state_round_trip_resumes_identically(make_opt):
    def build():
        fg.manual_seed(0)
        return fg.nn.Linear(4, 2)

    model = build()
    opt = make_opt(model.parameters())
    _train(model, opt, steps=3)
    buf = io.BytesIO()
    fg.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, buf)
    _train(model, opt, steps=2)  # continue the original run

    resumed = build()
    ropt = make_opt(resumed.parameters())
    buf.seek(0)
    ckpt = fg.load(buf, map_location="cpu")
    assert ckpt["epoch"] == 3
    resumed.load_state_dict(ckpt["model"])
    ropt.load_state_dict(ckpt["opt"])
    _train(resumed, ropt, steps=2)
    for a, b in zip(model.parameters(), resumed.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_weights_only_rejects_arbitrary_globals():
    class Evil:
        def __reduce__(self):
            return (print, ("should not run",))

    buf = io.BytesIO()
    fg.save({"x": Evil()}, buf)
    buf.seek(0)
    # PyTorch names builtins without their module.
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL print was not an allowed"):
        fg.load(buf)


def _save_and_load(T, obj):
    buf = io.BytesIO()
    T.save(obj, buf)
    buf.seek(0)
    return T.load(buf)


def _devices_and_sizes(T):
    """A checkpoint holding a device and shapes (``Size``), loaded with the default weights_only."""
    back = _save_and_load(T, {"device": T.device("cpu"), "shape": T.ones(2, 3).shape, "size": T.Size([4])})
    return {k: (type(v).__name__, repr(v)) for k, v in back.items()}


def test_weights_only_load_accepts_devices_and_sizes_like_torch():
    ours = _devices_and_sizes(fg)
    assert ours == {
        "device": ("device", "device(type='cpu')"),
        "shape": ("Size", "torch.Size([2, 3])"),
        "size": ("Size", "torch.Size([4])"),
    }
    if has_torch:
        assert ours == _devices_and_sizes(torch)


class _Config:
    """A class a checkpoint refers to by its path (tests/test_serialization._Config)."""

    def __init__(self, lr=0.1):
        self.lr = lr


def _config_path():
    return f"{_Config.__module__}.{_Config.__qualname__}"


def _safe_globals_story(T):
    """What a weights_only load of a checkpoint holding a ``_Config`` does as globals are
    allowed and forgotten through ``T.serialization``."""
    ser = T.serialization
    ser.clear_safe_globals()
    buf = io.BytesIO()
    T.save({"cfg": _Config(0.5)}, buf)

    def load():
        buf.seek(0)
        try:
            return T.load(buf)["cfg"].lr
        except pickle.UnpicklingError as e:
            return type(e).__name__

    story = [load()]
    with ser.safe_globals([_Config]):
        story += [load(), ser.get_safe_globals() == [_Config]]
    story += [load(), ser.get_safe_globals()]
    ser.add_safe_globals([_Config])
    # Leaving a block removes its globals even when they were allowed before it.
    with ser.safe_globals([_Config]):
        pass
    story += [load(), ser.get_safe_globals()]
    ser.add_safe_globals([(_Config, _config_path())])
    story.append(load())
    ser.clear_safe_globals()
    story += [load(), ser.get_safe_globals()]
    ser.add_safe_globals([(_Config, 1)])
    try:
        load()
    except TypeError as e:
        story.append(str(e))
    finally:
        ser.clear_safe_globals()
    return story


def test_safe_globals_allow_classes_like_torch():
    ours = _safe_globals_story(fg)
    assert ours == [
        "UnpicklingError",
        0.5,
        True,
        "UnpicklingError",
        [],
        "UnpicklingError",
        [],
        0.5,
        "UnpicklingError",
        [],
        "Expected second item in tuple to be str of callable full path, but got: <class 'int'>",
    ]
    if has_torch:
        assert ours == _safe_globals_story(torch)


def _refusal(T, data):
    try:
        T.load(io.BytesIO(data))
    except pickle.UnpicklingError as e:
        return str(e).replace("ferrograd", "torch")


def test_weights_only_refusal_message_matches_torch():
    buf = io.BytesIO()
    fg.save({"cfg": _Config()}, buf)
    ours = _refusal(fg, buf.getvalue())
    path = _config_path()
    assert f"Unsupported global: GLOBAL {path} was not an allowed global by default. " in ours
    assert f"`torch.serialization.add_safe_globals([{path}])`" in ours
    assert _refusal(fg, b"garbage").startswith("Weights only load failed. In PyTorch 2.6, we changed")
    if has_torch:
        buf = io.BytesIO()
        torch.save({"cfg": _Config()}, buf)
        assert ours == _refusal(torch, buf.getvalue())
        # The inner error comes from a different unpickler; the explanation around it is PyTorch's.
        theirs = _refusal(torch, b"garbage")
        assert _refusal(fg, b"garbage").split("\n\n")[0] == theirs.split("\n\n")[0]


@pytest.mark.skipif(not has_torch, reason="torch not installed")
def test_state_dict_values_match_torch_after_transfer():
    model = fg.nn.Linear(3, 2)
    back = _round_trip(model.state_dict())
    tmodel = torch.nn.Linear(3, 2)
    tmodel.load_state_dict({k: torch.tensor(v.numpy()) for k, v in back.items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        tmodel(torch.tensor(x)).detach().numpy(), model(fg.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6
    )


# --- copy.deepcopy and plain pickle ---------------------------------------------------------


def _copies(T):
    """What deep copies and plain pickles of a leaf keep, for ferrograd or torch."""
    x = T.tensor([1.5, -2.0], requires_grad=True)
    x.grad = T.tensor([3.0, 4.0])
    x.note = ["kept"]
    d = copy.deepcopy(x)
    p = pickle.loads(pickle.dumps(x))
    with T.no_grad():
        d.add_(1)
    return {
        "deep": (d.tolist(), d.requires_grad, d.is_leaf, d.grad.tolist(), d.note, d.note is x.note),
        "original_untouched": x.tolist(),
        "pickled": (p.tolist(), p.requires_grad, p.is_leaf, p.grad, p.note),
        "non_leaf_pickled": pickle.loads(pickle.dumps(x * 2)).is_leaf,
    }


def test_deepcopy_and_pickle_of_tensors_keep_what_torch_keeps():
    ours = _copies(fg)
    assert ours["deep"] == ([2.5, -1.0], True, True, [3.0, 4.0], ["kept"], False)
    assert ours["original_untouched"] == [1.5, -2.0]
    if has_torch:
        assert ours == _copies(torch)


def test_deepcopy_of_a_non_leaf_raises_like_torch():
    x = fg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="graph leaves") as ours:
        copy.deepcopy(x * 2)
    if has_torch:
        with pytest.raises(RuntimeError) as theirs:
            copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
        assert str(ours.value) == str(theirs.value)


def test_deepcopy_of_a_model_copies_buffers_and_keeps_ties():
    model = fg.nn.Sequential(fg.nn.Linear(3, 3), fg.nn.BatchNorm1d(3), fg.nn.Linear(3, 3))
    model[2].weight = model[0].weight
    model.train()(fg.randn(8, 3))
    twin = copy.deepcopy(model)
    assert twin[2].weight is twin[0].weight and twin[0].weight is not model[0].weight
    assert isinstance(twin[0].weight, fg.nn.Parameter)
    assert twin[1].running_mean is not model[1].running_mean
    assert fg.equal(twin[1].running_mean, model[1].running_mean)
    with fg.no_grad():
        twin[1].running_mean.add_(1)
    assert not fg.equal(twin[1].running_mean, model[1].running_mean)
    x = fg.randn(4, 3)
    assert fg.equal(pickle.loads(pickle.dumps(model)).eval()(x), model.eval()(x))
