"""torch.nn.init: in-place parameter initialisation, all under ``no_grad``.

Relies on: ferrograd.no_grad(); Tensor.uniform_(a, b), Tensor.normal_(mean, std),
Tensor.fill_(value), Tensor.zero_(), Tensor.dim(), Tensor.shape, Tensor.numel().
"""

from __future__ import annotations

import math
import warnings

import ferrograd

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
    # The deprecated names without the trailing underscore.
    "constant",
    "dirac",
    "eye",
    "kaiming_normal",
    "kaiming_uniform",
    "normal",
    "orthogonal",
    "sparse",
    "uniform",
    "xavier_normal",
    "xavier_uniform",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """Recommended gain for the given nonlinearity (torch's values)."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: ferrograd.Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


calculate_fan_in_and_fan_out = _calculate_fan_in_and_fan_out


def _calculate_correct_fan(tensor: ferrograd.Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: ferrograd.Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> ferrograd.Tensor:
    kwargs = {} if generator is None else {"generator": generator}
    with ferrograd.no_grad():
        return tensor.uniform_(a, b, **kwargs)


def normal_(
    tensor: ferrograd.Tensor, mean: float = 0.0, std: float = 1.0, generator=None
) -> ferrograd.Tensor:
    kwargs = {} if generator is None else {"generator": generator}
    with ferrograd.no_grad():
        return tensor.normal_(mean, std, **kwargs)


def constant_(tensor: ferrograd.Tensor, val: float) -> ferrograd.Tensor:
    with ferrograd.no_grad():
        return tensor.fill_(val)


def ones_(tensor: ferrograd.Tensor) -> ferrograd.Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: ferrograd.Tensor) -> ferrograd.Tensor:
    with ferrograd.no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor: ferrograd.Tensor, gain: float = 1.0, generator=None) -> ferrograd.Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: ferrograd.Tensor, gain: float = 1.0, generator=None) -> ferrograd.Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: ferrograd.Tensor, a: float, mode: str, nonlinearity: str) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(
    tensor: ferrograd.Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> ferrograd.Tensor:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: ferrograd.Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> ferrograd.Tensor:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(
    tensor: ferrograd.Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> ferrograd.Tensor:
    """Fill ``tensor`` from N(mean, std^2) truncated to ``[a, b]`` (inverse-CDF sampling)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    low, high = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    with ferrograd.no_grad():
        # uniform on the CDF image of [a, b], mapped back through the inverse normal CDF
        uniform_(tensor, 2 * low - 1, 2 * high - 1, generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


def eye_(tensor: ferrograd.Tensor) -> ferrograd.Tensor:
    """Fill the 2-D ``tensor`` with the identity matrix (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ferrograd.no_grad():
        tensor.copy_(ferrograd.eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor: ferrograd.Tensor, groups: int = 1) -> ferrograd.Tensor:
    """Fill the 3-, 4- or 5-D convolution weight ``tensor`` with the Dirac delta, so the convolution
    preserves its input channels (per group when ``groups > 1``)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with ferrograd.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_chans_per_grp, sizes[1])):
                tensor[(g * out_chans_per_grp + d, d, *centre)] = 1
    return tensor


def orthogonal_(tensor: ferrograd.Tensor, gain: float = 1.0, generator=None) -> ferrograd.Tensor:
    """Fill ``tensor`` with a (semi-)orthogonal matrix: the Q factor of a Gaussian matrix, made unique
    by the signs of R's diagonal; trailing dimensions are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = normal_(ferrograd.empty((rows, cols), dtype=tensor.dtype), 0.0, 1.0, generator)
    if rows < cols:
        flattened = flattened.t()
    with ferrograd.no_grad():
        q, r = ferrograd.linalg.qr(flattened)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: ferrograd.Tensor, sparsity: float, std: float = 0.01, generator=None) -> ferrograd.Tensor:
    """Fill the 2-D ``tensor`` from N(0, std^2), then zero ``ceil(sparsity * rows)`` random rows
    of every column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    kwargs = {} if generator is None else {"generator": generator}
    with ferrograd.no_grad():
        tensor.normal_(0, std, **kwargs)
        for col_idx in range(cols):
            zero_indices = ferrograd.randperm(rows, **kwargs)[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


def _deprecated(function):
    """The old name of ``function`` (its name without the trailing underscore): the same
    initialisation, after a ``FutureWarning`` pointing to the new name."""
    old, new = function.__name__[:-1], function.__name__

    def deprecated(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.", FutureWarning, stacklevel=2
        )
        return function(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated: use :func:`{new}`."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
