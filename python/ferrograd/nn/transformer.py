"""torch.nn attention layers: MultiheadAttention and the Transformer encoder/decoder stacks.

Relies on F.multi_head_attention_forward and F.scaled_dot_product_attention (both composed
of tensor ops), Linear, LayerNorm, Dropout, ModuleList and copy.deepcopy of modules.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import ferrograd

from . import functional as F
from . import init
from .modules import GELU, Dropout, LayerNorm, Linear, Module, ModuleList, ReLU
from .parameter import Parameter

__all__ = [
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention (a plain Linear, named as torch names it)."""


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` features each.

    Inputs are (L, N, E) (``batch_first``: (N, L, E)) or unbatched (L, E). Returns the output and,
    with ``need_weights``, the attention weights averaged over heads (or per head)."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(ferrograd.empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(ferrograd.empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(ferrograd.empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(ferrograd.empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ferrograd.empty((3 * embed_dim,), dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(ferrograd.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(ferrograd.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: ferrograd.Tensor,
        key: ferrograd.Tensor,
        value: ferrograd.Tensor,
        key_padding_mask: ferrograd.Tensor | None = None,
        need_weights: bool = True,
        attn_mask: ferrograd.Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[ferrograd.Tensor, ferrograd.Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(
            key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask), "attn_mask", query.dtype
        )
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        attn_output, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, weights


# ---- transformer ----------------------------------------------------------------------------


def _get_activation_fn(activation: str) -> Callable[[ferrograd.Tensor], ferrograd.Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src: ferrograd.Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> ferrograd.Tensor:
    dtype = ferrograd.get_default_dtype() if dtype is None else dtype
    return ferrograd.full((sz, sz), float("-inf"), dtype=dtype).triu(diagonal=1)


def _detect_is_causal_mask(
    mask: ferrograd.Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (after each block, or before it with ``norm_first``)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[ferrograd.Tensor], ferrograd.Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(
        self,
        src: ferrograd.Tensor,
        src_mask: ferrograd.Tensor | None = None,
        src_key_padding_mask: ferrograd.Tensor | None = None,
        is_causal: bool = False,
    ) -> ferrograd.Tensor:
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(src_mask), "src_mask", src.dtype
        )
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward block, each with
    a residual connection and LayerNorm."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[ferrograd.Tensor], ferrograd.Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, dtype=dtype
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(
        self,
        tgt: ferrograd.Tensor,
        memory: ferrograd.Tensor,
        tgt_mask: ferrograd.Tensor | None = None,
        memory_mask: ferrograd.Tensor | None = None,
        tgt_key_padding_mask: ferrograd.Tensor | None = None,
        memory_key_padding_mask: ferrograd.Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> ferrograd.Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies, so they start equal), then ``norm``."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        # PyTorch's inference path packs padded batches into nested tensors when the layer
        # allows it; ferrograd runs the padded batch and gives the same result (see forward).
        self.use_nested_tensor = enable_nested_tensor and _packs_padded_batches(encoder_layer)
        self.mask_check = mask_check

    def forward(
        self,
        src: ferrograd.Tensor,
        mask: ferrograd.Tensor | None = None,
        src_key_padding_mask: ferrograd.Tensor | None = None,
        is_causal: bool | None = None,
    ) -> ferrograd.Tensor:
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(mask), "mask", src.dtype
        )
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0] if len(self.layers) else None
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(
                output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask
            )
        if self._packs(src, mask, src_key_padding_mask):
            # PyTorch computes only the sequences' own positions there and pads the result with
            # zeros: the padded positions come out as 0 (before the final norm).
            padded = (src_key_padding_mask != 0).unsqueeze(-1)
            output = output.masked_fill(padded, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _packs(self, src, mask, src_key_padding_mask) -> bool:
        """Whether PyTorch would run this call on nested tensors: inference on a batch-first 3-d
        input with a left-aligned padding mask (sequences first, padding last), no other mask,
        and no gradient to record."""
        if not (self.use_nested_tensor and len(self.layers)) or self.layers[0].training:
            return False
        if src.dim() != 3 or src_key_padding_mask is None or mask is not None:
            return False
        if ferrograd.is_autocast_enabled():
            return False
        if self.mask_check:
            valid = (src_key_padding_mask == 0).to(ferrograd.int64)
            # Left-aligned: each row is ones, then zeros (never a one after a zero).
            if bool((valid[:, 1:] > valid[:, :-1]).any()):
                return False
        first = self.layers[0]
        weights = [
            first.self_attn.in_proj_weight,
            first.self_attn.in_proj_bias,
            first.self_attn.out_proj.weight,
            first.self_attn.out_proj.bias,
            first.norm1.weight,
            first.norm1.bias,
            first.norm2.weight,
            first.norm2.bias,
            first.linear1.weight,
            first.linear1.bias,
            first.linear2.weight,
            first.linear2.bias,
        ]
        tensors = [src] + [w for w in weights if w is not None]
        return not (ferrograd.is_grad_enabled() and any(t.requires_grad for t in tensors))


def _packs_padded_batches(layer) -> bool:
    """PyTorch's conditions on the layer for packing padded batches (``use_nested_tensor``)."""
    if not isinstance(layer, TransformerEncoderLayer) or layer.norm_first:
        return False
    attn = layer.self_attn
    return (
        attn.batch_first
        and attn._qkv_same_embed_dim
        and attn.in_proj_bias is not None
        and bool(layer.activation_relu_or_gelu)
        and layer.norm1.eps == layer.norm2.eps
        and attn.num_heads % 2 == 0
    )


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm``."""

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: ferrograd.Tensor,
        memory: ferrograd.Tensor,
        tgt_mask: ferrograd.Tensor | None = None,
        memory_mask: ferrograd.Tensor | None = None,
        tgt_key_padding_mask: ferrograd.Tensor | None = None,
        memory_key_padding_mask: ferrograd.Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> ferrograd.Tensor:
        output = tgt
        first = self.layers[0] if len(self.layers) else None
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, batch_first))
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder-decoder transformer; parameters with more than one dim are xavier-uniform."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[ferrograd.Tensor], ferrograd.Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                dtype=dtype,
            )
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                dtype=dtype,
            )
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: ferrograd.Tensor,
        tgt: ferrograd.Tensor,
        src_mask: ferrograd.Tensor | None = None,
        tgt_mask: ferrograd.Tensor | None = None,
        memory_mask: ferrograd.Tensor | None = None,
        src_key_padding_mask: ferrograd.Tensor | None = None,
        tgt_key_padding_mask: ferrograd.Tensor | None = None,
        memory_key_padding_mask: ferrograd.Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> ferrograd.Tensor:
        is_batched = src.dim() == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> ferrograd.Tensor:
        """A float (sz, sz) mask: -inf above the diagonal, 0 on and below it."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
