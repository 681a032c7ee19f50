"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal, built on
:mod:`ferrograd.nn.utils.parametrize`."""

from __future__ import annotations

import ferrograd

from .. import functional as F
from ..modules import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- weight norm -----------------------------------------------------------------------------


def _norm_except_dim(v: ferrograd.Tensor, dim: int) -> ferrograd.Tensor:
    """2-norm of ``v`` over every dimension but ``dim`` (all of them when ``dim == -1``), kept
    broadcastable against ``v``."""
    if dim == -1:
        return ferrograd.linalg.vector_norm(v)
    dim = dim % v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return ferrograd.linalg.vector_norm(v, 2, others, keepdim=True)


def _weight_norm(v: ferrograd.Tensor, g: ferrograd.Tensor, dim: int) -> ferrograd.Tensor:
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: ferrograd.Tensor, weight_v: ferrograd.Tensor) -> ferrograd.Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: ferrograd.Tensor):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over all dims but ``dim``; the
    whole tensor when ``dim is None``), stored as ``parametrizations.<name>.original0`` (g) and
    ``original1`` (v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---- spectral norm ---------------------------------------------------------------------------


def _is_conv_transpose(module: Module) -> bool:
    names = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    return any(c.__name__ in names for c in parametrize.type_before_parametrizations(module).__mro__)


def _weight_to_matrix(weight: ferrograd.Tensor, dim: int) -> ferrograd.Tensor:
    """``weight`` as a matrix whose rows run along ``dim``, as spectral normalization sees it."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)


def _random_unit_vectors(weight_mat: ferrograd.Tensor, eps: float):
    """Random unit-norm ``u`` and ``v`` of a (h, w) matrix's sizes, from a standard normal:
    the power iteration's starting vectors."""
    h, w = weight_mat.shape
    u = ferrograd.empty((h,), dtype=weight_mat.dtype).normal_(0, 1)
    v = ferrograd.empty((w,), dtype=weight_mat.dtype).normal_(0, 1)
    return F.normalize(u, dim=0, eps=eps), F.normalize(v, dim=0, eps=eps)


class _SpectralNorm(Module):
    def __init__(
        self, weight: ferrograd.Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            u, v = _random_unit_vectors(weight_mat, self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            # start from a good estimate of the top singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: ferrograd.Tensor) -> ferrograd.Tensor:
        return _weight_to_matrix(weight, self.dim)

    def _power_method(self, weight_mat: ferrograd.Tensor, n_power_iterations: int) -> None:
        """Refine the buffers ``_u``/``_v`` in place (no gradient) towards W's top singular vectors."""
        with ferrograd.no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ferrograd.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ferrograd.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight: ferrograd.Tensor) -> ferrograd.Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: the buffers change in place at the next training step, after autograd saved them
        u = self._u.clone()
        v = self._v.clone()
        sigma = ferrograd.dot(u, ferrograd.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: ferrograd.Tensor) -> ferrograd.Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Reparametrize ``module.<name>`` as ``W / sigma(W)``, with the spectral norm ``sigma``
    estimated by power iteration; the vectors ``_u``/``_v`` are buffers of the parametrization,
    refined by ``n_power_iterations`` steps at every access in training mode."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ferrograd.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ------------------------------------------------------------------------------


def _eye_like(n: int, like: ferrograd.Tensor) -> ferrograd.Tensor:
    return ferrograd.eye(n, dtype=like.dtype)


def _make_orthogonal(a: ferrograd.Tensor) -> ferrograd.Tensor:
    """The Q of A's QR decomposition, with the signs fixed so that R has a positive diagonal."""
    q, r = ferrograd.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(q: ferrograd.Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * ferrograd.finfo(q.dtype).eps
    return ferrograd.allclose(q.transpose(-2, -1).matmul(q), _eye_like(k, q), atol=eps)


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    def __init__(
        self, weight: ferrograd.Tensor, orthogonal_map: str, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        if weight.is_complex():
            raise NotImplementedError("ferrograd's orthogonal parametrization supports real tensors only")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: ferrograd.Tensor) -> ferrograd.Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.transpose(-2, -1)
            n, k = k, n
        # x is now tall (n >= k)
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = ferrograd.cat([x, ferrograd.zeros((*x.shape[:-2], n, n - k), dtype=x.dtype)], dim=-1)
            a = x - x.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                q = ferrograd.linalg.matrix_exp(a)
            else:
                eye = _eye_like(n, a)
                q = ferrograd.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = ferrograd.linalg.householder_product(a, tau)
            # the sign of each column comes from the sign of x's diagonal, truncated towards zero
            q = q * x.diagonal(dim1=-2, dim2=-1).detach().trunc().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            q = self.base.matmul(q)
        if transposed:
            q = q.transpose(-2, -1)
        return q

    def right_inverse(self, q: ferrograd.Tensor) -> ferrograd.Tensor:
        if tuple(q.shape) != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape {q.shape}."
            )
        with ferrograd.no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.transpose(-2, -1)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley parametrizations "
                        "when use_trivialization=False."
                    )
                raise NotImplementedError(
                    "ferrograd cannot assign to the householder parametrization when use_trivialization=False "
                    "(it needs torch.geqrf)"
                )
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                # complete q to a full n x n orthogonal basis
                extra = ferrograd.randn(*q.shape[:-2], n, n - k, dtype=q.dtype)
                q = _make_orthogonal(ferrograd.cat([q, extra], dim=-1))
            self.base = q
            # -Id maps to the identity under all three maps, so the result is base (its first k columns)
            neg_id = ferrograd.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal, or to have
    orthonormal rows/columns when it is not square. ``orthogonal_map`` is ``"matrix_exp"`` (the
    default for square matrices), ``"cayley"`` or ``"householder"`` (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ferrograd.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
