"""Pruning (torch.nn.utils.prune): zeroing a share of a parameter's entries through a mask.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, keeps a ``<name>_mask`` buffer
of ones and zeros, and makes ``module.<name>`` the product of the two, recomputed by a forward
pre-hook before every call, so gradients reach ``<name>_orig`` only where the mask is one.
Pruning the same parameter again prunes among the entries still kept (a ``PruningContainer``
records the methods in order); ``remove`` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

import ferrograd

from ..modules import Module

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


# ------------------------------------------------------------------------------ amount checks


def _check_amount(amount) -> None:
    """``amount`` is a count (a non-negative integer) or a share (a float in [0, 1])."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer"
        )


def _entries_to_prune(amount, available: int) -> int:
    """How many of ``available`` entries (or channels) ``amount`` prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > available:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={available}"
            )
        return int(amount)
    return round(amount * available)


def _check_structured(t, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {t.shape} with {t.dim()} dims"
        )
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t, dim: int, kept_channels) -> Any:
    """Ones on the channels of ``t`` along ``dim`` listed in ``kept_channels``, zeros elsewhere."""
    keep = ferrograd.zeros(t.shape[dim], dtype=t.dtype)
    keep[kept_channels] = 1
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    return keep.reshape(shape).expand(t.shape).contiguous()


# ---------------------------------------------------------------------------------- methods


class BasePruningMethod:
    """A way of choosing which entries of a parameter to zero. Subclasses define
    ``compute_mask(t, default_mask)`` and ``PRUNING_TYPE`` ("unstructured", "structured" along
    ``dim``, or "global"); the instance is the module's forward pre-hook."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t, default_mask):
        raise NotImplementedError

    def apply_mask(self, module: Module):
        """The pruned parameter: ``<name>_orig * <name>_mask``."""
        return getattr(module, self._tensor_name + "_orig") * getattr(module, self._tensor_name + "_mask")

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with ``cls(*args, **kwargs)``, after any earlier pruning of it;
        returns the method (a ``PruningContainer`` when the parameter was pruned before)."""
        earlier_key, earlier = _find_pruning_hook(module, name)
        original = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != original.shape:
            raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if earlier is None:
            # The parameter itself becomes `<name>_orig`; `<name>` is recomputed from it.
            module.register_parameter(name + "_orig", original)
            del module._parameters[name]
            default_mask = ferrograd.ones_like(original)
        else:
            container = earlier if isinstance(earlier, PruningContainer) else PruningContainer(earlier)
            container.add_pruning_method(method)
            method = container
            del module._forward_pre_hooks[earlier_key]
            default_mask = getattr(module, name + "_mask").detach().clone()
        scores = original if importance_scores is None else importance_scores
        with ferrograd.no_grad():
            mask = method.compute_mask(scores.detach(), default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied (a new tensor; nothing is registered)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise ValueError("importance_scores should have the same shape as tensor t")
        scores = t if importance_scores is None else importance_scores
        default_mask = ferrograd.ones_like(t) if default_mask is None else default_mask
        with ferrograd.no_grad():
            mask = self.compute_mask(scores.detach(), default_mask=default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Makes the pruning permanent: ``<name>`` is a parameter again, holding the pruned values."""
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        original = module._parameters.pop(name + "_orig")
        with ferrograd.no_grad():
            original.copy_(pruned)
        del module._buffers[name + "_mask"]
        setattr(module, name, original)


class PruningContainer(BasePruningMethod):
    """The methods applied to one parameter in turn; each prunes among the entries (or, for a
    structured method, the channels) that the ones before it kept."""

    def __init__(self, *args):
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if hasattr(self, "_tensor_name") and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer. Found '{method._tensor_name}'"
            )
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the latest method's mask applied to what it still keeps."""
        method = self._pruning_methods[-1]
        mask = default_mask.clone()
        if method.PRUNING_TYPE == "unstructured":
            kept = default_mask == 1
            mask[kept] = method.compute_mask(t[kept], default_mask=default_mask[kept]).to(dtype=mask.dtype)
        elif method.PRUNING_TYPE == "structured":
            dim = method.dim if method.dim >= 0 else method.dim + t.dim()
            _check_structured(t, dim)
            others = [d for d in range(t.dim()) if d != dim]
            kept = (default_mask.sum(dim=others) != 0).nonzero().flatten()
            kept_t, kept_mask = t.index_select(dim, kept), default_mask.index_select(dim, kept)
            partial = method.compute_mask(kept_t, default_mask=kept_mask).to(dtype=mask.dtype)
            mask = mask.index_copy(dim, kept, partial)
        elif method.PRUNING_TYPE == "global":
            mask = method.compute_mask(t, default_mask=default_mask)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):
        return super().apply(module, name)


class _UnstructuredByAmount(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a share of them), those that ``_entries_to_zero``
    picks."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def _entries_to_zero(self, t, count: int):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        count = _entries_to_prune(self.amount, t.numel())
        # Row-major, as the flat positions chosen from `t.reshape(-1)` are.
        mask = default_mask.clone(memory_format=ferrograd.contiguous_format)
        if count:
            mask.view(-1)[self._entries_to_zero(t, count)] = 0
        return mask


class RandomUnstructured(_UnstructuredByAmount):
    """Prunes ``amount`` entries (a count, or a share of them) chosen at random."""

    def _entries_to_zero(self, t, count: int):
        return ferrograd.rand(t.numel()).topk(count).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredByAmount):
    """Prunes the ``amount`` entries (a count, or a share of them) of smallest absolute value."""

    def _entries_to_zero(self, t, count: int):
        return t.abs().reshape(-1).topk(count, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _StructuredByAmount(BasePruningMethod):
    """Prunes ``amount`` channels (a count, or a share of them) along ``dim``: all but those that
    ``_channels_to_keep`` picks."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def _channels_to_keep(self, t, dim: int, count: int):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        dim = self.dim if self.dim >= 0 else self.dim + t.dim()
        _check_structured(t, dim)
        channels = t.shape[dim]
        count = _entries_to_prune(self.amount, channels)
        if count == 0:
            return default_mask
        return _channel_mask(t, dim, self._channels_to_keep(t, dim, channels - count)) * default_mask


class RandomStructured(_StructuredByAmount):
    """Prunes ``amount`` channels (a count, or a share of them) along ``dim``, chosen at random."""

    def _channels_to_keep(self, t, dim: int, count: int):
        return ferrograd.rand(t.shape[dim]).topk(count).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_StructuredByAmount):
    """Prunes the ``amount`` channels (a count, or a share of them) along ``dim`` whose
    ``L_n`` norm is smallest."""

    def __init__(self, amount, n, dim: int = -1):
        super().__init__(amount, dim)
        self.n = n

    def _channels_to_keep(self, t, dim: int, count: int):
        others = [d for d in range(t.dim()) if d != dim]
        return ferrograd.linalg.vector_norm(t, ord=self.n, dim=others).topk(count).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim: int, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise ValueError(
                f"mask of shape {tuple(self.mask.shape)} does not fit a parameter of shape {tuple(t.shape)}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask):
        return super().apply(module, name, mask=mask)


# -------------------------------------------------------------------------------- functions


def _find_pruning_hook(module: Module, name: str):
    """The key and the pruning method (or container) acting on ``module.<name>``, or ``(None, None)``."""
    found = [
        (key, hook)
        for key, hook in module._forward_pre_hooks.items()
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
    ]
    if len(found) > 1:
        raise RuntimeError(f"more than one pruning hook acts on the parameter {name} of {module}")
    return found[0] if found else (None, None)


def identity(module: Module, name: str) -> Module:
    """Prunes nothing, but sets up ``<name>_orig`` and a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prunes ``amount`` randomly chosen entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Prunes the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``) of
    smallest absolute value."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prunes ``amount`` randomly chosen channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None) -> Module:
    """Prunes the ``amount`` channels along ``dim`` of smallest ``L_n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask) -> Module:
    """Prunes ``module.<name>`` where ``mask`` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]], pruning_method, importance_scores=None, **kwargs
):
    """Prunes the ``(module, name)`` parameters together: ``pruning_method(**kwargs)`` chooses
    among all of their entries at once (by ``importance_scores[(module, name)]`` when given),
    so some parameters may lose more than others."""
    parameters = list(parameters)
    if not parameters:
        raise TypeError("global_unstructured(): parameters is empty")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = ferrograd.cat(
        [importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for m, n in parameters]
    )
    masks = ferrograd.cat(
        [
            getattr(m, n + "_mask", ferrograd.ones_like(getattr(m, n))).detach().reshape(-1)
            for m, n in parameters
        ]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
            f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer(method)
    with ferrograd.no_grad():
        final = container.compute_mask(scores, masks)
    start = 0
    for module, name in parameters:
        size = getattr(module, name).numel()
        custom_from_mask(module, name, final[start : start + size].reshape(getattr(module, name).shape))
        start += size


def remove(module: Module, name: str) -> Module:
    """Makes the pruning of ``module.<name>`` permanent: the parameter holds the pruned values and
    the mask, ``<name>_orig`` and the hook are gone."""
    key, method = _find_pruning_hook(module, name)
    if method is None:
        raise ValueError(
            f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
        )
    method.remove(module)
    del module._forward_pre_hooks[key]
    return module


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule has a parameter being pruned."""
    return any(
        isinstance(hook, BasePruningMethod)
        for sub in module.modules()
        for hook in sub._forward_pre_hooks.values()
    )
