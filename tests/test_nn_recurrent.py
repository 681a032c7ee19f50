"""Recurrent layers (RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU): outputs and the gradients of
every parameter and input against torch with the same weights (float32 and float64), float64
finite differences without torch, parameter names, shapes and initialisation, dropout between
layers, a small sequence model that learns, and torch's errors for bad arguments."""

import math
import re
import warnings

import numpy as np
import pytest

import ferrograd as fg

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")

TOL = {"float32": {"atol": 2e-5, "rtol": 2e-4}, "float64": {"atol": 1e-11, "rtol": 1e-9}}


def flat(out):
    """The tensors of a nested tuple of outputs, in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [] if out is None else [out]


def to_torch(a, dtype_name, requires_grad=False):
    return torch.tensor(a, dtype=getattr(torch, dtype_name), requires_grad=requires_grad)


def to_fg(a, dtype_name, requires_grad=False):
    return fg.tensor(a, dtype=getattr(fg, dtype_name), requires_grad=requires_grad)


def load_into_torch(fmod, tmod):
    """Copies ferrograd's parameters into torch by name (strict: names must agree)."""
    state = {name: torch.tensor(p.detach().numpy()) for name, p in fmod.named_parameters()}
    tmod.load_state_dict(state, strict=True)


def compare_with_torch(fmod, tmod, arrays, dtype_name, call=None, seed=0):
    """Runs both modules on the same inputs, backpropagates the same random cotangents and
    compares outputs, input gradients and parameter gradients."""
    call = call or (lambda m, *xs: m(*xs))
    tol = TOL[dtype_name]
    if dtype_name == "float64":
        fmod.double()
        tmod.double()
    load_into_torch(fmod, tmod)
    f_in = [None if a is None else to_fg(a, dtype_name, True) for a in arrays]
    t_in = [None if a is None else to_torch(a, dtype_name, True) for a in arrays]
    f_out = flat(call(fmod, *f_in))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch notes which of its kernels it uses
        t_out = flat(call(tmod, *t_in))
    assert len(f_out) == len(t_out)
    rng = np.random.default_rng(seed)
    f_loss, t_loss = 0, 0
    for fo, to in zip(f_out, t_out):
        assert tuple(fo.shape) == tuple(to.shape)
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), **tol)
        v = rng.standard_normal(tuple(to.shape))
        f_loss = f_loss + (fo * to_fg(v, dtype_name)).sum()
        t_loss = t_loss + (to * to_torch(v, dtype_name)).sum()
    f_loss.backward()
    t_loss.backward()
    for fx, tx in zip(f_in, t_in):
        if fx is not None:
            np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), **tol)
    t_params = dict(tmod.named_parameters())
    for name, p in fmod.named_parameters():
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), err_msg=name, **tol)


def fd_check(fmod, arrays, call=None, eps=1e-6, seed=1):
    """float64 central differences of a random projection of the outputs, with respect to every
    input and parameter, against backward."""
    call = call or (lambda m, *xs: m(*xs))
    fmod.double()
    inputs = [None if a is None else fg.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    outs = flat(call(fmod, *inputs))
    rng = np.random.default_rng(seed)
    vs = [rng.standard_normal(tuple(o.shape)) for o in outs]
    loss = sum((o * fg.tensor(v)).sum() for o, v in zip(outs, vs))
    loss.backward()

    def value():
        with fg.no_grad():
            return sum(float((o * fg.tensor(v)).sum()) for o, v in zip(flat(call(fmod, *inputs)), vs))

    targets = [x for x in inputs if x is not None] + list(fmod.parameters())
    for t in targets:
        base = t.detach().numpy().copy()
        expected = np.zeros_like(base)
        for i in range(base.size):
            for sign in (1, -1):
                pert = base.copy()
                pert.reshape(-1)[i] += sign * eps
                with fg.no_grad():
                    t.copy_(fg.tensor(pert))
                expected.reshape(-1)[i] += sign * value() / (2 * eps)
        with fg.no_grad():
            t.copy_(fg.tensor(base))
        np.testing.assert_allclose(t.grad.numpy(), expected, atol=1e-6, rtol=1e-5)


# ---- cells -----------------------------------------------------------------------------------

CELLS = {
    "RNNCell": {},
    "RNNCell_relu": {"nonlinearity": "relu"},
    "RNNCell_nobias": {"bias": False},
    "LSTMCell": {},
    "LSTMCell_nobias": {"bias": False},
    "GRUCell": {},
    "GRUCell_nobias": {"bias": False},
}


def cell_class(key):
    return key.split("_")[0]


def cell_arrays(key, batched, with_hidden, rng, input_size=3, hidden=4, batch=2):
    lead = (batch,) if batched else ()
    x = rng.standard_normal((*lead, input_size))
    if not with_hidden:
        return [x]
    if cell_class(key) == "LSTMCell":
        return [x, rng.standard_normal((*lead, hidden)), rng.standard_normal((*lead, hidden))]
    return [x, rng.standard_normal((*lead, hidden))]


def cell_call(key):
    if cell_class(key) == "LSTMCell":
        return lambda m, x, h=None, c=None: m(x, None if h is None else (h, c))
    return lambda m, *xs: m(*xs)


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hidden", [True, False])
@pytest.mark.parametrize("key", sorted(CELLS))
def test_cells_match_torch(key, with_hidden, batched, dtype_name):
    rng = np.random.default_rng(hash((key, with_hidden, batched)) % 2**32)
    cls, kwargs = cell_class(key), CELLS[key]
    fmod, tmod = getattr(fg.nn, cls)(3, 4, **kwargs), getattr(torch.nn, cls)(3, 4, **kwargs)
    compare_with_torch(fmod, tmod, cell_arrays(key, batched, with_hidden, rng), dtype_name, cell_call(key))


@pytest.mark.parametrize("key", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_gradcheck(key):
    fg.manual_seed(0)
    rng = np.random.default_rng(3)
    fd_check(getattr(fg.nn, key)(2, 3), cell_arrays(key, True, True, rng, 2, 3, 2), cell_call(key))


def test_cell_formulas_without_torch():
    """One GRU step written out with NumPy; an RNNCell with zero weights is tanh of its bias."""
    fg.manual_seed(1)
    cell = fg.nn.GRUCell(3, 2).double()
    p = {n: t.detach().numpy() for n, t in cell.named_parameters()}
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    gi, gh = x @ p["weight_ih"].T + p["bias_ih"], h @ p["weight_hh"].T + p["bias_hh"]

    def sig(a):
        return 1 / (1 + np.exp(-a))

    r, z = sig(gi[:, :2] + gh[:, :2]), sig(gi[:, 2:4] + gh[:, 2:4])
    n = np.tanh(gi[:, 4:] + r * gh[:, 4:])
    expected = (1 - z) * n + z * h
    np.testing.assert_allclose(cell(fg.tensor(x), fg.tensor(h)).detach().numpy(), expected, atol=1e-12)

    rnn = fg.nn.RNNCell(3, 2, nonlinearity="relu")
    with fg.no_grad():
        rnn.weight_ih.zero_()
        rnn.weight_hh.zero_()
    out = rnn(fg.ones(5, 3)).detach().numpy()
    bias = (rnn.bias_ih + rnn.bias_hh).detach().numpy()
    np.testing.assert_allclose(out, np.broadcast_to(np.maximum(bias, 0), (5, 2)), rtol=1e-6)


# ---- sequence layers -------------------------------------------------------------------------

# (num_layers, bidirectional, batch_first, batched, with_hidden, extra kwargs)
CONFIGS = [
    (1, False, False, True, False, {}),
    (1, False, True, True, True, {}),
    (2, False, False, True, True, {}),
    (1, True, False, True, True, {}),
    (2, True, True, True, False, {}),
    (2, True, False, False, True, {}),
    (1, False, True, False, False, {}),
    (2, False, True, True, True, {"bias": False}),
    (3, True, False, True, True, {"dropout": 0.5}),  # eval mode: no dropout
]
LSTM_PROJ = [
    (1, False, False, True, True, {"proj_size": 2}),
    (2, True, True, True, True, {"proj_size": 2}),
    (2, True, False, False, False, {"proj_size": 3}),
]
MODES = {"RNN": {}, "RNN_relu": {"nonlinearity": "relu"}, "LSTM": {}, "GRU": {}}


def seq_arrays(cls, cfg, rng, input_size=3, hidden=4, seq=5, batch=2):
    layers, bidir, batch_first, batched, with_hidden, kwargs = cfg
    if batched:
        shape = (batch, seq, input_size) if batch_first else (seq, batch, input_size)
    else:
        shape = (seq, input_size)
    arrays = [rng.standard_normal(shape)]
    if with_hidden:
        d = layers * (2 if bidir else 1)
        lead = (d, batch) if batched else (d,)
        h_out = kwargs.get("proj_size", 0) or hidden
        arrays.append(rng.standard_normal((*lead, h_out)))
        if cls == "LSTM":
            arrays.append(rng.standard_normal((*lead, hidden)))
    return arrays


def seq_call(cls):
    if cls == "LSTM":
        return lambda m, x, h=None, c=None: m(x, None if h is None else (h, c))
    return lambda m, *xs: m(*xs)


def build(T, cls, mode_kwargs, cfg, input_size=3, hidden=4):
    layers, bidir, batch_first, _, _, kwargs = cfg
    return getattr(T.nn, cls)(
        input_size,
        hidden,
        num_layers=layers,
        bidirectional=bidir,
        batch_first=batch_first,
        **mode_kwargs,
        **kwargs,
    )


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize(
    ("mode", "cfg"),
    [(m, c) for m in MODES for c in CONFIGS] + [("LSTM", c) for c in LSTM_PROJ],
)
def test_sequence_layers_match_torch(mode, cfg, dtype_name):
    cls = mode.split("_")[0]
    rng = np.random.default_rng(abs(hash((mode, repr(cfg)))) % 2**32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fmod, tmod = build(fg, cls, MODES[mode], cfg), build(torch, cls, MODES[mode], cfg)
    fmod.eval()
    tmod.eval()
    compare_with_torch(fmod, tmod, seq_arrays(cls, cfg, rng), dtype_name, seq_call(cls))


@needs_torch
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_full_dropout_between_layers_matches_torch(cls):
    """With p = 1 every layer after the first sees zeros in training mode: deterministic, so
    torch must agree; in eval mode the same module gives a different output."""
    cfg = (2, True, False, True, True, {"dropout": 1.0})
    rng = np.random.default_rng(5)
    fmod, tmod = build(fg, cls, {}, cfg), build(torch, cls, {}, cfg)
    compare_with_torch(fmod, tmod, seq_arrays(cls, cfg, rng), "float64", seq_call(cls))
    x = fg.tensor(rng.standard_normal((5, 2, 3)))
    train_out = fmod(x)[0].detach().numpy()
    eval_out = fmod.eval()(x)[0].detach().numpy()
    assert not np.allclose(train_out, eval_out)


def test_dropout_only_in_training():
    fg.manual_seed(0)
    lstm = fg.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = fg.randn(6, 2, 3)
    a, b = lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy()
    assert not np.allclose(a, b)  # two different masks
    lstm.eval()
    c, d = lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy()
    np.testing.assert_array_equal(c, d)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        ("RNN", {"num_layers": 2, "bidirectional": True}),
        ("GRU", {"num_layers": 2, "batch_first": True}),
        ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
    ],
)
def test_sequence_layers_gradcheck(cls, kwargs):
    fg.manual_seed(2)
    mod = getattr(fg.nn, cls)(2, 3, **kwargs)
    cfg = (
        kwargs["num_layers"],
        kwargs.get("bidirectional", False),
        kwargs.get("batch_first", False),
        True,
        True,
        {k: v for k, v in kwargs.items() if k == "proj_size"},
    )
    arrays = seq_arrays(cls, cfg, np.random.default_rng(4), input_size=2, hidden=3, seq=3, batch=2)
    fd_check(mod, arrays, seq_call(cls))


def test_sequence_output_is_the_cell_unrolled():
    """A one-layer LSTM equals its LSTMCell (same weights) stepped over time, and the reverse
    direction of a bidirectional GRU equals a GRUCell run backwards; no torch involved."""
    fg.manual_seed(3)
    lstm = fg.nn.LSTM(3, 4).double()
    cell = fg.nn.LSTMCell(3, 4).double()
    with fg.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(lstm, f"{name}_l0"))
    x = fg.randn(5, 2, 3, dtype=fg.float64)
    out, (h_n, c_n) = lstm(x)
    h = c = fg.zeros(2, 4, dtype=fg.float64)
    for t in range(5):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(out[t].detach().numpy(), h.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n[0].detach().numpy(), h.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(c_n[0].detach().numpy(), c.detach().numpy(), atol=1e-12)

    gru = fg.nn.GRU(3, 4, bidirectional=True).double()
    gcell = fg.nn.GRUCell(3, 4).double()
    with fg.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(gcell, name).copy_(getattr(gru, f"{name}_l0_reverse"))
    out, h_n = gru(x)
    h = fg.zeros(2, 4, dtype=fg.float64)
    for t in reversed(range(5)):
        h = gcell(x[t], h)
        np.testing.assert_allclose(out[t, :, 4:].detach().numpy(), h.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n[1].detach().numpy(), h.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("cls", "kwargs", "shapes"),
    [
        (
            "LSTM",
            {"num_layers": 2, "bidirectional": True, "proj_size": 2},
            {
                "weight_ih_l0": (20, 3),
                "weight_hh_l0": (20, 2),
                "bias_ih_l0": (20,),
                "bias_hh_l0": (20,),
                "weight_hr_l0": (2, 5),
                "weight_ih_l0_reverse": (20, 3),
                "weight_hh_l0_reverse": (20, 2),
                "bias_ih_l0_reverse": (20,),
                "bias_hh_l0_reverse": (20,),
                "weight_hr_l0_reverse": (2, 5),
                "weight_ih_l1": (20, 4),
                "weight_hh_l1": (20, 2),
                "bias_ih_l1": (20,),
                "bias_hh_l1": (20,),
                "weight_hr_l1": (2, 5),
                "weight_ih_l1_reverse": (20, 4),
                "weight_hh_l1_reverse": (20, 2),
                "bias_ih_l1_reverse": (20,),
                "bias_hh_l1_reverse": (20,),
                "weight_hr_l1_reverse": (2, 5),
            },
        ),
        (
            "GRU",
            {"num_layers": 2, "bias": False},
            {
                "weight_ih_l0": (15, 3),
                "weight_hh_l0": (15, 5),
                "weight_ih_l1": (15, 5),
                "weight_hh_l1": (15, 5),
            },
        ),
        (
            "RNN",
            {"bidirectional": True},
            {
                "weight_ih_l0": (5, 3),
                "weight_hh_l0": (5, 5),
                "bias_ih_l0": (5,),
                "bias_hh_l0": (5,),
                "weight_ih_l0_reverse": (5, 3),
                "weight_hh_l0_reverse": (5, 5),
                "bias_ih_l0_reverse": (5,),
                "bias_hh_l0_reverse": (5,),
            },
        ),
    ],
)
def test_parameter_names_shapes_and_initialisation(cls, kwargs, shapes):
    fg.manual_seed(0)
    mod = getattr(fg.nn, cls)(3, 5, **kwargs)
    got = [(n, tuple(p.shape)) for n, p in mod.named_parameters()]
    assert got == list(shapes.items())
    bound = 1 / math.sqrt(5)
    values = np.concatenate([p.detach().numpy().ravel() for p in mod.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.8 * bound and values.max() > 0.8 * bound  # uniform over the whole range
    assert len(mod.all_weights) == len(mod._all_weights)
    if torch is not None:
        tmod = getattr(torch.nn, cls)(3, 5, **kwargs)
        assert got == [(n, tuple(p.shape)) for n, p in tmod.named_parameters()]
        assert repr(mod) == repr(tmod)


@needs_torch
def test_cell_parameters_and_reprs_match_torch():
    for cls, kwargs in [
        ("RNNCell", {"nonlinearity": "relu", "bias": False}),
        ("LSTMCell", {}),
        ("GRUCell", {}),
    ]:
        fmod, tmod = getattr(fg.nn, cls)(3, 5, **kwargs), getattr(torch.nn, cls)(3, 5, **kwargs)
        assert [(n, tuple(p.shape)) for n, p in fmod.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in tmod.named_parameters()
        ]
        assert repr(fmod) == repr(tmod)
    for cls, kwargs in [
        ("LSTM", {"num_layers": 3, "bias": False, "batch_first": True, "dropout": 0.25, "proj_size": 2}),
        ("RNN", {"nonlinearity": "relu"}),
    ]:
        assert repr(getattr(fg.nn, cls)(3, 5, **kwargs)) == repr(getattr(torch.nn, cls)(3, 5, **kwargs))


def test_output_shapes():
    x = fg.randn(7, 2, 3)
    out, (h, c) = fg.nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=4)(x)
    assert (out.shape, h.shape, c.shape) == ((7, 2, 8), (4, 2, 4), (4, 2, 6))
    out, h = fg.nn.GRU(3, 6, batch_first=True)(fg.randn(2, 7, 3))
    assert (out.shape, h.shape) == ((2, 7, 6), (1, 2, 6))
    out, h = fg.nn.RNN(3, 6, num_layers=3)(fg.randn(7, 3))
    assert (out.shape, h.shape) == ((7, 6), (3, 6))
    assert fg.nn.LSTMCell(3, 6)(fg.randn(3))[1].shape == (6,)


def test_a_small_sequence_model_learns():
    """A GRU followed by a linear read-out learns to output the running mean of its input."""
    fg.manual_seed(0)
    rng = np.random.default_rng(0)

    class Model(fg.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = fg.nn.GRU(1, 8, batch_first=True)
            self.head = fg.nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    model = Model()
    opt = fg.optim.Adam(model.parameters(), lr=0.02)
    x = rng.uniform(-1, 1, (16, 6, 1))
    y = np.cumsum(x, axis=1) / np.arange(1, 7)[None, :, None]
    xt, yt = fg.tensor(x, dtype=fg.float32), fg.tensor(y, dtype=fg.float32)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = fg.nn.functional.mse_loss(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.2 * losses[0]


# ---- errors --------------------------------------------------------------------------------


def raises_like_torch(build_and_call, kind, match):
    """``build_and_call(T)`` raises ``kind`` matching ``match``; with torch, the same type and message."""
    messages = []
    for T in [fg] + ([torch] if torch is not None else []):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(kind, match=match) as info:
                build_and_call(T)
        messages.append(str(info.value))
    if len(messages) == 2:  # shapes may print as tuples on one side and as Size on the other
        as_tuples = [re.sub(r"torch\.Size\(\[(.*?)\]\)", r"(\1)", m) for m in messages]
        assert as_tuples[0] == as_tuples[1]


@pytest.mark.parametrize(
    ("fn", "kind", "match"),
    [
        (lambda T: T.nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError, "Unknown nonlinearity 'sigmoid'"),
        (lambda T: T.nn.GRU(3, 4, proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
        (lambda T: T.nn.RNN(3, 4, proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
        (lambda T: T.nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than hidden_size"),
        (lambda T: T.nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive integer"),
        (lambda T: T.nn.LSTM(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda T: T.nn.LSTM(3, 4.0), TypeError, "hidden_size should be of type int, got: float"),
        (lambda T: T.nn.GRU(3, 4, num_layers=0), ValueError, "num_layers must be greater than zero"),
        (lambda T: T.nn.GRU(3, 4, dropout=1.5), ValueError, "dropout should be a number in range"),
        (lambda T: T.nn.GRU(3, 4, dropout=True), ValueError, "dropout should be a number in range"),
        (
            lambda T: T.nn.RNN(3, 4)(T.zeros(2, 3, 4, 3)),
            ValueError,
            "RNN: Expected input to be 2D or 3D, got 4D",
        ),
        (lambda T: T.nn.LSTM(3, 4)(T.zeros(3)), ValueError, "LSTM: Expected input to be 2D or 3D, got 1D"),
        (lambda T: T.nn.GRU(3, 4)(T.zeros(2, 5, 3), T.zeros(2, 4)), RuntimeError, "For batched 3-D input"),
        (lambda T: T.nn.GRU(3, 4)(T.zeros(5, 3), T.zeros(1, 2, 4)), RuntimeError, "For unbatched 2-D input"),
        (
            lambda T: T.nn.LSTM(3, 4)(T.zeros(5, 2, 3), (T.zeros(1, 2, 4), T.zeros(2, 4))),
            RuntimeError,
            r"hx and cx should also be 3-D but got \(3-D, 2-D\)",
        ),
        (
            lambda T: T.nn.GRU(3, 4)(T.zeros(5, 2, 2)),
            RuntimeError,
            "input.size\\(-1\\) must be equal to input_size",
        ),
        (
            lambda T: T.nn.RNN(3, 4, num_layers=2)(T.zeros(5, 2, 3), T.zeros(1, 2, 4)),
            RuntimeError,
            r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]",
        ),
        (
            lambda T: T.nn.LSTM(3, 4, proj_size=2)(T.zeros(5, 2, 3), (T.zeros(1, 2, 4), T.zeros(1, 2, 4))),
            RuntimeError,
            r"Expected hidden\[0\] size \(1, 2, 2\), got \[1, 2, 4\]",
        ),
        (
            lambda T: T.nn.RNNCell(3, 4)(T.zeros(1, 2, 3)),
            ValueError,
            "RNNCell: Expected input to be 1D or 2D, got 3D",
        ),
        (
            lambda T: T.nn.GRUCell(3, 4)(T.zeros(2, 3), T.zeros(1, 2, 4)),
            ValueError,
            "GRUCell: Expected hidden to be 1D or 2D, got 3D",
        ),
        (
            lambda T: T.nn.LSTMCell(3, 4)(T.zeros(2, 3), (T.zeros(2, 4), T.zeros(1, 2, 4))),
            ValueError,
            r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D",
        ),
        (
            lambda T: T.nn.LSTMCell(3, 4)(T.zeros(2, 3), (T.zeros(2, 4), T.zeros(2, 5))),
            RuntimeError,
            "hidden1 has inconsistent hidden_size: got 5, expected 4",
        ),
        (
            lambda T: T.nn.RNNCell(3, 4)(T.zeros(2, 5)),
            RuntimeError,
            "input has inconsistent input_size: got 5 expected 3",
        ),
        (
            lambda T: T.nn.GRUCell(3, 4)(T.zeros(2, 3), T.zeros(3, 4)),
            RuntimeError,
            "Input batch size 2 doesn't match hidden0 batch size 3",
        ),
    ],
)
def test_bad_arguments_raise_torchs_errors(fn, kind, match):
    raises_like_torch(fn, kind, match)


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        fg.nn.LSTM(3, 4, dropout=0.2)
