"""format_tensor must reproduce torch's repr(tensor) character for character."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ferrograd._tensor_str import format_tensor

torch = pytest.importorskip("torch")

DTYPES = [np.bool_, np.int64, np.float32, np.float64, np.complex64, np.complex128]
SPECIALS = [
    0.0,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    1e-5,
    1e8,
    1e9,
    0.5,
    1.0,
    123456.0,
]


def dtype_name(dtype: np.dtype) -> str:
    return np.dtype(dtype).name if np.dtype(dtype) != np.bool_ else "bool"


def torch_repr(array: np.ndarray) -> str:
    return repr(torch.from_numpy(array)).replace("torch.", "ferrograd.")


def check(array: np.ndarray, suffix: list[str] | None = None) -> None:
    got = format_tensor(array, dtype_name(array.dtype), suffix or [])
    assert got == torch_repr(array), f"\n{got}\n!=\n{torch_repr(array)}"


def float_elements(width: int) -> st.SearchStrategy[float]:
    cast = np.float32 if width == 32 else np.float64
    return st.one_of(
        st.floats(width=width),  # any magnitude, nan and inf included
        st.integers(-(10**6), 10**6).map(float),  # integer valued
        st.floats(-1000, 1000, width=width),
        st.sampled_from(SPECIALS),
    ).map(lambda x: float(cast(x)))


def complex_array(shape: tuple[int, ...], dtype, real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    out = np.empty(shape, dtype)
    out.real, out.imag = real, imag  # 1j * inf would turn the real part into nan
    return out


@st.composite
def small_arrays(draw, max_side: int = 8) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=max_side))
    if dtype.kind == "b":
        return draw(hnp.arrays(dtype, shape))
    if dtype.kind == "i":
        ints = st.one_of(st.integers(-100, 100), st.integers(-(2**63), 2**63 - 1))
        return draw(hnp.arrays(dtype, shape, elements=ints))
    width = 32 if dtype in (np.float32, np.complex64) else 64
    part = hnp.arrays(np.float32 if width == 32 else np.float64, shape, elements=float_elements(width))
    if dtype.kind == "f":
        return draw(part)
    return complex_array(shape, dtype, draw(part), draw(part))


def random_values(rng: np.random.Generator, style: str, n: int) -> np.ndarray:
    if style == "normal":
        values = rng.standard_normal(n)
    elif style == "integer":
        values = rng.integers(-1000, 1000, n).astype(np.float64)
    elif style == "big-integer":
        values = rng.integers(-(10**12), 10**12, n).astype(np.float64)
    elif style == "mixed":
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 13, n)
    elif style == "tiny":
        values = rng.uniform(1e-6, 1e-4, n)
    else:  # "special": mostly specials
        values = rng.choice(np.array(SPECIALS), n)
    mask = rng.random(n) < 0.05
    values[mask] = rng.choice(np.array(SPECIALS), int(mask.sum()))
    return values


@st.composite
def large_arrays(draw) -> np.ndarray:
    """Arrays with more than 1000 elements, which torch summarizes."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(st.lists(st.integers(1, 12), min_size=1, max_size=4))
    axis = draw(st.integers(0, len(shape) - 1))
    others = math.prod(shape) // shape[axis]
    shape[axis] = max(shape[axis], 1000 // others + 1 + draw(st.integers(0, 500)) // others)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    style = draw(st.sampled_from(["normal", "integer", "big-integer", "mixed", "tiny", "special"]))
    n = math.prod(shape)
    if dtype.kind == "b":
        return rng.random(n).reshape(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-(10 ** draw(st.integers(1, 18))), 10**5, n).reshape(shape)
    if dtype.kind == "f":
        return random_values(rng, style, n).astype(dtype).reshape(shape)
    part_dtype = np.float32 if dtype == np.complex64 else np.float64
    real = random_values(rng, style, n).astype(part_dtype).reshape(shape)
    imag = random_values(rng, draw(st.sampled_from(["normal", "mixed", "integer"])), n)
    return complex_array(tuple(shape), dtype, real, imag.astype(part_dtype).reshape(shape))


@settings(max_examples=500, deadline=None)
@given(small_arrays())
def test_small_arrays(array: np.ndarray) -> None:
    check(array)


@settings(max_examples=100, deadline=None)
@given(small_arrays(max_side=40))
def test_wrapped_arrays(array: np.ndarray) -> None:
    check(array)


@settings(max_examples=150, deadline=None)
@given(large_arrays())
def test_summarized_arrays(array: np.ndarray) -> None:
    assert array.size > 1000
    check(array)


@settings(max_examples=200, deadline=None)
@given(
    small_arrays(max_side=30).filter(lambda a: a.dtype.kind in "fc"),
    st.sampled_from(["leaf", "sub", "sum", "mul"]),
)
def test_autograd_suffixes(array: np.ndarray, op: str) -> None:
    t = torch.from_numpy(array).requires_grad_()
    if op == "sub":
        t = t - 1
    elif op == "sum":
        t = t.sum()
    elif op == "mul":
        t = t * 2
    suffix = ["requires_grad=True"] if t.grad_fn is None else [f"grad_fn=<{type(t.grad_fn).__name__}>"]
    expected = repr(t).replace("torch.", "ferrograd.")
    assert format_tensor(t.detach().numpy(), dtype_name(array.dtype), suffix) == expected


@pytest.mark.parametrize(
    ("array", "dtype", "suffix", "expected"),
    [
        (
            [-12.0, 65.0],
            "float32",
            ["grad_fn=<SubBackward0>"],
            "tensor([-12.,  65.], grad_fn=<SubBackward0>)",
        ),
        (
            53.0,
            "float32",
            ["grad_fn=<SumBackward0>"],
            "tensor(53., grad_fn=<SumBackward0>)",
        ),
        ([True, True], "bool", [], "tensor([True, True])"),
        (
            [1.0, 2.0],
            "float32",
            ["requires_grad=True"],
            "tensor([1., 2.], requires_grad=True)",
        ),
        (
            [1.0, 2.0],
            "float64",
            ["requires_grad=True"],
            "tensor([1., 2.], dtype=ferrograd.float64, requires_grad=True)",
        ),
        (np.zeros(0), "float32", [], "tensor([])"),
        (np.zeros(0), "float64", [], "tensor([], dtype=ferrograd.float64)"),
        (np.zeros((0, 3)), "float32", [], "tensor([], size=(0, 3))"),
        (
            np.zeros((0, 3)),
            "int64",
            [],
            "tensor([], size=(0, 3), dtype=ferrograd.int64)",
        ),
        (
            [1.5, -0.0, math.nan, math.inf],
            "float32",
            [],
            "tensor([1.5000, -0.0000,    nan,    inf])",
        ),
        ([1e-5, 1.0], "float32", [], "tensor([1.0000e-05, 1.0000e+00])"),
        ([1 + 2j, -1j], "complex64", [], "tensor([1.+2.j, -0.-1.j])"),
        (
            [1 + 2j, -1j],
            "complex128",
            [],
            "tensor([1.+2.j, -0.-1.j], dtype=ferrograd.complex128)",
        ),
        (7, "int64", [], "tensor(7)"),
    ],
)
def test_examples(array, dtype: str, suffix: list[str], expected: str) -> None:
    assert format_tensor(np.asarray(array, dtype=np.dtype(dtype)), dtype, suffix) == expected


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("size", [1, 17, 18, 19, 30])
def test_suffix_wrapping(dtype: str, size: int) -> None:
    """Suffixes move to a new line once the last line is too long."""
    t = torch.linspace(-3, 3, size, dtype=getattr(torch, dtype), requires_grad=True)
    for tensor in (t, t * 3, (t * 3).reshape(1, -1)):
        suffix = [f"grad_fn=<{type(tensor.grad_fn).__name__}>"] if tensor.grad_fn else ["requires_grad=True"]
        got = format_tensor(tensor.detach().numpy(), dtype, suffix)
        assert got == repr(tensor).replace("torch.", "ferrograd.")


@pytest.mark.parametrize(
    "array",
    [
        np.arange(5000).reshape(50, 100),
        np.arange(1001, dtype=np.float32),
        np.linspace(-1e10, 1e10, 3000).reshape(10, 10, 30),
        np.full((3, 400), np.nan),
        np.zeros((2, 3, 0, 5), dtype=np.complex64),
        np.array(-0.0),
        np.array(np.nan, dtype=np.float32),
        np.array(1e-20 - 3e20j),
        # "dtype=ferrograd.complex128" would not fit on the line, but torch breaks
        # lines for "dtype=torch.complex128"
        np.array([0, 100.5 + 1.00000001e08j]),
        np.array([0, 100.5 + 1.00000001e08j], dtype=np.complex64),
    ],
)
def test_edge_cases(array: np.ndarray) -> None:
    check(array)
