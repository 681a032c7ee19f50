"""Attention: F.scaled_dot_product_attention, nn.MultiheadAttention and the Transformer encoder
and decoder stacks. Outputs, attention weights and the gradients of every parameter and input
match torch with the same weights (float32 and float64) across masks, causal attention,
batch_first, unbatched inputs and projections of different sizes; float64 finite differences
without torch; parameter names; a small model that learns; and torch's errors."""

import math
import warnings

import numpy as np
import pytest
from test_nn_recurrent import TOL, compare_with_torch, fd_check, raises_like_torch, to_fg, to_torch

import ferrograd as fg

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")


# ---- scaled_dot_product_attention -----------------------------------------------------------


def bool_mask(rng, shape):
    """A random boolean mask with at least one True per row (no row fully masked)."""
    m = rng.random(shape) > 0.4
    m[..., 0] = True
    return m


# name -> (q shape, k shape, v shape, mask maker or None, kwargs)
SDPA_CASES = {
    "plain_4d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {}),
    "plain_3d": ((2, 4, 5), (2, 6, 5), (2, 6, 3), None, {}),
    "bool_mask_2d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), lambda r: bool_mask(r, (4, 6)), {}),
    "bool_mask_batched": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), lambda r: bool_mask(r, (2, 1, 4, 6)), {}),
    "float_mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), lambda r: r.standard_normal((2, 3, 4, 6)), {}),
    "causal_square": ((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4), None, {"is_causal": True}),
    "causal_rect": ((1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4), None, {"is_causal": True}),
    "causal_and_mask": (
        (1, 2, 4, 4),
        (1, 2, 4, 4),
        (1, 2, 4, 4),
        lambda r: bool_mask(r, (4, 4)),
        {"is_causal": True},
    ),
    "scale": ((2, 4, 5), (2, 6, 5), (2, 6, 5), None, {"scale": 0.3}),
    "gqa": ((2, 6, 4, 5), (2, 2, 6, 5), (2, 2, 6, 3), None, {"enable_gqa": True}),
    "broadcast_batch": ((2, 3, 4, 5), (1, 3, 6, 5), (1, 3, 6, 5), None, {}),
}


def sdpa_inputs(name, seed=0):
    rng = np.random.default_rng(seed)
    qs, ks, vs, mask_fn, kwargs = SDPA_CASES[name]
    arrays = [rng.standard_normal(s) for s in (qs, ks, vs)]
    return arrays, (mask_fn(rng) if mask_fn else None), kwargs


def run_sdpa(T, dtype_name, arrays, mask, kwargs, make):
    ts = [make(a, dtype_name, True) for a in arrays]
    m = None
    if mask is not None:
        if mask.dtype == bool:
            m = T.tensor(mask)
        else:
            m = make(mask, dtype_name)
    return ts, T.nn.functional.scaled_dot_product_attention(*ts, attn_mask=m, **kwargs)


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SDPA_CASES))
def test_sdpa_matches_torch(name, dtype_name):
    arrays, mask, kwargs = sdpa_inputs(name)
    fts, fout = run_sdpa(fg, dtype_name, arrays, mask, kwargs, to_fg)
    tts, tout = run_sdpa(torch, dtype_name, arrays, mask, kwargs, to_torch)
    tol = TOL[dtype_name]
    np.testing.assert_allclose(fout.detach().numpy(), tout.detach().numpy(), **tol)
    v = np.random.default_rng(1).standard_normal(tuple(tout.shape))
    (fout * to_fg(v, dtype_name)).sum().backward()
    (tout * to_torch(v, dtype_name)).sum().backward()
    for f, t in zip(fts, tts):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), **tol)


def softmax_np(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("name", ["plain_4d", "bool_mask_2d", "float_mask", "causal_rect", "scale", "gqa"])
def test_sdpa_against_numpy_and_finite_differences(name):
    arrays, mask, kwargs = sdpa_inputs(name, seed=2)
    q, k, v = arrays
    if kwargs.get("enable_gqa"):
        k, v = np.repeat(k, 3, axis=-3), np.repeat(v, 3, axis=-3)
    scores = q @ np.swapaxes(k, -1, -2) * kwargs.get("scale", 1 / math.sqrt(q.shape[-1]))
    L, S = scores.shape[-2:]
    if kwargs.get("is_causal"):
        scores = np.where(np.tril(np.ones((L, S), bool)), scores, -np.inf)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    expected = softmax_np(scores) @ v
    _, out = run_sdpa(fg, "float64", arrays, mask, kwargs, to_fg)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)

    def call(_m, q, k, v):
        m = None if mask is None else (fg.tensor(mask) if mask.dtype == bool else fg.tensor(mask))
        return fg.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)

    fd_check(fg.nn.Identity(), arrays, call)


def test_sdpa_fully_masked_rows_give_zeros_and_finite_gradients():
    q = fg.randn(1, 3, 4, dtype=fg.float64, requires_grad=True)
    k = fg.randn(1, 5, 4, dtype=fg.float64, requires_grad=True)
    mask = fg.tensor(np.array([[True] * 5, [False] * 5, [True, False, True, False, False]]))
    out = fg.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=mask)
    np.testing.assert_array_equal(out[0, 1].detach().numpy(), np.zeros(4))
    assert np.isfinite(out.detach().numpy()).all()
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and np.isfinite(k.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[0, 1], np.zeros(4))
    if torch is not None:
        tout = torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(q.detach().numpy()),
            torch.tensor(k.detach().numpy()),
            torch.tensor(k.detach().numpy()),
            attn_mask=torch.tensor(mask.numpy()),
        )
        np.testing.assert_allclose(out.detach().numpy(), tout.numpy(), atol=1e-12)


def test_sdpa_dropout():
    fg.manual_seed(0)
    q, k, v = fg.randn(2, 4, 8), fg.randn(2, 6, 8), fg.randn(2, 6, 8)
    F = fg.nn.functional
    base = F.scaled_dot_product_attention(q, k, v).numpy()
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert not np.allclose(a, base)
    np.testing.assert_array_equal(
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy(), np.zeros((2, 4, 8))
    )


# ---- MultiheadAttention ---------------------------------------------------------------------

E, H = 8, 2


def mha_case(name, rng):
    """(module kwargs, (query, key, value) shapes, forward kwargs as array makers)."""
    L, S, N = 4, 5, 3
    seq = lambda n, d=E: (n, N, d)  # noqa: E731
    cases = {
        "self": ({}, [seq(L), seq(L), seq(L)], {}),
        "cross_batch_first": ({"batch_first": True}, [(N, L, E), (N, S, E), (N, S, E)], {}),
        "unbatched": ({}, [(L, E), (S, E), (S, E)], {}),
        "kdim_vdim": ({"kdim": 5, "vdim": 6}, [seq(L), seq(S, 5), seq(S, 6)], {}),
        "no_bias": ({"bias": False}, [seq(L), seq(S), seq(S)], {}),
        "per_head_weights": ({}, [seq(L), seq(S), seq(S)], {"average_attn_weights": False}),
        "no_weights": ({}, [seq(L), seq(S), seq(S)], {"need_weights": False}),
        "bool_attn_mask": ({}, [seq(L), seq(S), seq(S)], {"attn_mask": ~bool_mask(rng, (L, S))}),
        "float_attn_mask_3d": (
            {},
            [seq(L), seq(S), seq(S)],
            {"attn_mask": rng.standard_normal((N * H, L, S))},
        ),
        "key_padding_mask": (
            {"batch_first": True},
            [(N, L, E), (N, S, E), (N, S, E)],
            {"key_padding_mask": ~bool_mask(rng, (N, S))},
        ),
        "key_padding_no_weights": (
            {},
            [seq(L), seq(S), seq(S)],
            {"key_padding_mask": ~bool_mask(rng, (N, S)), "need_weights": False},
        ),
        "both_masks": (
            {},
            [seq(L), seq(S), seq(S)],
            {"key_padding_mask": ~bool_mask(rng, (N, S)), "attn_mask": ~bool_mask(rng, (L, S))},
        ),
        "float_masks_unbatched": (
            {},
            [(L, E), (S, E), (S, E)],
            {"key_padding_mask": rng.standard_normal(S), "attn_mask": rng.standard_normal((H, L, S))},
        ),
        "causal": (
            {"batch_first": True},
            [(N, L, E), (N, L, E), (N, L, E)],
            {"attn_mask": np.triu(np.ones((L, L), bool), 1), "is_causal": True, "need_weights": False},
        ),
        "causal_with_weights": (
            {},
            [seq(L), seq(L), seq(L)],
            {"attn_mask": np.triu(np.ones((L, L), bool), 1), "is_causal": True},
        ),
        "bias_kv_zero_attn": (
            {"add_bias_kv": True, "add_zero_attn": True},
            [seq(L), seq(S), seq(S)],
            {"key_padding_mask": ~bool_mask(rng, (N, S)), "attn_mask": ~bool_mask(rng, (L, S))},
        ),
    }
    return cases[name]


MHA_CASES = [
    "self",
    "cross_batch_first",
    "unbatched",
    "kdim_vdim",
    "no_bias",
    "per_head_weights",
    "no_weights",
    "bool_attn_mask",
    "float_attn_mask_3d",
    "key_padding_mask",
    "key_padding_no_weights",
    "both_masks",
    "float_masks_unbatched",
    "causal",
    "causal_with_weights",
    "bias_kv_zero_attn",
]


def mha_call(fwd_kwargs, dtype_name):
    def call(m, q, k, v):
        T = torch if isinstance(m, torch.nn.Module if torch is not None else ()) else fg
        kw = {}
        for key, val in fwd_kwargs.items():
            if isinstance(val, np.ndarray):
                kw[key] = T.tensor(val) if val.dtype == bool else T.tensor(val, dtype=getattr(T, dtype_name))
            else:
                kw[key] = val
        return m(q, k, v, **kw)

    return call


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name", MHA_CASES)
def test_multihead_attention_matches_torch(name, dtype_name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    mod_kwargs, shapes, fwd_kwargs = mha_case(name, rng)
    fg.manual_seed(0)
    fmod = fg.nn.MultiheadAttention(E, H, **mod_kwargs)
    tmod = torch.nn.MultiheadAttention(E, H, **mod_kwargs)
    with fg.no_grad():  # biases start at zero: make them count
        for p in fmod.parameters():
            if p.dim() == 1:
                p.copy_(fg.randn(*p.shape) * 0.5)
    arrays = [rng.standard_normal(s) for s in shapes]
    compare_with_torch(fmod, tmod, arrays, dtype_name, mha_call(fwd_kwargs, dtype_name))


def test_multihead_attention_gradcheck():
    rng = np.random.default_rng(0)
    fg.manual_seed(0)
    mod = fg.nn.MultiheadAttention(4, 2, kdim=3, vdim=2)
    mask = ~bool_mask(rng, (2, 3))
    call = mha_call({"attn_mask": mask, "key_padding_mask": np.array([[False, False, True]])}, "float64")
    fd_check(
        mod,
        [rng.standard_normal((2, 1, 4)), rng.standard_normal((3, 1, 3)), rng.standard_normal((3, 1, 2))],
        call,
    )


def test_multihead_attention_against_numpy():
    """Self-attention written out with NumPy: per-head softmax(q k^T / sqrt(d)) v, then out_proj."""
    fg.manual_seed(1)
    mod = fg.nn.MultiheadAttention(E, H, batch_first=True).double()
    with fg.no_grad():
        for p in mod.parameters():
            if p.dim() == 1:
                p.copy_(fg.randn(*p.shape, dtype=fg.float64))
    p = {n: t.detach().numpy() for n, t in mod.named_parameters()}
    x = np.random.default_rng(0).standard_normal((2, 5, E))
    proj = x @ p["in_proj_weight"].T + p["in_proj_bias"]
    q, k, v = (
        proj[..., i * E : (i + 1) * E].reshape(2, 5, H, E // H).transpose(0, 2, 1, 3) for i in range(3)
    )
    w = softmax_np(q @ k.transpose(0, 1, 3, 2) / math.sqrt(E // H))
    heads = (w @ v).transpose(0, 2, 1, 3).reshape(2, 5, E)
    expected = heads @ p["out_proj.weight"].T + p["out_proj.bias"]
    out, weights = mod(*(fg.tensor(x),) * 3)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), w.mean(1), atol=1e-12)


def test_multihead_attention_parameters():
    mod = fg.nn.MultiheadAttention(E, H, add_bias_kv=True)
    names = [(n, tuple(p.shape)) for n, p in mod.named_parameters()]
    assert names == [
        ("in_proj_weight", (3 * E, E)),
        ("in_proj_bias", (3 * E,)),
        ("bias_k", (1, 1, E)),
        ("bias_v", (1, 1, E)),
        ("out_proj.weight", (E, E)),
        ("out_proj.bias", (E,)),
    ]
    np.testing.assert_array_equal(mod.in_proj_bias.detach().numpy(), np.zeros(3 * E))
    bound = math.sqrt(6 / (E + 3 * E))  # xavier uniform
    assert np.abs(mod.in_proj_weight.detach().numpy()).max() <= bound
    sep = fg.nn.MultiheadAttention(E, H, kdim=3, vdim=5, bias=False)
    assert [(n, tuple(p.shape)) for n, p in sep.named_parameters()] == [
        ("q_proj_weight", (E, E)),
        ("k_proj_weight", (E, 3)),
        ("v_proj_weight", (E, 5)),
        ("out_proj.weight", (E, E)),
    ]
    if torch is not None:
        for kwargs in ({"add_bias_kv": True}, {"kdim": 3, "vdim": 5, "bias": False}):
            f, t = fg.nn.MultiheadAttention(E, H, **kwargs), torch.nn.MultiheadAttention(E, H, **kwargs)
            assert [(n, tuple(p.shape)) for n, p in f.named_parameters()] == [
                (n, tuple(p.shape)) for n, p in t.named_parameters()
            ]
            assert repr(f) == repr(t)


# ---- Transformer ------------------------------------------------------------------------------

D, NH, FF = 8, 2, 16


def gelu_fn(x):
    return x.sigmoid() * x


ENCODER_CASES = {
    "post_norm_relu": {},
    "pre_norm_gelu": {"norm_first": True, "activation": "gelu"},
    "batch_first_callable": {"batch_first": True, "activation": gelu_fn},
    "no_bias": {"bias": False, "layer_norm_eps": 1e-3},
}


def src_shape(kwargs, n=2, s=5):
    return (n, s, D) if kwargs.get("batch_first") else (s, n, D)


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("masks", ["none", "padding", "causal", "float"])
@pytest.mark.parametrize("name", sorted(ENCODER_CASES))
def test_transformer_encoder_matches_torch(name, masks, dtype_name):
    kwargs = ENCODER_CASES[name]
    rng = np.random.default_rng(7)
    fmod = fg.nn.TransformerEncoder(
        fg.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.1, **kwargs), 2, norm=fg.nn.LayerNorm(D)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmod = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.1, **kwargs), 2, norm=torch.nn.LayerNorm(D)
        )
    with fg.no_grad():  # layers start as copies: make them differ
        for p in fmod.parameters():
            p.copy_(fg.randn(*p.shape) * 0.3)
    fmod.eval()
    tmod.eval()
    fwd = {
        "none": {},
        "padding": {"src_key_padding_mask": ~bool_mask(rng, (2, 5))},
        "causal": {"mask": np.triu(np.full((5, 5), -np.inf), 1), "is_causal": True},
        "float": {"mask": rng.standard_normal((5, 5))},
    }[masks]

    def call(m, src):
        T = torch if isinstance(m, torch.nn.Module) else fg
        kw = {
            k: (
                v
                if not isinstance(v, np.ndarray)
                else T.tensor(v)
                if v.dtype == bool
                else T.tensor(v, dtype=src.dtype)
            )
            for k, v in fwd.items()
        }
        return m(src, **kw)

    compare_with_torch(fmod, tmod, [rng.standard_normal(src_shape(kwargs))], dtype_name, call)


@needs_torch
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("case", ["post_norm", "pre_norm_batch_first", "unbatched"])
def test_transformer_matches_torch(case, dtype_name):
    kwargs = {
        "post_norm": {},
        "pre_norm_batch_first": {"norm_first": True, "batch_first": True},
        "unbatched": {"activation": "gelu"},
    }[case]
    rng = np.random.default_rng(11)
    fg.manual_seed(0)
    fmod = fg.nn.Transformer(D, NH, 2, 2, FF, dropout=0.0, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmod = torch.nn.Transformer(D, NH, 2, 2, FF, dropout=0.0, **kwargs)
    with fg.no_grad():
        for p in fmod.parameters():
            if p.dim() == 1:
                p.copy_(fg.randn(*p.shape) * 0.3)
    if case == "unbatched":
        shapes = [(5, D), (4, D)]
    else:
        shapes = [src_shape(kwargs, 2, 5), src_shape(kwargs, 2, 4)]
    tgt_mask = np.triu(np.full((4, 4), -np.inf), 1)
    pad = ~bool_mask(rng, (5,) if case == "unbatched" else (2, 5))

    def call(m, src, tgt):
        T = torch if isinstance(m, torch.nn.Module) else fg
        return m(
            src,
            tgt,
            tgt_mask=T.tensor(tgt_mask, dtype=src.dtype),
            src_key_padding_mask=T.tensor(pad),
            memory_key_padding_mask=T.tensor(pad),
        )

    compare_with_torch(fmod, tmod, [rng.standard_normal(s) for s in shapes], dtype_name, call)


def test_transformer_parameter_names_match_torch():
    fmod = fg.nn.Transformer(D, NH, 1, 1, FF)
    names = [n for n, _ in fmod.named_parameters()]
    assert "encoder.layers.0.self_attn.in_proj_weight" in names
    assert "decoder.layers.0.multihead_attn.out_proj.bias" in names
    assert "decoder.norm.weight" in names
    if torch is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tmod = torch.nn.Transformer(D, NH, 1, 1, FF)
        assert [(n, tuple(p.shape)) for n, p in fmod.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in tmod.named_parameters()
        ]
        assert repr(fmod.encoder.layers[0]) == repr(tmod.encoder.layers[0])


def test_encoder_layer_gradcheck_and_layer_copies():
    fg.manual_seed(0)
    layer = fg.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True)
    enc = fg.nn.TransformerEncoder(layer, 2)
    p0 = dict(enc.layers[0].named_parameters())
    for n, p in enc.layers[1].named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), p0[n].detach().numpy())
        assert p is not p0[n]
    with fg.no_grad():
        for p in enc.parameters():
            p.copy_(fg.randn(*p.shape) * 0.5)
    rng = np.random.default_rng(1)
    mask = np.triu(np.full((3, 3), -np.inf), 1)
    fd_check(enc, [rng.standard_normal((3, 1, 4))], lambda m, x: m(x, mask=fg.tensor(mask)))


def test_generate_square_subsequent_mask():
    m = fg.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    np.testing.assert_array_equal(np.isinf(m), np.triu(np.ones((4, 4), bool), 1))
    assert (m[np.tril_indices(4)] == 0).all()


def test_a_small_transformer_learns_to_copy():
    """A one-layer causal encoder with an embedding learns to output its previous token."""
    fg.manual_seed(0)
    vocab, d, seq = 6, 16, 7

    class Model(fg.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = fg.nn.Embedding(vocab, d)
            self.pos = fg.nn.Parameter(fg.randn(seq, d) * 0.1)
            self.enc = fg.nn.TransformerEncoder(
                fg.nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True), 1
            )
            self.head = fg.nn.Linear(d, vocab)

        def forward(self, x):
            mask = fg.nn.Transformer.generate_square_subsequent_mask(seq)
            return self.head(self.enc(self.emb(x) + self.pos, mask=mask, is_causal=True))

    model = Model()
    opt = fg.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    tokens = fg.tensor(rng.integers(0, vocab, (32, seq)))
    target = fg.tensor(np.concatenate([np.zeros((32, 1), np.int64), tokens.numpy()[:, :-1]], axis=1))
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = fg.nn.functional.cross_entropy(model(tokens).reshape((-1, vocab)), target.reshape((-1,)))
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


# ---- errors ----------------------------------------------------------------------------------


def _attend_batch_of_two_with_padding_mask(T, mask_shape):
    """Self-attention over a batch of two 3-step sequences, with a key padding mask of ``mask_shape``."""
    q = T.zeros(2, 3, 4)
    return T.nn.MultiheadAttention(4, 2, batch_first=True)(
        q, q, q, key_padding_mask=T.zeros(*mask_shape, dtype=T.bool)
    )


@pytest.mark.parametrize(
    ("fn", "kind", "match"),
    [
        (
            lambda T: T.nn.MultiheadAttention(0, 2),
            ValueError,
            "embed_dim and num_heads must be greater than 0",
        ),
        (lambda T: T.nn.MultiheadAttention(6, 4), AssertionError, "embed_dim must be divisible by num_heads"),
        (
            lambda T: T.nn.MultiheadAttention(4, 2)(
                T.zeros(3, 2, 4), T.zeros(3, 2, 4), T.zeros(3, 2, 4), is_causal=True
            ),
            RuntimeError,
            "Need attn_mask if specifying the is_causal hint",
        ),
        (
            lambda T: T.nn.MultiheadAttention(4, 2)(
                T.zeros(3, 2, 4), T.zeros(5, 2, 4), T.zeros(5, 2, 4), attn_mask=T.zeros(3, 4)
            ),
            RuntimeError,
            r"The shape of the 2D attn_mask is",
        ),
        (
            lambda T: T.nn.MultiheadAttention(4, 2)(
                T.zeros(3, 2, 4), T.zeros(5, 2, 4), T.zeros(5, 2, 4), attn_mask=T.zeros(2, 3, 5)
            ),
            RuntimeError,
            r"The shape of the 3D attn_mask is",
        ),
        (
            lambda T: T.nn.MultiheadAttention(4, 2)(
                T.zeros(3, 2, 4),
                T.zeros(5, 2, 4),
                T.zeros(5, 2, 4),
                key_padding_mask=T.zeros(2, 5, dtype=T.int64),
            ),
            AssertionError,
            "only bool and floating types of key_padding_mask are supported",
        ),
        (
            lambda T: _attend_batch_of_two_with_padding_mask(T, (2, 4)),
            AssertionError,
            r"Expected key_padded_mask.shape\[1\] to be 3, but got 4",
        ),
        (
            lambda T: _attend_batch_of_two_with_padding_mask(T, (3, 3)),
            AssertionError,
            r"Expected key_padded_mask.shape\[0\] to be 2, but got 3",
        ),
        (
            lambda T: T.nn.MultiheadAttention(4, 2)(T.zeros(1, 3, 2, 4), T.zeros(5, 2, 4), T.zeros(5, 2, 4)),
            AssertionError,
            "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor",
        ),
        (
            lambda T: T.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
            RuntimeError,
            "activation should be relu/gelu, not tanh",
        ),
        (
            lambda T: T.nn.Transformer(4, 2, 1, 1, 8)(T.zeros(5, 2, 4), T.zeros(3, 3, 4)),
            RuntimeError,
            "the batch number of src and tgt must be equal",
        ),
        (
            lambda T: T.nn.Transformer(4, 2, 1, 1, 8)(T.zeros(5, 2, 4), T.zeros(3, 2, 6)),
            RuntimeError,
            "the feature number of src and tgt must be equal to d_model",
        ),
        (
            lambda T: T.nn.functional.scaled_dot_product_attention(
                T.zeros(1, 6, 2, 4), T.zeros(1, 4, 3, 4), T.zeros(1, 4, 3, 4), enable_gqa=True
            ),
            RuntimeError,
            "Number of heads in key and value must divide the number of heads in",
        ),
    ],
)
def test_bad_arguments_raise_torchs_errors(fn, kind, match):
    raises_like_torch(fn, kind, match)


def test_sdpa_kernel_sets_and_restores_the_backend_switches():
    from ferrograd.nn.attention import SDPBackend, sdpa_kernel

    cuda = fg.backends.cuda
    q = fg.randn(2, 3, 4)
    expected = fg.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.MATH):
        assert cuda.math_sdp_enabled() and not cuda.flash_sdp_enabled() and not cuda.cudnn_sdp_enabled()
        np.testing.assert_array_equal(
            fg.nn.functional.scaled_dot_product_attention(q, q, q).numpy(), expected.numpy()
        )
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled() and not cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    with pytest.raises(AssertionError, match="got str"):
        with sdpa_kernel("math"):
            pass
    assert int(SDPBackend.MATH) == 0 and int(SDPBackend.ERROR) == -1
    if torch is not None:
        from torch.nn.attention import SDPBackend as TorchBackend

        assert {k: int(v) for k, v in TorchBackend.__members__.items()} == {
            b.name: int(b) for b in SDPBackend
        }


@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("lengths", [(3, 3), (2, 5), (4, 6)])
def test_causal_bias_masks(variant, lengths):
    from ferrograd.nn.attention import bias

    rng = np.random.default_rng(5)
    q, k, v = (rng.normal(size=(2, n, 4)) for n in (lengths[0], lengths[1], lengths[1]))
    mask = getattr(bias, variant)(*lengths)
    expected_mask = np.tril(
        np.ones(lengths, dtype=bool), 0 if variant == "causal_upper_left" else lengths[1] - lengths[0]
    )
    np.testing.assert_array_equal(mask._materialize().numpy(), expected_mask)
    tensors = [fg.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = fg.nn.functional.scaled_dot_product_attention(*tensors, attn_mask=mask)
    explicit = fg.nn.functional.scaled_dot_product_attention(*tensors, attn_mask=fg.tensor(expected_mask))
    np.testing.assert_allclose(out.detach().numpy(), explicit.detach().numpy())
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        fg.nn.functional.scaled_dot_product_attention(*tensors, attn_mask=mask, is_causal=True)
    if torch is not None:
        from torch.nn.attention import bias as torch_bias

        reference = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        expected = torch.nn.functional.scaled_dot_product_attention(
            *reference, attn_mask=getattr(torch_bias, variant)(*lengths)
        )
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_causal_bias_errors_and_warnings():
    from ferrograd.nn.attention.bias import CausalVariant, causal_lower_right, causal_upper_left

    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(2)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        wide = causal_lower_right(3, 2)
    assert wide.variant == CausalVariant.LOWER_RIGHT and (wide.seq_len_q, wide.seq_len_kv) == (3, 2)
    assert int(CausalVariant.UPPER_LEFT) == 1 and int(CausalVariant.LOWER_RIGHT) == 2


# (heads, batch_first, training, left-aligned padding, with a final norm): whether the padded
# positions of an inference call come out as zeros, as PyTorch's nested-tensor path gives them.
_ENCODER_CASES = [
    (2, True, False, True, False, True),
    (2, True, False, True, True, True),
    (1, True, False, True, False, False),  # odd head count: no packing
    (2, False, False, True, False, False),  # sequence-first: no packing
    (2, True, False, False, False, False),  # padding not at the end: no packing
    (2, True, True, True, False, False),  # training
]


@pytest.mark.parametrize("heads, batch_first, training, left_aligned, final_norm, zeros", _ENCODER_CASES)
def test_encoder_inference_with_padding_gives_zeros_where_torch_packs(
    heads, batch_first, training, left_aligned, final_norm, zeros
):
    fg.manual_seed(0)
    layer = fg.nn.TransformerEncoderLayer(4, heads, 8, 0.0, batch_first=batch_first)
    enc = fg.nn.TransformerEncoder(layer, 2, norm=fg.nn.LayerNorm(4) if final_norm else None)
    enc.train(training)
    pad = (
        [[False, False, True], [False, True, True]]
        if left_aligned
        else [[False, True, False], [False, True, True]]
    )
    x = fg.randn(2, 3, 4) if batch_first else fg.randn(3, 2, 4)
    with fg.no_grad():
        y = enc(x, src_key_padding_mask=fg.tensor(pad))
    rows = y if batch_first else y.transpose(0, 1)
    padded = rows[fg.tensor(pad)]
    if final_norm:
        padded = padded - enc.norm.bias  # the norm of a zero row is its bias
    assert bool((padded == 0).all()) == zeros
    # With gradients wanted, every position is computed, as in PyTorch.
    y_grad = enc(x, src_key_padding_mask=fg.tensor(pad))
    assert not bool((y_grad if batch_first else y_grad.transpose(0, 1))[fg.tensor(pad)].eq(0).all())
    if torch is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on nested tensors and its fast path
        t_enc = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(4, heads, 8, 0.0, batch_first=batch_first),
            2,
            norm=torch.nn.LayerNorm(4) if final_norm else None,
        )
        t_enc.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in enc.state_dict().items()})
        t_enc.train(training)
        with torch.no_grad():
            expected = t_enc(torch.from_numpy(x.numpy().copy()), src_key_padding_mask=torch.tensor(pad))
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
