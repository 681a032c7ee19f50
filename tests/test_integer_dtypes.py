"""The narrow integer dtypes: uint8, int8, int16 and int32 beside int64.

They behave as PyTorch's do: arithmetic wraps modulo the width, promotion
follows ``promote_types`` (uint8 with int8 gives int16), sums and running sums
widen to int64, division and float ops produce the default float dtype, and
NumPy arrays of these types keep them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferrograd as fg

NARROW = [fg.uint8, fg.int8, fg.int16, fg.int32]
INTEGERS = [*NARROW, fg.int64]
ALL = [fg.bool, *INTEGERS, fg.float32, fg.float64, fg.complex64, fg.complex128]
NP = {
    fg.uint8: np.uint8,
    fg.int8: np.int8,
    fg.int16: np.int16,
    fg.int32: np.int32,
    fg.int64: np.int64,
}


def arrays(dtype, shape=(7,)):
    info = np.iinfo(NP[dtype])
    return hnp.arrays(NP[dtype], shape, elements=st.integers(int(info.min), int(info.max)))


def test_dtype_objects():
    assert fg.int == fg.int32 and fg.short == fg.int16
    assert [d.itemsize for d in NARROW] == [1, 1, 2, 4]
    assert [d.is_signed for d in NARROW] == [False, True, True, True]
    assert repr(fg.uint8) == "ferrograd.uint8"
    for d in NARROW:
        assert not d.is_floating_point and not d.is_complex
        info = fg.iinfo(d)
        assert (info.min, info.max, info.bits) == (
            int(np.iinfo(NP[d]).min),
            int(np.iinfo(NP[d]).max),
            8 * d.itemsize,
        )


@pytest.mark.parametrize("dtype", NARROW)
def test_creation_and_numpy_round_trip(dtype):
    assert fg.zeros(2, 3, dtype=dtype).dtype == dtype
    assert fg.full((2,), 7, dtype=dtype).tolist() == [7, 7]
    assert fg.arange(5, dtype=dtype).tolist() == [0, 1, 2, 3, 4]
    a = np.array([[1, 2], [3, 4]], dtype=NP[dtype])
    t = fg.from_numpy(a)
    assert t.dtype == dtype
    t[0, 0] = 9  # shares the array's memory
    assert a[0, 0] == 9
    assert fg.tensor(a).dtype == dtype
    back = t.numpy()
    assert back.dtype == NP[dtype] and back.tolist() == [[9, 2], [3, 4]]
    assert isinstance(t[1, 1].item(), int)
    # Python integers still make int64.
    assert fg.tensor([1, 2]).dtype == fg.int64


def test_conversions_wrap_like_numpy():
    values = np.array([-129, -1, 0, 127, 128, 255, 256, 70000, 2**31 + 5], dtype=np.int64)
    t = fg.tensor(values)
    for method, np_type in [("byte", np.uint8), ("char", np.int8), ("short", np.int16), ("int", np.int32)]:
        out = getattr(t, method)()
        assert out.numpy().tolist() == values.astype(np_type).tolist(), method
    floats = fg.tensor([-2.7, 0.5, 3.9])
    assert floats.int().tolist() == [-2, 0, 3]
    assert fg.tensor([1, 0, 2], dtype=fg.uint8).bool().tolist() == [True, False, True]


def test_promotion_rules():
    p = fg.promote_types
    assert p(fg.uint8, fg.int8) == fg.int16
    assert p(fg.int8, fg.uint8) == fg.int16
    assert p(fg.uint8, fg.int16) == fg.int16
    assert p(fg.int32, fg.int64) == fg.int64
    assert p(fg.int32, fg.float32) == fg.float32
    assert p(fg.bool, fg.uint8) == fg.uint8
    x = fg.tensor([1, 2], dtype=fg.int32)
    assert (x + 1).dtype == fg.int32  # a Python int does not widen the tensor
    assert (x + 1.5).dtype == fg.float32
    assert (x / 2).dtype == fg.float32
    assert (x + fg.tensor(3)).dtype == fg.int32  # nor does a 0-d int64 tensor
    assert (x + fg.tensor([3, 4])).dtype == fg.int64
    assert (fg.tensor([1], dtype=fg.uint8) + fg.tensor([1], dtype=fg.int8)).dtype == fg.int16


@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(NARROW))
def test_arithmetic_wraps_like_numpy(data, dtype):
    a = data.draw(arrays(dtype))
    b = data.draw(arrays(dtype))
    ta, tb = fg.tensor(a), fg.tensor(b)
    with np.errstate(over="ignore"):
        assert (ta + tb).numpy().tolist() == (a + b).tolist()
        assert (ta - tb).numpy().tolist() == (a - b).tolist()
        assert (ta * tb).numpy().tolist() == (a * b).tolist()
        assert (-ta).numpy().tolist() == (-a).tolist()
    for op in ("__and__", "__or__", "__xor__"):
        assert getattr(ta, op)(tb).numpy().tolist() == getattr(a, op)(b).tolist()
    assert (~ta).numpy().tolist() == (~a).tolist()
    assert (ta < tb).numpy().tolist() == (a < b).tolist()
    assert (ta == tb).numpy().tolist() == (a == b).tolist()
    assert fg.maximum(ta, tb).numpy().tolist() == np.maximum(a, b).tolist()
    nonzero = np.where(b == 0, 1, b).astype(b.dtype)
    tn = fg.tensor(nonzero)
    with np.errstate(over="ignore"):
        assert (ta // tn).numpy().tolist() == (a // nonzero).tolist()
        assert (ta % tn).numpy().tolist() == (a % nonzero).tolist()
    true_div = (ta / tn).numpy()
    assert true_div.dtype == np.float32
    np.testing.assert_allclose(true_div, a.astype(np.float64) / nonzero, rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(NARROW))
def test_reductions_and_ordering(data, dtype):
    a = data.draw(arrays(dtype, (3, 5)))
    t = fg.tensor(a)
    total = t.sum()
    assert total.dtype == fg.int64 and total.item() == int(a.astype(np.int64).sum())
    assert t.sum(1).tolist() == a.astype(np.int64).sum(1).tolist()
    assert t.cumsum(1).dtype == fg.int64
    assert t.cumsum(1).tolist() == np.cumsum(a.astype(np.int64), 1).tolist()
    assert t.max().item() == int(a.max()) and t.min().item() == int(a.min())
    assert t.max().dtype == dtype
    assert t.argmax(1).tolist() == a.argmax(1).tolist()
    values, _ = t.sort(1)
    assert values.dtype == dtype and values.tolist() == np.sort(a, 1).tolist()
    descending, _ = t.sort(1, descending=True)
    assert descending.tolist() == np.sort(a, 1)[:, ::-1].tolist()
    assert t.topk(2, 1).values.tolist() == np.sort(a, 1)[:, ::-1][:, :2].tolist()
    assert t.abs().dtype == dtype
    assert fg.clamp(t, 0, 100).tolist() == np.clip(a, 0, 100).tolist()
    assert fg.where(t > 0, t, fg.zeros_like(t)).tolist() == np.where(a > 0, a, 0).tolist()


def test_products_and_float_ops():
    a = fg.tensor([[1, 2], [3, 4]], dtype=fg.int32)
    prod = a @ a
    assert prod.dtype == fg.int32 and prod.tolist() == [[7, 10], [15, 22]]
    assert a.float().dtype == fg.float32
    assert a.sqrt().dtype == fg.float32
    np.testing.assert_allclose(a.sqrt().numpy(), np.sqrt([[1, 2], [3, 4]]), rtol=1e-6)
    assert (a**2).dtype == fg.int32 and (a**2).tolist() == [[1, 4], [9, 16]]
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        a.mean()
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        fg.zeros(2, dtype=fg.int32).requires_grad_()


def test_indexing_with_narrow_indices():
    x = fg.arange(10.0)
    assert x[fg.tensor([1, 3], dtype=fg.int32)].tolist() == [1.0, 3.0]
    mask = fg.tensor([1, 0] * 5, dtype=fg.uint8)
    assert x[mask].tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[fg.tensor([1], dtype=fg.int16)]


def test_integer_results_flow_into_autograd():
    w = fg.randn(4, requires_grad=True)
    counts = fg.tensor([1, 0, 2, 3], dtype=fg.uint8)
    (w * counts).sum().backward()
    assert w.grad.tolist() == [1.0, 0.0, 2.0, 3.0]


def _torch():
    """torch, for the comparisons; they skip without it."""
    return pytest.importorskip("torch")


def test_promote_types_matches_torch():
    torch = _torch()
    for a in ALL:
        for b in ALL:
            expected = torch.promote_types(getattr(torch, a.__reduce__()), getattr(torch, b.__reduce__()))
            assert fg.promote_types(a, b).__reduce__() == str(expected).removeprefix("torch."), (a, b)


UNARY = [
    "neg",
    "abs",
    "sign",
    "square",
    "exp",
    "sqrt",
    "sin",
    "floor",
    "round",
    "trunc",
    "bitwise_not",
    "signbit",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "floor_divide",
    "remainder",
    "maximum",
    "minimum",
    "eq",
    "lt",
    "bitwise_and",
    "pow",
]


@pytest.mark.parametrize("dtype", NARROW)
def test_ops_match_torch(dtype):
    torch = _torch()
    rng = np.random.default_rng(0)
    info = np.iinfo(NP[dtype])
    a = rng.integers(max(int(info.min), -100), min(int(info.max), 100), size=(4, 5), endpoint=True).astype(
        NP[dtype]
    )
    b = rng.integers(1, min(int(info.max), 9), size=(4, 5), endpoint=True).astype(NP[dtype])
    tdt = getattr(torch, dtype.__reduce__())

    def same(name, f_out, t_out):
        assert str(f_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], name
        np.testing.assert_allclose(f_out.numpy(), t_out.numpy(), rtol=1e-6, err_msg=name)

    for name in UNARY:
        same(name, getattr(fg, name)(fg.tensor(a)), getattr(torch, name)(torch.tensor(a, dtype=tdt)))
    for name in BINARY:
        same(
            name,
            getattr(fg, name)(fg.tensor(a), fg.tensor(b)),
            getattr(torch, name)(torch.tensor(a, dtype=tdt), torch.tensor(b, dtype=tdt)),
        )
    for name in ["sum", "prod", "cumsum", "amax", "argmin"]:
        same(name, getattr(fg, name)(fg.tensor(a), 1), getattr(torch, name)(torch.tensor(a, dtype=tdt), 1))


def test_int32_indices_in_gather_scatter_and_index_ops():
    x = fg.arange(12.0).reshape(3, 4)
    i32 = fg.tensor([[0, 2], [1, 3], [3, 0]], dtype=fg.int32)
    assert x.gather(1, i32).tolist() == x.gather(1, i32.long()).tolist()
    assert x.index_select(1, fg.tensor([3, 0], dtype=fg.int32)).tolist() == [
        [3.0, 0.0],
        [7.0, 4.0],
        [11.0, 8.0],
    ]
    src = fg.ones(3, 2)
    assert (
        fg.zeros(3, 4).scatter_add(1, i32, src).tolist()
        == fg.zeros(3, 4).scatter_add(1, i32.long(), src).tolist()
    )
    added = fg.zeros(3).index_add(0, fg.tensor([0, 0, 2], dtype=fg.int32), fg.ones(3))
    assert added.tolist() == [2.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.gather(1, i32.short())


def test_all_any_of_uint8_stay_uint8_and_gcd():
    u = fg.tensor([1, 0, 3], dtype=fg.uint8)
    assert u.all().dtype == fg.uint8 and u.all().item() == 0
    assert u.any().dtype == fg.uint8 and u.any().item() == 1
    assert fg.tensor([1, 2], dtype=fg.int16).all().dtype == fg.bool
    g = fg.gcd(fg.tensor([12, 18], dtype=fg.int32), fg.tensor([8, 12], dtype=fg.int32))
    assert g.dtype == fg.int32 and g.tolist() == [4, 6]


def test_searchsorted_and_bucketize_give_int32_on_request():
    seq = fg.tensor([1.0, 3.0, 5.0])
    out = fg.searchsorted(seq, fg.tensor([0.0, 4.0, 9.0]), out_int32=True)
    assert out.dtype == fg.int32 and out.tolist() == [0, 2, 3]
    assert fg.searchsorted(seq, fg.tensor([4.0])).dtype == fg.int64
    assert fg.bucketize(fg.tensor([2.0]), seq, out_int32=True).dtype == fg.int32


def test_dtype_names_in_messages():
    with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
        fg.histc(fg.tensor([1, 2], dtype=fg.int32))
    with pytest.raises(
        TypeError, match=r"expected TensorOptions\(dtype=float, .*\(got TensorOptions\(dtype=short int,"
    ):
        fg.zeros(1).new(fg.zeros(2, dtype=fg.int16))


def _shifted(a: int, b: int, bits: int, signed: bool, left: bool) -> int:
    """PyTorch's shift of one element: counts outside ``0..bits`` give 0 left and the sign fill right."""
    if not 0 <= b < bits:
        return 0 if left or a >= 0 else -1
    if not left:
        return a >> b
    wrapped = (a << b) % (1 << bits)
    return wrapped - (1 << bits) if signed and wrapped >= 1 << (bits - 1) else wrapped


@pytest.mark.parametrize("dtype", INTEGERS)
@given(data=st.data())
@settings(max_examples=30, deadline=None)
def test_shifts_follow_the_rules_for_every_count(data, dtype):
    info = np.iinfo(NP[dtype])
    a = data.draw(arrays(dtype))
    counts = st.integers(max(int(info.min), -3), min(int(info.max), info.bits + 3))
    b = data.draw(hnp.arrays(NP[dtype], a.shape, elements=counts))
    signed = info.min < 0
    for left, op in ((True, fg.bitwise_left_shift), (False, fg.bitwise_right_shift)):
        out = op(fg.tensor(a), fg.tensor(b))
        assert out.dtype == dtype
        expected = [_shifted(int(x), int(y), info.bits, signed, left) for x, y in zip(a, b)]
        assert out.tolist() == expected, (left, a.tolist(), b.tolist())


def test_shift_and_bitwise_operators_match_torch():
    torch = _torch()

    def program(T):
        a = T.tensor([1, 2, -8, 100, 7])
        u = T.tensor([200, 1, 255, 3, 16], dtype=T.uint8)
        mask = T.tensor([True, False, True, True, False])
        outs = [a << 2, a >> 1, 2 << a.abs() % 5, 1000 >> a.abs() % 5, a << T.tensor([0, 1, 64, -1, 3])]
        outs += [u << 7, u >> 8, u >> T.tensor([200, 3, 9, 1, 2], dtype=T.uint8), u << a.abs() % 4]
        outs += [a.bitwise_left_shift(3), a.bitwise_right_shift(T.tensor(1, dtype=T.int8))]
        outs += [True & mask, False | mask, True ^ mask, 6 & a, 1 | a, 5 ^ a]
        return [(t.tolist(), str(t.dtype).split(".")[-1]) for t in outs]

    assert program(fg) == program(torch)


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "<<=", ">>="])
def test_augmented_bitwise_assignment_writes_in_place(op):
    a = fg.tensor([5, 12, -3])
    alias, view = a, a[1:]
    before = a._version
    namespace = {"a": a}
    exec(f"a {op} 2", namespace)
    assert namespace["a"] is alias
    expected = [eval(f"{v} {op[:-1]} 2") for v in (5, 12, -3)]
    assert a.tolist() == expected and view.tolist() == expected[1:]
    assert a._version > before


def test_shifts_of_other_dtypes_and_in_place_casts_raise_like_torch():
    cases = [
        (lambda T: T.tensor([1.0]) << 1, NotImplementedError, "\"lshift_cpu\" not implemented for 'Float'"),
        (lambda T: T.tensor([1]) >> 1.5, NotImplementedError, "\"rshift_cpu\" not implemented for 'Float'"),
        (lambda T: T.tensor([True]) << T.tensor([True]), NotImplementedError, "not implemented for 'Bool'"),
        (lambda T: T.tensor([1 + 0j]) << 1, NotImplementedError, "not implemented for 'ComplexFloat'"),
        (
            lambda T: T.tensor([5]).bitwise_and_(T.tensor([1.5])),
            RuntimeError,
            "result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda T: T.tensor([5]).bitwise_left_shift_(T.tensor([1.5])),
            RuntimeError,
            "result type Float can't be cast to the desired output type Long",
        ),
    ]
    modules = [fg]
    try:
        import torch

        modules.append(torch)
    except ImportError:
        pass
    for fn, kind, message in cases:
        for T in modules:
            with pytest.raises(kind) as raised:
                fn(T)
            assert message in str(raised.value), (T.__name__, str(raised.value))
