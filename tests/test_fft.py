"""``ferrograd.fft``: values against ``numpy.fft`` for real, complex and integer inputs (hypothesis
draws shapes, dims, lengths and norms), gradients against finite differences in float64 and
complex128 (first and second order), and, when torch is importable, values, gradients,
``grad_fn`` names and error messages against ``torch.fft``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
import ferrograd.fft
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import has_torch

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

NORMS = [None, "backward", "ortho", "forward"]
DTYPES = ["float32", "float64", "complex64", "complex128"]
ONE_DIM = ["fft", "ifft", "rfft", "irfft"]
MANY_DIMS = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]
HERMITIAN = ["hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_IN = {"rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"}
# Functions that take the first half of a Hermitian spectrum and return real values.
HALF_SPECTRUM_IN = {"irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"}
COMPLEX_OUT = {
    "float32": np.complex64,
    "float64": np.complex128,
    "complex64": np.complex64,
    "complex128": np.complex128,
}
REAL_OUT = {"float32": np.float32, "float64": np.float64, "complex64": np.float32, "complex128": np.float64}


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype, ref):
    scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
    return (2e-4 * scale, 1e-4) if dtype in ("float32", "complex64") else (1e-10 * scale, 1e-9)


def _expected_dtype(name, dtype):
    return REAL_OUT[dtype] if name in HALF_SPECTRUM_IN else COMPLEX_OUT[dtype]


def test_importable_as_module_and_attribute():
    assert fg.fft is ferrograd.fft
    assert callable(fg.fft.fft) and callable(ferrograd.fft.irfftn)
    assert set(ferrograd.fft.__all__) >= set(
        ONE_DIM + MANY_DIMS + HERMITIAN + ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    )


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    name=st.sampled_from(ONE_DIM),
    dtype=st.sampled_from(DTYPES),
    norm=st.sampled_from(NORMS),
    n_delta=st.one_of(st.none(), st.integers(-3, 4)),
    data=st.data(),
)
def test_one_dim_values_match_numpy(shape, name, dtype, norm, n_delta, data):
    if name in REAL_IN and dtype.startswith("complex"):
        dtype = dtype.replace("complex64", "float32").replace("complex128", "float64")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    if name == "irfft":
        default = 2 * (size - 1)
        n = None if n_delta is None else max(1, default + n_delta)
        if n is None and default < 1:
            n = 1
    else:
        n = None if n_delta is None else max(1, size + n_delta)
    x = _data(np.random.default_rng(len(shape) * 7 + size), shape, dtype)
    want = getattr(np.fft, name)(x, n=n, axis=dim, norm=norm)
    got = getattr(fg.fft, name)(fg.tensor(x), n=n, dim=dim, norm=norm)
    assert got.numpy().dtype == _expected_dtype(name, dtype)
    atol, rtol = _tol(dtype, want)
    np.testing.assert_allclose(got.numpy(), want, atol=atol, rtol=rtol)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=2, max_size=4),
    name=st.sampled_from(MANY_DIMS),
    dtype=st.sampled_from(DTYPES),
    norm=st.sampled_from(NORMS),
    data=st.data(),
)
def test_many_dims_values_match_numpy(shape, name, dtype, norm, data):
    if name in REAL_IN and dtype.startswith("complex"):
        dtype = dtype.replace("complex64", "float32").replace("complex128", "float64")
    ndim = len(shape)
    if name.endswith("2"):
        k = 2
        dims = data.draw(
            st.one_of(st.just((-2, -1)), st.permutations(range(ndim)).map(lambda p: tuple(p[:2])))
        )
    else:
        k = data.draw(st.integers(1, ndim))
        dims = data.draw(st.one_of(st.none(), st.permutations(range(ndim)).map(lambda p: tuple(p[:k]))))
    use_s = data.draw(st.booleans())
    s = tuple(data.draw(st.integers(1, 6)) for _ in range(k)) if use_s else None
    if dims is None and s is None and name.startswith("irfft") and shape[-1] == 1:
        s = (1,) * ndim if name == "irfftn" else None
    if not use_s and name.startswith("irfft"):
        last = dims[-1] if dims is not None else (ndim - 1 if s is None else -1)
        if shape[last] == 1:
            s = tuple([-1] * (k - 1) + [1]) if dims is not None else tuple([-1] * (ndim - 1) + [1])
    x = _data(np.random.default_rng(ndim * 11 + shape[0]), shape, dtype)
    kwargs = {"norm": norm}
    if s is not None:
        kwargs["s"] = s
    if dims is not None:
        kwargs["dim"] = dims
    np_kwargs = {"norm": norm}
    if s is not None:
        np_s = list(s)
        np_axes = (
            list(dims)
            if dims is not None
            else (list(range(ndim - len(s), ndim)) if name.endswith("n") else [-2, -1])
        )
        for i, v in enumerate(np_s):
            if v == -1:
                np_s[i] = (
                    shape[np_axes[i]]
                    if not (name.startswith("irfft") and i == len(np_s) - 1)
                    else 2 * (shape[np_axes[i]] - 1)
                )
        np_kwargs["s"] = np_s
        np_kwargs["axes"] = np_axes
    elif dims is not None:
        np_kwargs["axes"] = list(dims)
    want = getattr(np.fft, name)(x, **np_kwargs)
    got = getattr(fg.fft, name)(fg.tensor(x), **kwargs)
    assert got.numpy().dtype == _expected_dtype(name, dtype)
    assert got.shape == want.shape
    atol, rtol = _tol(dtype, want)
    np.testing.assert_allclose(got.numpy(), want, atol=atol, rtol=rtol)


def _hermitian_reference(name, x, sizes, dims, norm):
    """``hfftn``/``ihfftn`` from NumPy: the one-dimensional ``hfft``/``ihfft`` along the last of
    ``dims`` and ``fftn``/``ifftn`` along the others (``-1`` in ``sizes`` keeping the default)."""
    *rest, last = [d % x.ndim for d in dims]
    rest_sizes = [x.shape[d] if n == -1 else n for d, n in zip(rest, sizes[:-1])]
    n = sizes[-1]
    if name.startswith("hfft"):
        y = np.fft.fftn(x, s=rest_sizes, axes=rest, norm=norm) if rest else x
        return np.fft.hfft(y, n=2 * (x.shape[last] - 1) if n == -1 else n, axis=last, norm=norm)
    y = np.fft.ihfft(x, n=x.shape[last] if n == -1 else n, axis=last, norm=norm)
    return np.fft.ifftn(y, s=rest_sizes, axes=rest, norm=norm) if rest else y


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(HERMITIAN),
    dtype=st.sampled_from(DTYPES),
    norm=st.sampled_from(NORMS),
    negative_dims=st.booleans(),
    data=st.data(),
)
def test_hermitian_values_match_numpy_and_torch(name, dtype, norm, negative_dims, data):
    if name in REAL_IN and dtype.startswith("complex"):
        dtype = dtype.replace("complex64", "float32").replace("complex128", "float64")
    one_dim = name in ("hfft", "ihfft")
    pair = name.endswith("2")
    shape = data.draw(st.lists(st.integers(1, 5), min_size=2 if pair else 1, max_size=3))
    ndim = len(shape)
    k = 1 if one_dim else 2 if pair else data.draw(st.integers(1, ndim))
    dims = data.draw(st.one_of(st.none(), st.permutations(range(ndim)).map(lambda p: tuple(p[:k]))))
    if dims is not None and negative_dims:
        dims = tuple(d - ndim for d in dims)
    size = st.integers(1, 6) if one_dim else st.one_of(st.just(-1), st.integers(1, 6))
    s = data.draw(st.one_of(st.none(), st.tuples(*[size] * k)))
    if dims is None and s is None and name.endswith("n"):
        k = ndim
    transformed = dims if dims is not None else tuple(range(ndim - k, ndim))
    if name.startswith("hfft") and shape[transformed[-1]] == 1 and (s is None or s[-1] == -1):
        # The default length there, 2 * (1 - 1), is refused (see the error tests).
        s = (s or (-1,) * k)[:-1] + (data.draw(st.integers(1, 6)),)
    x = _data(np.random.default_rng(ndim * 13 + shape[-1]), shape, dtype)
    if one_dim:
        kwargs = {"n": None if s is None else s[0], "dim": transformed[0], "norm": norm}
    else:
        kwargs = {"s": s, "dim": dims, "norm": norm} if dims is not None else {"s": s, "norm": norm}
    want = _hermitian_reference(name, x, s or (-1,) * k, transformed, norm)
    got = getattr(fg.fft, name)(fg.tensor(x), **kwargs)
    assert got.numpy().dtype == _expected_dtype(name, dtype)
    assert got.shape == want.shape
    atol, rtol = _tol(dtype, want)
    np.testing.assert_allclose(got.numpy(), want, atol=atol, rtol=rtol)
    if has_torch:
        expected = getattr(torch.fft, name)(torch.tensor(x), **kwargs).resolve_conj().numpy()
        assert got.numpy().dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected, atol=atol, rtol=rtol)


@pytest.mark.parametrize("n", [1, 2, 5, 6])
@pytest.mark.parametrize("norm", NORMS)
def test_hfft_transforms_the_whole_hermitian_signal_and_ihfft_inverts_it(n, norm):
    rng = np.random.default_rng(n)
    half = rng.standard_normal((3, n // 2 + 1)) + 1j * rng.standard_normal((3, n // 2 + 1))
    # The entries a Hermitian signal of n points has real: the first and, for even n, the middle.
    half[:, 0] = half[:, 0].real
    if n % 2 == 0:
        half[:, -1] = half[:, -1].real
    mirrored = np.conj(half[:, 1 : (n + 1) // 2][:, ::-1])
    whole = np.concatenate([half, mirrored], axis=1)
    spectrum = fg.fft.hfft(fg.tensor(half), n=n, norm=norm)
    assert spectrum.dtype == fg.float64
    np.testing.assert_allclose(spectrum.numpy(), np.fft.fft(whole, norm=norm).real, atol=1e-12)
    back = fg.fft.ihfft(spectrum, norm=norm)
    np.testing.assert_allclose(back.numpy(), half, atol=1e-12)


def test_integer_inputs_promote_to_complex64_and_float32():
    x = np.arange(6)
    assert fg.fft.fft(fg.tensor(x)).dtype == fg.complex64
    assert fg.fft.rfft(fg.tensor(x)).dtype == fg.complex64
    assert fg.fft.irfft(fg.tensor(x)).dtype == fg.float32
    assert fg.fft.fftn(fg.tensor(x.reshape(2, 3))).dtype == fg.complex64
    np.testing.assert_allclose(fg.fft.fft(fg.tensor(x)).numpy(), np.fft.fft(x), atol=1e-5)
    np.testing.assert_allclose(fg.fft.irfft(fg.tensor(x)).numpy(), np.fft.irfft(x), atol=1e-5)
    assert fg.fft.hfft(fg.tensor(x)).dtype == fg.float32
    assert fg.fft.ihfft(fg.tensor(x)).dtype == fg.complex64
    assert fg.fft.hfftn(fg.tensor(x.reshape(2, 3))).dtype == fg.float32
    np.testing.assert_allclose(fg.fft.hfft(fg.tensor(x)).numpy(), np.fft.hfft(x), atol=1e-4)
    np.testing.assert_allclose(fg.fft.ihfft(fg.tensor(x)).numpy(), np.fft.ihfft(x), atol=1e-5)
    flags = x % 3 == 0
    assert fg.fft.hfft(fg.tensor(flags)).dtype == fg.float32
    np.testing.assert_allclose(fg.fft.hfft(fg.tensor(flags)).numpy(), np.fft.hfft(flags), atol=1e-5)
    np.testing.assert_allclose(
        fg.fft.ihfft2(fg.tensor(flags.reshape(2, 3))).numpy(),
        np.fft.ifft(np.fft.ihfft(flags.reshape(2, 3)), axis=0),
        atol=1e-6,
    )


def test_non_contiguous_inputs_and_large_batches():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 7)) + 1j * rng.standard_normal((40, 7))
    t = fg.tensor(x).t()
    assert not t.is_contiguous()
    np.testing.assert_allclose(fg.fft.fft(t, dim=0).numpy(), np.fft.fft(x.T, axis=0), atol=1e-10)
    np.testing.assert_allclose(fg.fft.ifft(t).numpy(), np.fft.ifft(x.T), atol=1e-10)
    # Large enough to split across threads, along the last and a middle dim.
    big = rng.standard_normal((64, 33, 40))
    np.testing.assert_allclose(fg.fft.fft(fg.tensor(big), dim=1).numpy(), np.fft.fft(big, axis=1), atol=1e-9)
    np.testing.assert_allclose(fg.fft.rfft(fg.tensor(big)).numpy(), np.fft.rfft(big), atol=1e-9)
    spec = np.fft.rfft(big, axis=1)
    np.testing.assert_allclose(fg.fft.irfft(fg.tensor(spec), n=33, dim=1).numpy(), big, atol=1e-10)
    np.testing.assert_allclose(fg.fft.fftn(fg.tensor(big)).numpy(), np.fft.fftn(big), atol=1e-8)
    np.testing.assert_allclose(fg.fft.hfft(t, dim=0).numpy(), np.fft.hfft(x.T, axis=0), atol=1e-9)
    np.testing.assert_allclose(fg.fft.ihfft(t.real).numpy(), np.fft.ihfft(x.T.real), atol=1e-10)
    permuted = fg.tensor(big).permute(2, 0, 1)
    want = _hermitian_reference("ihfftn", big.transpose(2, 0, 1), (-1, 9), (0, 2), "ortho")
    got = fg.fft.ihfftn(permuted, s=(-1, 9), dim=(0, 2), norm="ortho")
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)
    want = _hermitian_reference("hfftn", x.T, (-1, -1), (1, 0), None)
    np.testing.assert_allclose(fg.fft.hfft2(t, dim=(1, 0)).numpy(), want, atol=1e-9)


def test_round_trips():
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 16, 17):
        x = fg.tensor(rng.standard_normal((3, n)))
        np.testing.assert_allclose(fg.fft.irfft(fg.fft.rfft(x), n=n).numpy(), x.numpy(), atol=1e-12)
        np.testing.assert_allclose(fg.fft.ifft(fg.fft.fft(x)).real.numpy(), x.numpy(), atol=1e-12)
        for norm in ("ortho", "forward"):
            y = fg.fft.irfftn(fg.fft.rfftn(x, norm=norm), s=(3, n), norm=norm)
            np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-12)


# Gradients: (function, input dtype, keyword arguments).
GRAD_CASES = [
    ("fft", "complex128", {}),
    ("fft", "complex128", {"n": 7, "norm": "ortho"}),
    ("fft", "complex128", {"n": 3, "dim": 0}),
    ("fft", "float64", {}),
    ("fft", "float64", {"n": 8, "norm": "forward"}),
    ("ifft", "complex128", {"norm": "backward"}),
    ("ifft", "complex128", {"n": 6, "dim": 0, "norm": "forward"}),
    ("ifft", "float64", {"n": 4}),
    ("rfft", "float64", {}),
    ("rfft", "float64", {"n": 6, "norm": "ortho"}),
    ("rfft", "float64", {"n": 3, "dim": 0}),
    ("irfft", "complex128", {}),
    ("irfft", "complex128", {"n": 5, "norm": "ortho"}),
    ("irfft", "complex128", {"n": 9, "dim": 0, "norm": "forward"}),
    ("irfft", "float64", {"n": 4}),
    ("fft2", "complex128", {"s": (3, 6)}),
    ("ifftn", "complex128", {"dim": (0,), "norm": "ortho"}),
    ("fftn", "float64", {}),
    ("rfft2", "float64", {"norm": "forward"}),
    ("rfftn", "float64", {"s": (5, 3)}),
    ("irfft2", "complex128", {}),
    ("irfftn", "complex128", {"s": (4, 7), "norm": "ortho"}),
    ("irfftn", "complex128", {"dim": (1, 0)}),
]
HERMITIAN_GRAD_CASES = [
    ("hfft", "complex128", {}),
    ("hfft", "complex128", {"n": 5, "norm": "ortho"}),
    ("hfft", "complex128", {"n": 12, "dim": 0, "norm": "forward"}),
    ("hfft", "float64", {"n": 6}),
    ("ihfft", "float64", {}),
    ("ihfft", "float64", {"n": 8, "norm": "forward"}),
    ("ihfft", "float64", {"n": 3, "dim": 0, "norm": "ortho"}),
    ("hfft2", "complex128", {}),
    ("hfft2", "complex128", {"s": (3, 7), "norm": "ortho"}),
    ("hfftn", "complex128", {"dim": (1, 0), "norm": "forward"}),
    ("hfftn", "float64", {"s": (-1, 4)}),
    ("ihfft2", "float64", {"norm": "ortho"}),
    ("ihfftn", "float64", {"s": (6, 3)}),
    ("ihfftn", "float64", {"dim": (0,), "norm": "forward"}),
]


def _grad_input(dtype, shape=(4, 5), seed=0):
    return fg.tensor(_data(np.random.default_rng(seed), shape, dtype), requires_grad=True)


@pytest.mark.parametrize("name,dtype,kwargs", GRAD_CASES + HERMITIAN_GRAD_CASES)
def test_gradients_match_finite_differences(name, dtype, kwargs):
    f = getattr(fg.fft, name)
    x = _grad_input(dtype)
    assert gradcheck(lambda t: f(t, **kwargs), (x,))


@pytest.mark.parametrize("name,dtype,kwargs", GRAD_CASES[::2] + HERMITIAN_GRAD_CASES)
def test_second_derivatives_match_finite_differences(name, dtype, kwargs):
    f = getattr(fg.fft, name)
    x = _grad_input(dtype, shape=(3, 4), seed=1)
    # A non-linear loss so that the second derivative is not zero.
    assert gradgradcheck(lambda t: (f(t, **kwargs).abs() ** 2).sum(), (x,))
    assert gradgradcheck(lambda t: f(t, **kwargs), (x,))


def test_gradient_of_a_real_parameter_through_a_spectrum_is_real():
    x = fg.tensor(np.linspace(-1, 1, 8), requires_grad=True)
    loss = (fg.fft.rfft(x).abs() ** 2).sum()
    loss.backward()
    assert x.grad.dtype == fg.float64
    # d|X_k|^2/dx_j = 2 Re(conj(X_k) exp(-2 pi i jk/8)), summed over the half spectrum k = 0..4.
    xn = x.detach().numpy()
    expected = np.zeros(8)
    for k in range(5):
        c = np.exp(-2j * np.pi * k * np.arange(8) / 8)
        expected += 2 * np.real(np.conj(np.sum(xn * c)) * c)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-10)


def test_grad_fn_names():
    x = fg.randn(4, 6, requires_grad=True)
    z = fg.tensor(_data(np.random.default_rng(8), (4, 6), "complex64"), requires_grad=True)
    assert fg.fft.fft(z).grad_fn.name() == "FftC2CBackward0"
    assert fg.fft.fft(x).grad_fn.name() == "FftR2CBackward0"
    assert fg.fft.ifft(x).grad_fn.name() == "ConjBackward0"
    assert fg.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert fg.fft.irfft(z).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.irfft(x).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.fftn(x).grad_fn.name() == "FftC2CBackward0"
    padded = fg.fft.fft(z, n=9).grad_fn
    assert padded.name() == "FftC2CBackward0"
    assert padded.next_functions[0][0].name() == "ConstantPadNdBackward0"
    trimmed = fg.fft.fft(z, n=3).grad_fn
    assert trimmed.next_functions[0][0].name() == "SliceBackward0"
    assert fg.fft.hfft(x).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.hfft(z).grad_fn.next_functions[0][0].name() == "ConjBackward0"
    assert fg.fft.hfftn(z).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.ihfft(x).grad_fn.name() == "ConjBackward0"
    # Over several dims, the inverse complex transforms come last.
    assert fg.fft.ihfft2(x).grad_fn.name() == "FftC2CBackward0"
    assert fg.fft.ihfftn(x, dim=(0,)).grad_fn.name() == "ConjBackward0"


@pytest.mark.parametrize(
    "call,kind,message",
    [
        (lambda T, x, z: T.fft.fft(z, n=0), RuntimeError, r"Invalid number of data points \(0\) specified"),
        (lambda T, x, z: T.fft.fft(x, n=-1), RuntimeError, r"Invalid number of data points \(-1\) specified"),
        (lambda T, x, z: T.fft.fft(z, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
        (
            lambda T, x, z: T.fft.rfft(z),
            RuntimeError,
            "rfft expects a real input tensor, but got ComplexFloat",
        ),
        (
            lambda T, x, z: T.fft.fft(z, dim=2),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        ),
        (
            lambda T, x, z: T.fft.fft(T.tensor(1.0)),
            IndexError,
            "Dimension specified as -1 but tensor has no dimensions",
        ),
        (
            lambda T, x, z: T.fft.irfft(z[:, :1]),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (
            lambda T, x, z: T.fft.fft(T.zeros(3, 0)),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (
            lambda T, x, z: T.fft.fftn(x, s=(3,), dim=(0, 1)),
            RuntimeError,
            "When given, dim and shape arguments must have the same length",
        ),
        (
            lambda T, x, z: T.fft.fftn(x, s=(3, 4, 5)),
            RuntimeError,
            "Got shape with 3 values but input tensor only has 2 dimensions.",
        ),
        (lambda T, x, z: T.fft.fftn(x, dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
        (
            lambda T, x, z: T.fft.fft2(T.zeros(3)),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)",
        ),
        (
            lambda T, x, z: T.fft.rfftn(z),
            RuntimeError,
            "rfftn expects a real-valued input tensor, but got ComplexFloat",
        ),
        (lambda T, x, z: T.fft.rfftn(x, dim=()), RuntimeError, "rfftn must transform at least one axis"),
        (lambda T, x, z: T.fft.irfftn(z, dim=()), RuntimeError, "irfftn must transform at least one axis"),
        (
            lambda T, x, z: T.fft.fftn(x, s=(0, 3)),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (
            lambda T, x, z: T.fft.irfftn(z[:, :1]),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (lambda T, x, z: T.fft.hfft(x, n=0), RuntimeError, r"Invalid number of data points \(0\) specified"),
        (
            lambda T, x, z: T.fft.hfft(z[:, :1]),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (lambda T, x, z: T.fft.hfft(z, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
        (
            lambda T, x, z: T.fft.hfft(T.tensor(1.0)),
            IndexError,
            "Dimension specified as -1 but tensor has no dimensions",
        ),
        (
            lambda T, x, z: T.fft.hfft2(T.zeros(3)),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)",
        ),
        (
            lambda T, x, z: T.fft.hfft([1.0, 2.0]),
            TypeError,
            r"fft_hfft\(\): argument 'input' \(position 1\) must be Tensor, not list",
        ),
        (
            lambda T, x, z: T.fft.ihfftn((1.0,)),
            TypeError,
            r"fft_ihfftn\(\): argument 'input' \(position 1\) must be Tensor, not tuple",
        ),
        # ihfft refuses a complex input before it looks at the other arguments.
        (
            lambda T, x, z: T.fft.ihfft(z),
            RuntimeError,
            "ihfft expects a real input tensor, but got ComplexFloat",
        ),
        (
            lambda T, x, z: T.fft.ihfft(z.to(T.complex128), dim=2),
            RuntimeError,
            "ihfft expects a real input tensor, but got ComplexDouble",
        ),
        (
            lambda T, x, z: T.fft.ihfft(x, dim=2),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        ),
        (lambda T, x, z: T.fft.hfftn(x, dim=()), RuntimeError, "hfftn must transform at least one axis"),
        (lambda T, x, z: T.fft.hfft2(z, dim=()), RuntimeError, "hfftn must transform at least one axis"),
        (lambda T, x, z: T.fft.hfftn(x, s=()), RuntimeError, "hfftn must transform at least one axis"),
        (lambda T, x, z: T.fft.hfftn(T.tensor(1.0)), RuntimeError, "hfftn must transform at least one axis"),
        (
            lambda T, x, z: T.fft.hfft2(x, s=()),
            RuntimeError,
            "When given, dim and shape arguments must have the same length",
        ),
        (
            lambda T, x, z: T.fft.hfftn(x[:, :1]),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (lambda T, x, z: T.fft.ihfftn(x, s=()), RuntimeError, "ihfftn must transform at least one axis"),
        (lambda T, x, z: T.fft.ihfft2(z, dim=()), RuntimeError, "ihfftn must transform at least one axis"),
        # ihfftn checks its arguments, the norm mode included, before refusing a complex input.
        (
            lambda T, x, z: T.fft.ihfftn(z),
            RuntimeError,
            "Only supports floating-point dtypes, but found: ComplexFloat",
        ),
        (lambda T, x, z: T.fft.ihfft2(z, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
        (lambda T, x, z: T.fft.ihfftn(z, dim=(0, -2)), RuntimeError, "FFT dims must be unique"),
        (
            lambda T, x, z: T.fft.ihfftn(x, dim=(0, 5)),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)",
        ),
        (
            lambda T, x, z: T.fft.ihfftn(T.tensor(1.0), dim=0),
            IndexError,
            "Dimension specified as 0 but tensor has no dimensions",
        ),
        (
            lambda T, x, z: T.fft.ihfftn(z, s=(1, 2, 3)),
            RuntimeError,
            "Got shape with 3 values but input tensor only has 2 dimensions.",
        ),
        (
            lambda T, x, z: T.fft.ihfft2(x, s=(3,)),
            RuntimeError,
            "When given, dim and shape arguments must have the same length",
        ),
        (
            lambda T, x, z: T.fft.ihfft2(x, s=(3, 0)),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        ),
        (
            lambda T, x, z: T.fft.fftfreq(5, dtype=T.int64),
            RuntimeError,
            "fftfreq requires a floating point or complex dtype",
        ),
        (
            lambda T, x, z: T.fft.rfft2(x, dim=None),
            TypeError,
            r"fft_rfft2\(\): argument 'dim' must be tuple of ints, not NoneType",
        ),
        (
            lambda T, x, z: T.fft.ihfft2(x, dim=None),
            TypeError,
            r"fft_ihfft2\(\): argument 'dim' must be tuple of ints, not NoneType",
        ),
        (
            lambda T, x, z: T.fft.rfftfreq(-4),
            RuntimeError,
            r"Trying to create tensor with negative dimension -1: \[-1\]",
        ),
        (
            lambda T, x, z: T.fft.rfftfreq(2.5),
            TypeError,
            r"fft_rfftfreq\(\): argument 'n' \(position 1\) must be int, not float",
        ),
        (
            lambda T, x, z: T.fft.fftshift([1.0, 2.0]),
            TypeError,
            r"fft_fftshift\(\): argument 'input' \(position 1\) must be Tensor, not list",
        ),
        (
            lambda T, x, z: T.fft.fftshift(x, dim=5),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)",
        ),
    ],
)
def test_errors_match_pytorch(call, kind, message):
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        x = T.zeros(4, 6)
        z = T.zeros(4, 6, dtype=T.complex64)
        with pytest.raises(kind, match=message):
            call(T, x, z)


def test_fft_of_a_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        fg.fft.fft([1.0, 2.0])


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_match_numpy(n, d):
    f = fg.fft.fftfreq(n, d)
    assert f.dtype == fg.float32 and f.shape == (n,)
    r = fg.fft.rfftfreq(n, d=d, dtype=fg.float64)
    assert r.dtype == fg.float64 and r.shape == (n // 2 + 1,)
    if n:  # NumPy divides by zero for n = 0
        np.testing.assert_allclose(f.numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
        np.testing.assert_allclose(r.numpy(), np.fft.rfftfreq(n, d), rtol=1e-12)
    assert fg.fft.fftfreq(n, requires_grad=True).requires_grad


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [0.0, -0.0, 0.5])
def test_frequencies_divide_as_floats_do(n, d):
    # 1 / (n * d) in IEEE arithmetic: infinite for a zero spacing (or n = 0), NaN where it meets 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.float64(1.0) / np.float64(n * d)
        want_f = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) * scale
        want_r = np.arange(n // 2 + 1) * scale
    got_f = fg.fft.fftfreq(n, d, dtype=fg.float64, layout=None)
    got_r = fg.fft.rfftfreq(n, d, dtype=fg.float64)
    np.testing.assert_array_equal(got_f.numpy(), want_f)
    np.testing.assert_array_equal(got_r.numpy(), want_r)
    if has_torch:
        np.testing.assert_array_equal(got_f.numpy(), torch.fft.fftfreq(n, d, dtype=torch.float64).numpy())
        np.testing.assert_array_equal(got_r.numpy(), torch.fft.rfftfreq(n, d, dtype=torch.float64).numpy())


@pytest.mark.parametrize("n", [-1, -2, -3])
def test_rfftfreq_of_a_negative_length_halves_it_towards_zero(n):
    # PyTorch sizes the result n / 2 + 1 with the division rounded towards zero.
    got = fg.fft.rfftfreq(n, dtype=fg.float64)
    assert got.shape == (int(n / 2) + 1,)
    np.testing.assert_array_equal(got.numpy(), np.arange(int(n / 2) + 1) / n)
    if has_torch:
        np.testing.assert_array_equal(got.numpy(), torch.fft.rfftfreq(n, dtype=torch.float64).numpy())


@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 1, 6)])
def test_shifts_match_numpy(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t = fg.tensor(x)
    np.testing.assert_array_equal(fg.fft.fftshift(t).numpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(fg.fft.ifftshift(t).numpy(), np.fft.ifftshift(x))
    np.testing.assert_array_equal(fg.fft.fftshift(t, dim=0).numpy(), np.fft.fftshift(x, axes=0))
    np.testing.assert_array_equal(fg.fft.ifftshift(t, dim=(-1,)).numpy(), np.fft.ifftshift(x, axes=(-1,)))
    np.testing.assert_array_equal(fg.fft.ifftshift(fg.fft.fftshift(t)).numpy(), x)


def test_shift_gradient_is_the_inverse_shift():
    x = fg.tensor(np.arange(7.0), requires_grad=True)
    fg.fft.fftshift(x).backward(fg.tensor(np.arange(7.0) * 10))
    np.testing.assert_array_equal(x.grad.numpy(), np.fft.ifftshift(np.arange(7.0) * 10))
    assert not np.array_equal(x.grad.numpy(), np.arange(7.0) * 10)


# Against torch: values, gradients for a random cotangent and grad_fn names.
TORCH_CASES = (
    GRAD_CASES
    + HERMITIAN_GRAD_CASES
    + [
        ("fft", "float32", {"n": 10}),
        ("rfft", "float32", {"norm": "ortho"}),
        ("irfft", "complex64", {"n": 7}),
        ("ifft2", "float64", {"s": (2, 9)}),
        ("fftn", "complex64", {"dim": ()}),
        ("irfftn", "float64", {}),
        ("hfft", "complex64", {"n": 7}),
        ("hfft2", "float32", {"dim": (1, 0)}),
        ("ihfft", "float32", {"norm": "ortho"}),
        ("ihfftn", "float32", {"s": (-1, 2)}),
    ]
)


@needs_torch
@pytest.mark.parametrize("name,dtype,kwargs", TORCH_CASES)
def test_values_gradients_and_names_match_torch(name, dtype, kwargs):
    x_np = _data(np.random.default_rng(5), (4, 5), dtype)
    x = fg.tensor(x_np, requires_grad=True)
    tx = torch.tensor(x_np, requires_grad=True)
    out = getattr(fg.fft, name)(x, **kwargs)
    tout = getattr(torch.fft, name)(tx, **kwargs)
    assert out.dtype.is_complex == tout.dtype.is_complex
    assert out.shape == tuple(tout.shape)
    assert out.grad_fn.name() == tout.grad_fn.name()
    atol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    np.testing.assert_allclose(
        out.detach().numpy(), tout.detach().resolve_conj().numpy(), atol=atol, rtol=1e-4
    )
    v = _data(
        np.random.default_rng(6), tuple(tout.shape), "complex128" if tout.dtype.is_complex else "float64"
    )
    v = v.astype(tout.detach().resolve_conj().numpy().dtype)
    out.backward(fg.tensor(v))
    tout.backward(torch.tensor(v))
    assert x.grad.dtype.is_complex == tx.grad.dtype.is_complex
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.resolve_conj().numpy(), atol=atol, rtol=1e-4)


@needs_torch
def test_double_backward_matches_torch():
    x_np = _data(np.random.default_rng(7), (3, 6), "float64")
    results = []
    for T in (fg, torch):
        x = T.tensor(x_np, requires_grad=True)
        y = T.fft.irfft(T.fft.rfft(x) * T.fft.rfft(x), n=6)
        (g,) = T.autograd.grad((y**2).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-9)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-8)


@needs_torch
@pytest.mark.parametrize("norm", NORMS)
def test_hermitian_double_backward_matches_torch(norm):
    z_np = _data(np.random.default_rng(9), (3, 4), "complex128")
    results = []
    for T in (fg, torch):
        z = T.tensor(z_np, requires_grad=True)
        signal = T.fft.hfft2(z, s=(3, 7), norm=norm)
        y = T.fft.ihfftn(signal * signal, dim=(1, 0), norm=norm)
        (g,) = T.autograd.grad((y.abs() ** 2).sum(), z, create_graph=True)
        (gg,) = T.autograd.grad((g.abs() ** 2).sum(), z)
        results.append((g.detach().resolve_conj().numpy(), gg.resolve_conj().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-9, rtol=1e-9)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-8, rtol=1e-9)


STFT_CASES = [
    dict(n_fft=8),
    dict(n_fft=8, hop_length=2, win_length=6, window="hann"),
    dict(n_fft=16, hop_length=4, center=False, window="hann", normalized=True),
    dict(n_fft=8, onesided=False, pad_mode="constant"),
    dict(n_fft=10, hop_length=3, window="hann", pad_mode="replicate"),
]


def _stft_arguments(T, case):
    kwargs = dict(case)
    if kwargs.get("window") == "hann":
        kwargs["window"] = T.hann_window(kwargs.get("win_length", kwargs["n_fft"]), dtype=T.float64)
    return kwargs


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("case", STFT_CASES)
def test_istft_inverts_stft_and_both_differentiate(case):
    x = np.random.default_rng(7).standard_normal((2, 41))
    kwargs = _stft_arguments(fg, case)
    spectrum = fg.stft(fg.tensor(x), return_complex=True, **kwargs)
    frames = 1 + (
        41 + (0 if case.get("center") is False else 2 * (case["n_fft"] // 2)) - case["n_fft"]
    ) // kwargs.get("hop_length", case["n_fft"] // 4)
    bins = case["n_fft"] if case.get("onesided") is False else case["n_fft"] // 2 + 1
    assert tuple(spectrum.shape) == (2, bins, frames)
    kwargs.pop("pad_mode", None)
    if case.get("center") is False:
        # A Hann window is zero at both ends, so the ends cannot be recovered, as in PyTorch.
        with pytest.raises(RuntimeError, match="window overlap add min"):
            fg.istft(spectrum, length=41, **kwargs)
        return
    np.testing.assert_allclose(fg.istft(spectrum, length=41, **kwargs).numpy(), x, atol=1e-12)
    signal = fg.tensor(x[0], requires_grad=True)
    assert gradcheck(lambda s: fg.stft(s, return_complex=True, **_stft_arguments(fg, case)).abs(), (signal,))


def test_stft_of_a_real_signal_needs_return_complex():
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        fg.stft(fg.randn(32), 8)
    with pytest.warns(UserWarning):
        assert tuple(fg.randn(32).stft(8, window=fg.ones(8), return_complex=False).shape) == (5, 17, 2)
    with pytest.warns(UserWarning, match="A window was not provided"):
        fg.stft(fg.randn(32), 8, return_complex=True)


@needs_torch
@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("case", STFT_CASES)
def test_stft_and_istft_match_torch(case):
    x = np.random.default_rng(8).standard_normal((2, 41))
    results = []
    for T in (fg, torch):
        signal = T.tensor(x, requires_grad=True)
        spectrum = T.stft(signal, return_complex=True, **_stft_arguments(T, case))
        spectrum.abs().sum().backward()
        out = [spectrum.detach().numpy(), signal.grad.numpy()]
        if case.get("center") is not False:
            kwargs = _stft_arguments(T, case)
            kwargs.pop("pad_mode", None)
            out.append(T.istft(spectrum.detach(), length=41, **kwargs).numpy())
        results.append(out)
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
