"""torch.nn.utils.stateless.functional_call: call a module with some of its parameters and
buffers replaced by given tensors, for that call only."""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any

import ferrograd

from ..modules import Module

__all__ = ["functional_call"]


def _tied_names(module: Module) -> dict[str, set[str]]:
    """For every parameter or buffer reachable under several names, all of its names."""
    by_tensor: dict[int, set[str]] = {}
    members = [
        *module.named_parameters(remove_duplicate=False),
        *module.named_buffers(remove_duplicate=False),
    ]
    for name, tensor in members:
        by_tensor.setdefault(id(tensor), set()).add(name)
    return {name: names for names in by_tensor.values() if len(names) > 1 for name in names}


def _untie(module: Module, tensors: dict[str, ferrograd.Tensor]) -> dict[str, ferrograd.Tensor]:
    """Extend ``tensors`` so that a value given for one name of a tied tensor replaces all its names."""
    tied = _tied_names(module)
    given = [name for name in tensors if name in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and len({id(tensors[n]) for n in names if n in tensors}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, "
                "which are tied. Consider using tie_weights=False"
            )
    untied = dict(tensors)
    for name in given:
        for other in tied[name]:
            untied[other] = tensors[name]
    return untied


def _check_keys(module: Module, tensors: dict[str, ferrograd.Tensor]) -> None:
    valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    missing = sorted(valid - set(tensors))
    unexpected = sorted(set(tensors) - valid)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError(
            "Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors))
        )


_MISSING = object()


def _swap(module: Module, name: str, value: Any) -> Any:
    """Put ``value`` at the dotted ``name`` of ``module`` and return what was there before
    (``_MISSING`` when nothing was). Parameter and buffer slots are written directly so that any
    tensor, not only a Parameter, can stand in for a parameter."""
    *path, attr = name.split(".")
    owner = module.get_submodule(".".join(path))
    for store in (owner._parameters, owner._buffers):
        if attr in store:
            old = store[attr]
            if value is _MISSING:
                del store[attr]
            else:
                store[attr] = value
            return old
    old = getattr(owner, attr, _MISSING)
    if value is _MISSING:
        delattr(owner, attr)
    else:
        setattr(owner, attr, value)
    return old


@contextmanager
def _reparametrize_module(
    module: Module, tensors: dict[str, ferrograd.Tensor], tie_weights: bool, strict: bool
):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        _check_keys(module, tensors)
    originals: list[tuple[str, Any]] = []
    try:
        for name, value in tensors.items():
            originals.append((name, _swap(module, name, value)))
        yield
    finally:
        for name, old in reversed(originals):
            _swap(module, name, old)


def functional_call(
    module: Module,
    parameters_and_buffers: dict[str, ferrograd.Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in ``parameters_and_buffers``
    (dotted names, as in ``named_parameters``) replaced for this call only; gradients flow to the
    given tensors. With ``tie_weights``, a value for one name of a tied tensor replaces all its
    names; with ``strict``, the names must be exactly the module's parameters and buffers."""
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
        "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
        "replacement.",
        FutureWarning,
        stacklevel=2,
    )
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
