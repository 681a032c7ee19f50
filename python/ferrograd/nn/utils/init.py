"""torch.nn.utils.skip_init."""

from __future__ import annotations

import inspect

from ..modules import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """Instantiate ``module_cls(*args, **kwargs)`` for the caller to initialise its parameters.

    torch builds the module on the meta device to skip the default initialisation; ferrograd has
    no meta device, so the module is built normally and its values are to be treated as
    unspecified. The same checks as torch apply (a Module class taking a ``device`` argument).
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
