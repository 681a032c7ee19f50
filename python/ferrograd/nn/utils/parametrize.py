"""torch.nn.utils.parametrize: express a module's parameter or buffer as a function of others.

``register_parametrization(module, "weight", p)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and swaps the module's class for a subclass in
which ``weight`` is a property returning ``p(original)``; assigning to ``module.weight`` goes
through ``p.right_inverse``. Everything is computed with differentiable ops, so gradients
reach the originals.
"""

from __future__ import annotations

import collections.abc
from contextlib import contextmanager

import ferrograd

from ..modules import Module, ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], ferrograd.Tensor] = {}


@contextmanager
def cached():
    """Within this context, each parametrized tensor is computed once and reused (until exit)."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: ferrograd.Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set_original(original: ferrograd.Tensor, value: ferrograd.Tensor) -> None:
    """Overwrite ``original`` in place with ``value`` so the same tensor object (which optimizers
    may hold) carries the new data. ferrograd has no ``Tensor.set_``, so the shape must match."""
    if tuple(original.shape) != tuple(value.shape):
        raise RuntimeError(
            f"cannot store a tensor of shape {tuple(value.shape)} into an original of shape "
            f"{tuple(original.shape)}: ferrograd has no Tensor.set_"
        )
    with ferrograd.no_grad():
        original.copy_(value)


def _check_unchanged(dtype, shape, new: ferrograd.Tensor, message: str, before: str, after: str) -> None:
    """PyTorch's ValueError when ``new`` differs in dtype from ``dtype`` or in shape from ``shape``:
    ``message``, then the old and new values labelled ``before`` and ``after``; each of the three
    has a ``{}`` where the word "dtype" or "shape" goes."""
    for what, old, value, changed in (
        ("dtype", dtype, new.dtype, new.dtype != dtype),
        ("shape", shape, new.shape, tuple(new.shape) != tuple(shape)),
    ):
        if changed:
            raise ValueError(
                f"{message.format(what)}\n{before.format(what)}: {old}\n{after.format(what)}: {value}"
            )


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding its unparametrized value(s) as
    ``original`` (or ``original0``, ``original1``... when ``right_inverse`` returns a sequence)."""

    def __init__(self, modules, original: ferrograd.Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = tuple(original.shape)
        original_dtype = original.dtype

        with ferrograd.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (ferrograd.Tensor, collections.abc.Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, ferrograd.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            _check_unchanged(
                original.dtype,
                original.shape,
                new,
                "When `right_inverse` outputs one tensor, it may not change the {}.",
                "original.{}",
                "right_inverse(original).{}",
            )
            if new is not original:
                _set_original(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, ferrograd.Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                        f"Got element {i} of the sequence with type {type(originali).__name__}."
                    )
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

        if not self.unsafe:
            z = self()
            if not isinstance(z, ferrograd.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            _check_unchanged(
                original_dtype,
                original_shape,
                z,
                "Registering a parametrization may not change the {} of the tensor, unless `unsafe` "
                "flag is enabled.",
                "unparametrized {}",
                "parametrized {}",
            )

    def right_inverse(self, value: ferrograd.Tensor) -> None:
        """Store in the originals the value(s) whose parametrization gives ``value``."""
        with ferrograd.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, ferrograd.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _set_original(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                    f"Got a sequence of length {len(value)}."
                )
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, ferrograd.Tensor):
                    raise ValueError(
                        f"`right_inverse` must return a sequence of tensors. Got element {i} of type "
                        f"{type(tensor).__name__}"
                    )
                if original_i.dtype != tensor.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                        f"while `original{i}` has dtype {original_i.dtype}"
                    )
                _set_original(original_i, tensor)

    def forward(self) -> ferrograd.Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Give ``module`` its own subclass, so properties added to it affect this instance only."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). See:\n"
            "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
        )

    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self) -> ferrograd.Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self, value: ferrograd.Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the stored original.

    A second registration on the same name chains the new parametrization after the existing ones.
    When ``parametrization`` has ``right_inverse``, the original is initialised through it (and
    assignment to ``module.<tensor_name>`` uses it). ``unsafe=True`` skips the checks that the
    parametrization keeps the shape and dtype.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, ferrograd.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            _check_unchanged(
                y.dtype,
                y.shape,
                x,
                "Registering a parametrization may not change the {} of the tensor, unless the `unsafe` "
                "flag is enabled.",
                f"module.{tensor_name}.{{}}",
                f"parametrization(module.{tensor_name}).{{}}",
            )
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, ferrograd.Tensor):
                        raise ValueError(
                            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
                        )
                    _check_unchanged(
                        y.dtype,
                        y.shape,
                        z,
                        "The tensor returned by parametrization.right_inverse must have the same {} "
                        f"as module.{tensor_name}, unless the `unsafe` flag is enabled.",
                        f"module.{tensor_name}.{{}}",
                        "returned {}",
                    )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
            f"'{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter or buffer again,
    holding the current parametrized value (``leave_parametrized=True``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ferrograd.no_grad():
                t = getattr(module, tensor_name)
            if tuple(t.shape) == tuple(original.shape):
                _set_original(original, t)
            else:
                # an unsafe parametrization changed the shape: without Tensor.set_ the original
                # object cannot take it, so a new tensor of the same kind replaces it
                requires_grad = original.requires_grad
                original = (
                    Parameter(t.detach(), requires_grad) if isinstance(original, Parameter) else t.detach()
                )
    elif leave_parametrized:
        # no no_grad here: whether the result requires grad follows the originals
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms "
            "of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class of ``module`` before parametrizations swapped it for a subclass."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
