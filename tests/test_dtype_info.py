"""finfo/iinfo, dtype promotion, device, cuda stubs and print options, against torch where present."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")
NAMES = ["bool", "int64", "float32", "float64", "complex64", "complex128"]


def _modules():
    return [fg] + ([torch] if has_torch else [])


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo_matches_torch_and_numpy(name):
    info = fg.finfo(getattr(fg, name))
    real = {"complex64": "float32", "complex128": "float64"}.get(name, name)
    ref = np.finfo(np.dtype(real))
    assert info.dtype == real
    assert info.bits == ref.bits
    assert info.eps == float(ref.eps) and info.max == float(ref.max) and info.min == -info.max
    assert info.tiny == info.smallest_normal == float(ref.smallest_normal)
    assert info.resolution == 10.0**-ref.precision and info.resolution == pytest.approx(float(ref.resolution))
    assert 1.0 + info.eps != 1.0 and 1.0 + info.eps / 2 == 1.0 or real == "float32"
    if has_torch:
        t = torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(info, attr) == getattr(t, attr), attr
        assert repr(info) == repr(t)


def test_finfo_default_and_float32_eps_is_float32_spacing():
    assert fg.finfo() == fg.finfo(fg.float32)
    eps = fg.finfo(fg.float32).eps
    one = np.float32(1.0)
    assert np.float32(one + np.float32(eps)) != one
    assert np.float32(one + np.float32(eps / 2)) == one


def test_iinfo():
    info = fg.iinfo(fg.int64)
    assert (info.bits, info.max, info.min, info.dtype) == (64, 2**63 - 1, -(2**63), "int64")
    if has_torch:
        t = torch.iinfo(torch.int64)
        assert (t.bits, t.max, t.min, t.dtype) == (info.bits, info.max, info.min, info.dtype)
        assert repr(t) == repr(info)


def test_info_errors():
    for T in _modules():
        with pytest.raises(TypeError, match="requires a floating point input type"):
            T.finfo(T.int64)
        with pytest.raises(TypeError, match="requires an integer input type"):
            T.iinfo(T.float32)
        with pytest.raises(TypeError, match="bool is not supported by torch.iinfo"):
            T.iinfo(T.bool)


@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("b", NAMES)
def test_promote_types_and_can_cast(a, b):
    got = fg.promote_types(getattr(fg, a), getattr(fg, b))
    assert got == fg.promote_types(getattr(fg, b), getattr(fg, a))
    # the promoted type is what arithmetic actually gives
    x = fg.ones(2, dtype=getattr(fg, a))
    y = fg.ones(2, dtype=getattr(fg, b))
    if a != "bool" or b != "bool":
        assert (x + y).dtype == got
    if has_torch:
        assert (
            str(got).split(".")[-1]
            == str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
        )
        assert fg.can_cast(getattr(fg, a), getattr(fg, b)) == torch.can_cast(
            getattr(torch, a), getattr(torch, b)
        )


def test_can_cast_rules():
    assert fg.can_cast(fg.int64, fg.float32)
    assert not fg.can_cast(fg.float64, fg.int64)
    assert not fg.can_cast(fg.complex64, fg.float64)
    assert not fg.can_cast(fg.int64, fg.bool)
    assert fg.can_cast(fg.bool, fg.int64)


def _operands(T):
    return [
        T.ones(2, dtype=T.int64),
        T.ones(2, dtype=T.float32),
        T.ones(2, dtype=T.bool),
        T.tensor(1.0, dtype=T.float64),
        T.tensor(1, dtype=T.int64),
        T.tensor(1j, dtype=T.complex128),
        T.ones(2, dtype=T.float64),
        2,
        2.5,
        True,
        1j,
    ]


@pytest.mark.parametrize("i", range(11))
@pytest.mark.parametrize("j", range(11))
def test_result_type(i, j):
    fa, fb = _operands(fg)[i], _operands(fg)[j]
    got = fg.result_type(fa, fb)
    if isinstance(fa, fg.Tensor) or isinstance(fb, fg.Tensor):
        # agrees with what addition produces
        assert (fa + fb).dtype == got if not (got == fg.bool) else True
    if has_torch:
        ta, tb = _operands(torch)[i], _operands(torch)[j]
        assert str(got).split(".")[-1] == str(torch.result_type(ta, tb)).split(".")[-1]


def test_promote_types_argument_error():
    for T in _modules():
        with pytest.raises(
            TypeError,
            match=r"promote_types\(\): argument 'type1' \(position 1\) must be torch.dtype, not int",
        ):
            T.promote_types(1, T.float32)


def test_is_floating_point_and_default_dtype():
    assert fg.is_floating_point(fg.ones(1)) and fg.is_floating_point(fg.ones(1, dtype=fg.float64))
    assert not fg.is_floating_point(fg.ones(1, dtype=fg.int64))
    assert not fg.is_floating_point(fg.ones(1, dtype=fg.complex64))
    fg.set_default_dtype(fg.float32)
    assert fg.get_default_dtype() == fg.float32
    for T in _modules():
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            T.set_default_dtype(T.int64)
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            T.set_default_dtype(T.complex64)
    assert fg.get_default_dtype() == fg.float32


def test_device():
    d = fg.device("cpu")
    assert d.type == "cpu" and d.index is None and str(d) == "cpu" and repr(d) == "device(type='cpu')"
    d0 = fg.device("cpu:0")
    assert d0.index == 0 and repr(d0) == "device(type='cpu', index=0)" and d0 == fg.device("cpu", 0)
    assert d0 != d
    x = fg.ones(2, 3)
    assert x.device == d
    assert x.to(d).shape == (2, 3) and fg.zeros(2, device=d).shape == (2,)
    model = fg.nn.Linear(2, 2).to(fg.device("cpu"))
    assert model.weight.device == d
    assert fg.device(d) is d and pickle.loads(pickle.dumps(d0)) == d0
    assert fg.device("cuda:1").index == 1 and fg.device("cuda:1").type == "cuda"
    for T in _modules():
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            T.device("foo")
    if has_torch:
        for spec in ("cpu", "cpu:0", "cuda", "cuda:2", "meta"):
            assert repr(fg.device(spec)) == repr(torch.device(spec))
            assert str(fg.device(spec)) == str(torch.device(spec))


def test_cuda_unavailable():
    assert fg.cuda.is_available() is False
    assert fg.cuda.device_count() == 0
    fg.cuda.manual_seed_all(0)
    device = fg.device("cuda" if fg.cuda.is_available() else "cpu")
    assert fg.ones(1).to(device).device == "cpu"


def test_set_printoptions():
    x = fg.tensor([1.23456789, 2.0])
    try:
        fg.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.23, 2.00])"
        assert fg.get_printoptions()["precision"] == 2
        fg.set_printoptions(precision=6)
        assert repr(x) == "tensor([1.234568, 2.000000])"
        fg.set_printoptions(threshold=5, edgeitems=2)
        assert "..." in repr(fg.arange(10))
        if has_torch:
            torch.set_printoptions(precision=6, threshold=5, edgeitems=2)
            assert repr(fg.arange(10)) == repr(torch.arange(10))
            assert repr(x) == repr(torch.tensor([1.23456789, 2.0]))
    finally:
        fg.set_printoptions(profile="default")
        if has_torch:
            torch.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.2346, 2.0000])"
    assert "..." not in repr(fg.arange(10))


@pytest.mark.parametrize(
    "name, alias",
    [("int32", "int"), ("int16", "short"), ("int64", "long"), ("float32", "float"), ("float64", "double")]
    + [("complex64", "cfloat"), ("complex128", "cdouble")],
)
def test_each_dtype_is_one_object(name, alias):
    """`x.dtype is T.float32` holds, and aliases are the same object, as in PyTorch."""
    for T in _modules():
        d = getattr(T, name)
        assert getattr(T, alias) is d
        x = T.zeros(2, dtype=d)
        assert x.dtype is d and (x + x).dtype is d
        assert pickle.loads(pickle.dumps(d)) is d
    assert fg.promote_types(fg.int32, fg.float64) is fg.float64
    assert fg.get_default_dtype() is fg.float32
