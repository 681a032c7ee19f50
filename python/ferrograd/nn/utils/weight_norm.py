"""Old-style weight normalization through a forward pre-hook (torch.nn.utils.weight_norm).

The parameter ``name`` is replaced by ``name_g`` (magnitude) and ``name_v`` (direction); before
every forward the hook recomputes ``module.<name> = g * v / ||v||`` with differentiable ops.
"""

from __future__ import annotations

import warnings

import ferrograd

from ..modules import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _find_norm_hook(module: Module, kind: type, name: str):
    """The key and the forward pre-hook of class ``kind`` (WeightNorm, SpectralNorm) that
    recomputes ``module.<name>``, or ``(None, None)``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key, hook
    return None, None


def _check_no_norm_hook(module: Module, kind: type, name: str, what: str) -> None:
    if _find_norm_hook(module, kind, name)[1] is not None:
        raise RuntimeError(f"Cannot register two {what} hooks on the same parameter {name}")


def _remove_norm_hook(module: Module, kind: type, name: str, what: str) -> Module:
    """Undo the ``kind`` hook on ``module.<name>``: it becomes a plain parameter again."""
    key, hook = _find_norm_hook(module, kind, name)
    if hook is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module


class WeightNorm:
    """The forward pre-hook recomputing ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> ferrograd.Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        _check_no_norm_hook(module, WeightNorm, name, "weight_norm")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Deprecated: reparametrize ``module.<name>`` as ``g * v / ||v||`` with a forward pre-hook
    (norm over every dim but ``dim``; the whole tensor when ``dim is None``)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``module.<name>`` becomes a plain parameter again."""
    return _remove_norm_hook(module, WeightNorm, name, "weight_norm")
