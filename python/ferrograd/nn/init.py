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
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
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
