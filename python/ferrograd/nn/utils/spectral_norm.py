"""Old-style spectral normalization through a forward pre-hook (torch.nn.utils.spectral_norm).

The parameter ``name`` moves to ``name_orig``; buffers ``name_u`` and ``name_v`` hold the power
iteration's vectors. Before every forward the hook sets ``module.<name> = W / sigma(W)``, with
``n_power_iterations`` refinement steps of ``u``/``v`` in training mode.
"""

from __future__ import annotations

import ferrograd

from .. import functional as F
from ..modules import Module
from ..parameter import Parameter
from .parametrizations import _is_conv_transpose, _random_unit_vectors, _weight_to_matrix
from .weight_norm import _check_no_norm_hook, _remove_norm_hook

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook recomputing the spectrally normalized ``module.<name>``."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: ferrograd.Tensor) -> ferrograd.Tensor:
        return _weight_to_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> ferrograd.Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ferrograd.no_grad():
                w = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    # update the buffers in place, as torch does with ``out=``
                    v.copy_(F.normalize(ferrograd.mv(w.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ferrograd.mv(w, v), dim=0, eps=self.eps))
            # clones: autograd must not see the next in-place update of the buffers
            u = u.clone()
            v = v.clone()
        sigma = ferrograd.dot(u, ferrograd.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with ferrograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        _check_no_norm_hook(module, SpectralNorm, name, "spectral_norm")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with ferrograd.no_grad():
            u, v = _random_unit_vectors(fn.reshape_weight_to_matrix(weight), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute, recomputed by the hook before every forward
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Normalize ``module.<name>`` by its spectral norm, estimated by power iteration, through a
    forward pre-hook. ``dim`` defaults to 1 for transposed convolutions and 0 otherwise."""
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes a plain parameter again."""
    return _remove_norm_hook(module, SpectralNorm, name, "spectral_norm")
