"""PyTorch's lower-level top-level functions that some model code calls directly
(``torch.lstm_cell``, ``torch.native_layer_norm``, ``torch.convolution``, ...), each written with
the ops and ``nn.functional`` pieces ferrograd already has, so they record the same graph."""

from __future__ import annotations

import ferrograd as _fg
from ferrograd import Tensor

from .nn import functional as F
from .nn.rnn import _gru_step, _lstm_step, _rnn_step

__all__ = [
    "alpha_dropout_",
    "constant_pad_nd",
    "convolution",
    "empty_permuted",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "gru_cell",
    "lstm_cell",
    "native_batch_norm",
    "native_channel_shuffle",
    "native_dropout",
    "native_group_norm",
    "native_layer_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
    "rrelu_",
]


# ---- recurrent cells (what nn.RNNCell, nn.LSTMCell and nn.GRUCell compute) ---------------------


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih=None, b_hh=None) -> tuple[Tensor, Tensor]:
    """One LSTM step with gates (i, f, g, o): ``(h', c')`` from ``hx = (h, c)``."""
    h, c = hx
    return _lstm_step(F.linear(input, w_ih, b_ih), h, c, w_hh.t(), b_hh, None)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None, b_hh=None) -> Tensor:
    """One GRU step with gates (r, z, n)."""
    return _gru_step(F.linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None, b_hh=None) -> Tensor:
    """``tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)``."""
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh, relu=False)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None, b_hh=None) -> Tensor:
    """``relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)``."""
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh, relu=True)


# ---- normalisation and dropout with their saved statistics -----------------------------------


def _mean_and_rstd(input: Tensor, dims: list[int], eps: float) -> tuple[Tensor, Tensor]:
    """The mean and ``1 / sqrt(var + eps)`` over ``dims`` (biased variance), without history."""
    with _fg.no_grad():
        mean = input.mean(dim=dims, keepdim=True)
        rstd = (input.var(dim=dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(
    input: Tensor, normalized_shape, weight, bias, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``layer_norm`` with the mean and reciprocal standard deviation it normalised by."""
    output = F.layer_norm(input, list(normalized_shape), weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _mean_and_rstd(input, dims, eps)
    return output, mean, rstd


def native_batch_norm(
    input: Tensor, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``batch_norm`` with the batch mean and reciprocal standard deviation in training (empty
    tensors otherwise); the running statistics are updated as ``batch_norm`` does."""
    output = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = _fg.empty(0, dtype=input.dtype)
        return output, empty, empty.clone()
    dims = [0, *range(2, input.dim())]
    mean, rstd = _mean_and_rstd(input, dims, eps)
    return output, mean.flatten(), rstd.flatten()


def native_group_norm(
    input: Tensor, weight, bias, N: int, C: int, HxW: int, group: int, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``group_norm`` with the mean and reciprocal standard deviation of each (sample, group)."""
    output = F.group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, -1)
    mean, rstd = _mean_and_rstd(grouped, [2], eps)
    return output, mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout and its keep-mask (booleans); without ``train`` the input and a mask of ones."""
    if not train:
        return input.clone(), _fg.ones_like(input, dtype=_fg.bool)
    F._check_dropout_p(p)
    with _fg.no_grad():
        keep = _fg.rand_like(input) >= p if p < 1 else _fg.zeros_like(input, dtype=_fg.bool)
    scale = keep.to(input.dtype) * (1 / (1 - p) if p < 1 else 0.0)
    return input * scale, keep


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels: one mask entry per (sample, channel)."""
    F._check_dropout_p(p)
    return F._noise_dropout(input, p, train, False, True, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``feature_dropout``."""
    F._check_dropout_p(p)
    return F._noise_dropout(input, p, train, True, True, False)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``alpha_dropout``."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``feature_alpha_dropout``."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place ``rrelu``."""
    return F.rrelu_(input, lower, upper, training)


# ---- convolution, padding, layout ------------------------------------------------------------


def convolution(
    input: Tensor,
    weight: Tensor,
    bias,
    stride,
    padding,
    dilation,
    transposed: bool,
    output_padding,
    groups: int,
) -> Tensor:
    """The convolution (or, with ``transposed``, the transposed convolution) of as many spatial
    dimensions as ``weight`` has after its two channel dimensions."""
    spatial = weight.dim() - 2
    if spatial not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a weight of 3, 4 or 5 dimensions, got {weight.dim()}")
    if transposed:
        transpose = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return transpose(input, weight, bias, stride, padding, output_padding, groups, dilation)
    forward = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    return forward(input, weight, bias, stride, padding, dilation, groups)


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """``pad`` (last dimension first, as ``F.pad``) filled with ``value``."""
    return F.pad(input, list(pad), mode="constant", value=value)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle``."""
    return F.channel_shuffle(input, groups)


def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory=False,
) -> Tensor:
    """An uninitialised tensor of ``size`` whose dimensions lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is
    channels-last."""
    size, order = tuple(size), tuple(physical_layout)
    if len(order) != len(size):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. "
            f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
        )
    for d in order:
        if not -len(size) <= d < len(size):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-len(size)}, {len(size) - 1}], but got {d})"
            )
    order = tuple(d + len(size) if d < 0 else d for d in order)
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    physical = _fg.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in range(len(size))]
    return physical.permute(inverse).requires_grad_(requires_grad)
