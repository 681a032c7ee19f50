"""Factories and random numbers: values, dtypes and errors against torch."""

import numpy as np
import pytest
from hypothesis import given, settings

import ferrograd as fg

from helpers import has_torch, shapes

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


def same(a, b):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
@pytest.mark.parametrize(
    "args",
    [
        (5,),
        (0,),
        (2, 9),
        (2, 9, 3),
        (9, 2, -3),
        (0, 1, 0.1),
        (1, 2.5, 0.5),
        (0.0, 5),
        (-3.5, 2.25, 0.75),
        (3, 3),
    ],
)
def test_arange_matches_torch(args):
    same(fg.arange(*args), torch.arange(*args))
    same(fg.arange(*args, dtype=fg.float64), torch.arange(*args, dtype=torch.float64))


@needs_torch
@pytest.mark.parametrize("args", [(0, 10, 0), (10, 0, 1), (-1,)])
def test_arange_errors(args):
    with pytest.raises(RuntimeError) as ours:
        fg.arange(*args)
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_arange_refuses_complex(dtype):
    name = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}[dtype]
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        with pytest.raises(NotImplementedError, match=f"\"arange_cpu\" not implemented for '{name}'"):
            T.arange(0, 3, dtype=getattr(T, dtype))


@needs_torch
@pytest.mark.parametrize("args", [(0, 1, 5), (0, 10, 4), (-2, 3, 1), (1, 2, 0), (0, 1, 7)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_linspace_matches_torch(args, dtype):
    ours = fg.linspace(*args, dtype=getattr(fg, dtype))
    theirs = torch.linspace(*args, dtype=getattr(torch, dtype))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    assert ours.dtype == getattr(fg, dtype)


def test_linspace_negative_steps():
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        fg.linspace(0, 1, -1)


@needs_torch
@pytest.mark.parametrize("n,m", [(0, None), (3, None), (2, 4), (4, 2)])
def test_eye(n, m):
    same(fg.eye(n, m) if m is not None else fg.eye(n), torch.eye(n, m) if m is not None else torch.eye(n))
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        fg.eye(-1)


@settings(max_examples=25, deadline=None)
@given(shape=shapes())
def test_like_factories(shape):
    x = fg.tensor(np.ones(shape), dtype=fg.float64)
    for fn, v in ((fg.zeros_like, 0), (fg.ones_like, 1), (fg.empty_like, None)):
        y = fn(x)
        assert y.shape == x.shape and y.dtype == fg.float64
        if v is not None:
            assert (y.numpy() == v).all()
    y = fg.full_like(x, 7, dtype=fg.int64)
    assert y.dtype == fg.int64 and y.shape == x.shape and (y.numpy() == 7).all()
    assert fg.zeros_like(x, requires_grad=True).requires_grad


@settings(max_examples=25, deadline=None)
@given(shape=shapes(max_side=6))
def test_random_shapes_and_ranges(shape):
    r = fg.rand(shape)
    assert r.shape == shape and r.dtype == fg.float32
    assert ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    assert fg.randn(*shape).shape == shape
    i = fg.randint(-2, 3, shape)
    assert i.dtype == fg.int64 and ((i.numpy() >= -2) & (i.numpy() < 3)).all()


def test_sizes_as_varargs_or_sequence():
    assert fg.rand(2, 3).shape == (2, 3)
    assert fg.randn([2, 3]).shape == (2, 3)
    assert fg.rand(()).shape == ()
    assert fg.randn(0, 3).shape == (0, 3)
    assert fg.randint(5, (4,)).shape == (4,)


def test_manual_seed_reproduces():
    for make in (
        lambda: fg.rand(100),
        lambda: fg.randn(70000),
        lambda: fg.randint(0, 100, (50,)),
        lambda: fg.randperm(20),
        lambda: fg.bernoulli(fg.full((30,), 0.5)),
        lambda: fg.empty(5, 5).normal_(),
        lambda: fg.empty(5).uniform_(-1, 1),
    ):
        g = fg.manual_seed(1234)
        a = make()
        fg.manual_seed(1234)
        b = make()
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert g.initial_seed() == 1234 == fg.initial_seed()
    c = fg.rand(100)
    assert not np.array_equal(c.numpy(), fg.rand(100).numpy())
    s = fg.seed()
    assert fg.initial_seed() == s


def test_distribution_moments():
    fg.manual_seed(0)
    x = fg.randn(200000).numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    u = fg.rand(200000, dtype=fg.float64).numpy()
    assert abs(u.mean() - 0.5) < 0.01
    n = fg.normal(3.0, 2.0, (100000,)).numpy()
    assert abs(n.mean() - 3) < 0.05 and abs(n.std() - 2) < 0.05
    b = fg.bernoulli(fg.full((100000,), 0.25)).numpy()
    assert abs(b.mean() - 0.25) < 0.01
    m = fg.normal(fg.zeros(3), fg.ones(3) * 0.0)
    assert (m.numpy() == 0).all()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_samples_draw_both_parts(dtype):
    """As in PyTorch: `randn` gives unit variance in all (half in each
    part), `normal_(mean, std)` puts `mean` in both parts, and `rand` and
    `uniform_` draw both parts from the range."""
    fg.manual_seed(0)
    dt = getattr(fg, dtype)
    z = fg.randn(200000, dtype=dt)
    assert z.dtype == dt
    re, im = z.real.numpy(), z.imag.numpy()
    assert abs(re.mean()) < 0.01 and abs(im.mean()) < 0.01
    assert abs(re.std() - 0.5**0.5) < 0.01 and abs(im.std() - 0.5**0.5) < 0.01
    assert abs(np.corrcoef(re, im)[0, 1]) < 0.01
    n = fg.empty(200000, dtype=dt).normal_(2.0, 3.0)
    assert abs(n.real.numpy().mean() - 2) < 0.05 and abs(n.imag.numpy().mean() - 2) < 0.05
    assert abs(n.real.numpy().std() - 3 * 0.5**0.5) < 0.05
    u = fg.rand(100000, dtype=dt)
    for part in (u.real.numpy(), u.imag.numpy()):
        assert part.min() >= 0 and part.max() < 1 and abs(part.mean() - 0.5) < 0.01
    v = fg.empty(1000, dtype=dt).uniform_(1, 2)
    assert (v.real.numpy() >= 1).all() and (v.imag.numpy() < 2).all()
    leaf = fg.randn(3, dtype=dt, requires_grad=True)
    (leaf.abs() ** 2).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 2 * leaf.detach().numpy(), rtol=1e-6)


def test_in_place_initialisers_on_views():
    x = fg.zeros(4, 6)
    x.t().uniform_(5, 6)
    assert ((x.numpy() >= 5) & (x.numpy() < 6)).all()
    v = x.narrow(1, 0, 2)
    v.normal_(100, 0.001)
    assert np.allclose(x.numpy()[:, :2], 100, atol=0.1) and (x.numpy()[:, 2:] < 6).all()
    before = x._version
    x.bernoulli_(1.0)
    assert (x.numpy() == 1).all() and x._version == before + 1
    y = fg.zeros(10, dtype=fg.int64).random_(3, 5)
    assert ((y.numpy() >= 3) & (y.numpy() < 5)).all()


def test_randperm_and_multinomial():
    p = fg.randperm(50)
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == fg.int64
    s = fg.multinomial(fg.tensor([0.0, 1.0, 0.0]), 4, replacement=True)
    assert s.tolist() == [1, 1, 1, 1]
    w = fg.multinomial(fg.tensor([[1.0, 2.0, 3.0]]), 3)
    assert sorted(w.tolist()[0]) == [0, 1, 2]


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.randn(3, dtype=T.long),
        lambda T: T.rand(3, dtype=T.long),
        lambda T: T.randint(5, 5, (3,)),
        lambda T: T.bernoulli(T.tensor([1.5])),
        lambda T: T.zeros(3).uniform_(2, 1),
        lambda T: T.zeros(3).normal_(0, -1),
        lambda T: T.ones(3).bernoulli_(1.5),
        lambda T: T.multinomial(T.tensor([-1.0, 2.0]), 1),
    ],
)
def test_random_errors_match_torch(call):
    with pytest.raises(RuntimeError) as ours:
        call(fg)
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    assert str(ours.value) == str(theirs.value)


def test_rand_like_family():
    x = fg.zeros(2, 3, dtype=fg.float64)
    assert fg.rand_like(x).dtype == fg.float64 and fg.randn_like(x).shape == (2, 3)
    r = fg.randint_like(x, 4)
    assert r.dtype == fg.float64 and ((r.numpy() >= 0) & (r.numpy() < 4)).all()
    r = fg.randint_like(x, 2, 4)
    assert ((r.numpy() >= 2) & (r.numpy() < 4)).all()
    assert fg.rand(2, requires_grad=True).requires_grad


def test_new_factories_take_the_tensor_dtype():
    x = fg.zeros(2, dtype=fg.float64)
    assert x.new_zeros(3, 4).dtype == fg.float64 and x.new_zeros((3, 4)).shape == (3, 4)
    assert x.new_ones(2).tolist() == [1.0, 1.0] and x.new_empty(0).shape == (0,)
    y = x.new_full((2, 2), 3, dtype=fg.int64)
    assert y.dtype == fg.int64 and y.tolist() == [[3, 3], [3, 3]]
    assert x.new_zeros(2, requires_grad=True).requires_grad


def test_a_generator_of_ones_own_draws_apart_from_the_global_one():
    g = fg.Generator().manual_seed(5)
    assert g.initial_seed() == 5 and g.device == "cpu"
    first = fg.rand(4, generator=g)
    np.testing.assert_array_equal(first.numpy(), fg.rand(4, generator=fg.Generator().manual_seed(5)).numpy())
    # Drawing from g leaves the global sequence where it was.
    fg.manual_seed(1)
    expected = fg.randn(3)
    fg.manual_seed(1)
    fg.randperm(7, generator=g)
    fg.empty(5).uniform_(generator=g)
    np.testing.assert_array_equal(fg.randn(3).numpy(), expected.numpy())
    # Its state round-trips, for every sampling op that takes a generator.
    state = g.get_state()
    draws = [
        fg.randint(0, 9, (4,), generator=g),
        fg.normal(0.0, 1.0, (3,), generator=g),
        fg.empty(3).normal_(generator=g),
        fg.multinomial(fg.ones(4), 2, generator=g),
    ]
    g.set_state(state)
    again = [
        fg.randint(0, 9, (4,), generator=g),
        fg.normal(0.0, 1.0, (3,), generator=g),
        fg.empty(3).normal_(generator=g),
        fg.multinomial(fg.ones(4), 2, generator=g),
    ]
    for a, b in zip(draws, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert fg.manual_seed(3) is not None and fg.default_generator.initial_seed() == 3
    with pytest.raises(TypeError, match="expected a ferrograd.Generator as generator, but got int"):
        fg.rand(2, generator=3)


HUGE = 2**62

# Sizes whose element count does not fit in memory's address range: each raises instead of
# panicking, aborting or wrapping the count around (a wrapped count once gave `ones(2**40, 2**30)`
# an empty buffer behind its shape).
OVERFLOWING_SIZES = {
    "zeros": lambda: fg.zeros(HUGE),
    "ones": lambda: fg.ones(2**40, 2**30),
    "empty": lambda: fg.empty(HUGE),
    "full": lambda: fg.full((HUGE,), 1.0),
    "randn": lambda: fg.randn(HUGE),
    "randint": lambda: fg.randint(0, 5, (HUGE,)),
    "new_zeros": lambda: fg.randn(2).new_zeros(HUGE),
    "new_full": lambda: fg.randn(2).new_full((HUGE,), 1.0),
    "arange": lambda: fg.arange(HUGE),
    "linspace": lambda: fg.linspace(0, 1, HUGE),
    "eye": lambda: fg.eye(2**40),
    "expand": lambda: fg.randn(1).expand(HUGE),
    # Two expanded (unallocated) operands whose broadcast result is too large.
    "broadcast": lambda: fg.ones(1, 1).expand(2**31, 1) + fg.ones(1, 1).expand(1, 2**31),
    "repeat": lambda: fg.randn(2).repeat(HUGE),
    "pad": lambda: fg.nn.functional.pad(fg.randn(2), (HUGE, 0)),
    "as_strided": lambda: fg.randn(4).as_strided((HUGE,), (0,)),
    "vander": lambda: fg.vander(fg.randn(3), HUGE),
    "one_hot": lambda: fg.nn.functional.one_hot(fg.tensor([HUGE])),
    "multinomial": lambda: fg.multinomial(fg.rand(3), HUGE, replacement=True),
    "cartesian_prod": lambda: fg.cartesian_prod(*[fg.randn(2**20)] * 3),
    "randperm": lambda: fg.randperm(HUGE),
    "diag": lambda: fg.diag(fg.randn(3), HUGE),
    "conv1d_padding": lambda: fg.nn.functional.conv1d(fg.randn(1, 1, 4), fg.randn(1, 1, 2), padding=HUGE),
    "conv2d_padding": lambda: fg.nn.functional.conv2d(
        fg.randn(1, 1, 4, 4), fg.randn(1, 1, 2, 2), padding=HUGE
    ),
    "interpolate": lambda: fg.nn.functional.interpolate(fg.randn(1, 1, 4), size=HUGE),
}


@pytest.mark.parametrize("name", sorted(OVERFLOWING_SIZES))
def test_sizes_past_the_address_range_raise(name):
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\["):
        OVERFLOWING_SIZES[name]()


def test_zero_sized_shapes_with_large_sides_stay_valid():
    assert fg.zeros(HUGE, 0).shape == (HUGE, 0)
    assert fg.randn(0).view(HUGE, HUGE, 0).numel() == 0
