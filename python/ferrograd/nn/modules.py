"""torch.nn modules: Module, containers, layers and losses.

Relies on
  Tensor: shape, dtype, grad (get and set, None allowed), grad_fn,
    requires_grad, requires_grad_(bool), detach(), detach_() (only for a grad
    that has a grad_fn), zero_(), copy_(src), to(dtype), is_floating_point(),
    is_complex(), flatten(start_dim, end_dim), indexing t[0].
  dtype objects: is_floating_point, is_complex (as torch.dtype), ==, !=.
  top level: ferrograd.Tensor, ferrograd.no_grad(), ferrograd.empty(size, dtype=None),
    ferrograd.float32, ferrograd.float64; plus what functional.py and init.py use.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import math
import operator
import sys
import types
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import ferrograd

from . import functional as F
from . import init
from ._backward_hook import BackwardHook, register_on_output_node
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyModuleMixin",
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "CTCLoss",
    "UninitializedParameter",
    "UninitializedBuffer",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveLogSoftmaxWithLoss",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AlphaDropout",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Bilinear",
    "Buffer",
    "CELU",
    "ChannelShuffle",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "CosineEmbeddingLoss",
    "CosineSimilarity",
    "CrossEntropyLoss",
    "NLLLoss2d",
    "SyncBatchNorm",
    "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "ELU",
    "Embedding",
    "EmbeddingBag",
    "FeatureAlphaDropout",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "Flatten",
    "Fold",
    "GELU",
    "GLU",
    "GaussianNLLLoss",
    "GroupNorm",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "KLDivLoss",
    "L1Loss",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LocalResponseNorm",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "MarginRankingLoss",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "PReLU",
    "PairwiseDistance",
    "ParameterDict",
    "ParameterList",
    "PixelShuffle",
    "PixelUnshuffle",
    "PoissonNLLLoss",
    "RMSNorm",
    "RReLU",
    "ReLU",
    "ReLU6",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "SELU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "Unflatten",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _BufferMeta(type):
    """Makes ``isinstance(t, Buffer)`` true for the plain tensors ``Buffer(...)`` returns."""

    def __instancecheck__(cls, instance: object) -> bool:
        if (
            cls is Buffer
            and isinstance(instance, ferrograd.Tensor)
            and getattr(instance, "_is_buffer", False)
        ):
            return True
        return super().__instancecheck__(instance)


class Buffer(ferrograd.Tensor, metaclass=_BufferMeta):
    """Marks a tensor as module state that is not a parameter: assigned to a Module attribute it
    is registered as a buffer, part of the ``state_dict`` unless ``persistent=False``. As in
    PyTorch, the object made is a plain tensor (detached, keeping ``requires_grad``) carrying the mark."""

    def __new__(cls, data: ferrograd.Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = ferrograd.empty(0)
        tensor = data.detach().requires_grad_(data.requires_grad)
        tensor.persistent = persistent
        tensor._is_buffer = True
        return tensor


def _typename(obj: object) -> str:
    """The name errors give an object's type, as ``torch.typename``: a tensor's ``type()``."""
    if isinstance(obj, ferrograd.Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _addindent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(" " * spaces + line if line.strip() else "" for line in rest)])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# The state dict key, after a module's prefix, of what its `get_extra_state` returns.
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class RemovableHandle:
    """Handle returned by hook registration; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, *hook_dicts: dict[int, Any], extra_dict: Any = None) -> None:
        # `extra_dict` (a dict or a list of dicts) holds entries kept under the same id.
        extras = (
            [] if extra_dict is None else [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict)
        )
        self.hook_dicts = (*hook_dicts, *extras)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        for hooks in self.hook_dicts:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


# ---- global module hooks ----------------------------------------------------------------
# Hooks common to every module (``ferrograd.nn.modules.module.register_module_*``). In each
# kind they run before the module's own hooks, as in PyTorch.

_global_buffer_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_module_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_parameter_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_forward_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict[int, bool] = OrderedDict()
_global_forward_hooks_always_called: OrderedDict[int, bool] = OrderedDict()
_global_backward_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_backward_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
# Whether `_global_backward_hooks` holds full hooks (True) or deprecated ones (False); None
# until one is registered.
_global_is_full_backward_hook: bool | None = None
# Every registered global forward (pre-)hook and backward (pre-)hook by id, so that a module
# call without hooks pays one check for all of them.
_global_call_hooks: dict[int, Callable[..., Any]] = {}


def _add_global_call_hook(
    hooks: dict[int, Callable[..., Any]], hook: Callable[..., Any], *flag_dicts: dict[int, bool]
) -> RemovableHandle:
    handle = RemovableHandle(hooks, _global_call_hooks, *flag_dicts)
    hooks[handle.id] = hook
    _global_call_hooks[handle.id] = hook
    return handle


def _add_hook(
    hooks: dict[int, Callable[..., Any]], hook: Callable[..., Any], prepend: bool = False
) -> RemovableHandle:
    """Registers ``hook`` last in ``hooks`` (an ``OrderedDict``; first with ``prepend``)."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
    return handle


def _run_registration_hooks(
    hooks: dict[int, Callable[..., Any]], module: Module, name: str, value: Any
) -> Any:
    """`value` as the hooks leave it: each runs as `hook(module, name, value)` and may return a
    replacement."""
    for hook in hooks.values():
        replaced = hook(module, name, value)
        if replaced is not None:
            value = replaced
    return value


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, args)` runs before every module's forward (before the module's own
    pre-hooks) and may return replacement args (a value that is not a tuple is wrapped in one)."""
    return _add_global_call_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """`hook(module, args, output)` (`hook(module, args, kwargs, output)` with `with_kwargs`)
    runs after every module's forward (before the module's own hooks) and may return a
    replacement output; with `always_call` it also runs when the call raises."""
    handle = _add_global_call_hook(
        _global_forward_hooks, hook, _global_forward_hooks_with_kwargs, _global_forward_hooks_always_called
    )
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _set_global_backward_hook_kind(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
            "Please use only one of them."
        )
    _global_is_full_backward_hook = full


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Like `Module.register_full_backward_pre_hook`, for every module (before its own)."""
    return _add_global_call_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Like `Module.register_full_backward_hook`, for every module (before its own)."""
    _set_global_backward_hook_kind(full=True)
    return _add_global_call_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Deprecated in favour of `register_module_full_backward_hook`: like
    `Module.register_backward_hook`, for every module."""
    _set_global_backward_hook_kind(full=False)
    return _add_global_call_hook(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, name, buffer)` runs whenever a module registers a buffer and may return
    the buffer to register instead."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, name, submodule)` runs whenever a module registers a submodule and may
    return the submodule to register instead."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, name, param)` runs whenever a module registers a parameter (not None) and
    may return the parameter to register instead."""
    return _add_hook(_global_parameter_registration_hooks, hook)


class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    _version: int = 1
    training: bool
    # Whether `Module.__init__` passes its arguments on to the next class (never, here).
    call_super_init: bool = False
    # Whether loading a state dict warns when a module's `_version` changed (it does not).
    dump_patches: bool = False

    def __init__(self) -> None:
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        for name in self._hook_dicts:
            setattr_(name, OrderedDict())
        # Whether `_backward_hooks` holds full hooks (True) or the deprecated
        # ones of `register_backward_hook` (False); None while it is empty.
        setattr_("_is_full_backward_hook", None)

    _hook_dicts = (
        "_forward_hooks",
        "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called",
        "_forward_pre_hooks",
        "_forward_pre_hooks_with_kwargs",
        "_backward_hooks",
        "_backward_pre_hooks",
        "_state_dict_hooks",
        "_state_dict_pre_hooks",
        "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks",
    )

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # A module pickled before a kind of hook existed gets that kind's empty dict.
        for name in self._hook_dicts:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- calling, hooks -------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_hooks
            or self._forward_pre_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_call_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call with its hooks, the global ones before the module's own in each kind; if it
        raises, the forward hooks registered with ``always_call`` that have not run yet run then
        (an error of theirs becomes a warning, so the original error is the one raised)."""
        result = None
        forward_hooks_run: set[int] = set()

        def run_forward_hook(hook_id: int, hook: Callable[..., Any]) -> None:
            nonlocal result
            forward_hooks_run.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                replaced = hook(self, args, kwargs, result)
            else:
                replaced = hook(self, args, result)
            if replaced is not None:
                result = replaced

        try:
            full_hooks, deprecated_hooks = self._backward_hooks_by_kind()
            backward_pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            for hook_id, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs)
                    if replaced is not None:
                        if not (isinstance(replaced, tuple) and len(replaced) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {replaced}."
                            )
                        args, kwargs = replaced
                else:
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
            backward_hook = None
            if full_hooks or backward_pre_hooks:
                backward_hook = BackwardHook(self, full_hooks, backward_pre_hooks)
                args = backward_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                run_forward_hook(hook_id, hook)
            if backward_hook is not None:
                if not isinstance(result, (ferrograd.Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a tuple of "
                        f"Tensors but received {type(result)}",
                        stacklevel=3,
                    )
                result = backward_hook.setup_output_hook(result)
            if deprecated_hooks:
                register_on_output_node(self, deprecated_hooks, args, result)
            return result
        except Exception:
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                always_call = (
                    hook_id in _global_forward_hooks_always_called
                    or hook_id in self._forward_hooks_always_called
                )
                if hook_id in forward_hooks_run or not always_call:
                    continue
                try:
                    run_forward_hook(hook_id, hook)
                except Exception as ex:
                    scope = "global module" if hook_id in _global_forward_hooks else "module"
                    warnings.warn(
                        f"{scope} forward hook with ``always_call=True`` raised an exception that was "
                        f"silenced as another error was raised in forward: {ex}",
                        stacklevel=3,
                    )
            raise

    def _backward_hooks_by_kind(self) -> tuple[list[Callable[..., Any]], list[Callable[..., Any]]]:
        """The full backward hooks and the deprecated ones that apply to this module."""
        full: list[Callable[..., Any]] = []
        deprecated: list[Callable[..., Any]] = []
        for kind, hooks in (
            (_global_is_full_backward_hook, _global_backward_hooks),
            (self._is_full_backward_hook, self._backward_hooks),
        ):
            if kind is not None:
                (full if kind else deprecated).extend(hooks.values())
        return full, deprecated

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, grad_output)` runs when the gradients of the module's
        outputs are known; it may return replacements for them."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` runs when the gradients of
        the module's inputs are known; it may return replacements for them."""
        self._set_backward_hook_kind(full=True)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in favour of `register_full_backward_hook`: `hook(module,
        grad_input, grad_output)` runs on the node that produced the module's
        output, so `grad_input` are the gradients of that last op's inputs."""
        self._set_backward_hook_kind(full=False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _set_backward_hook_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. "
                "Please use only one of them."
            )
        super().__setattr__("_is_full_backward_hook", full)

    def register_forward_pre_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
    ) -> RemovableHandle:
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        handle = RemovableHandle(
            self._forward_hooks,
            self._forward_hooks_with_kwargs,
            self._forward_hooks_always_called,
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---- registration ---------------------------------------------------------------

    def _check_name(self, kind: str, name: object, store: dict[str, Any]) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: ferrograd.Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, ferrograd.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (ferrograd Tensor or None required)"
            )
        self._buffers[name] = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ferrograd.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        if param is not None:
            param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        module = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")  # noqa: TRY004 (as torch)
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Sets the submodule at the dotted path `target`, whose parent must exist; with `strict`,
        only an existing submodule is replaced."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")  # noqa: TRY004 (as torch)
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if hasattr(parent, name):
            if not isinstance(getattr(parent, name), Module):
                raise AttributeError(f"`{name}` is not an nn.Module")
        elif strict:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        setattr(parent, name, module)

    def _get_member(self, target: str, is_member: Callable[[Module, str], bool], kind: str) -> Any:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if not is_member(module, name):
            raise AttributeError(f"`{name}` is not {kind}")
        return getattr(module, name)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path `target`."""
        return self._get_member(
            target, lambda m, name: isinstance(getattr(m, name), Parameter), "an nn.Parameter"
        )

    def get_buffer(self, target: str) -> ferrograd.Tensor:
        """The buffer at the dotted path `target`."""
        return self._get_member(target, lambda m, name: name in m._buffers, "a buffer")

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in state and name in state[store]:
                return state[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*stores: dict[str, Any] | set[str]) -> None:
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__,
                self._buffers,
                self._modules,
                self._non_persistent_buffers_set,
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (ferrograd.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(
                self.__dict__,
                self._parameters,
                self._buffers,
                self._non_persistent_buffers_set,
            )
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (ferrograd.nn.Module or None expected)"
                )
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, ferrograd.Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(ferrograd.nn.Buffer, ferrograd.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = [
            *dir(type(self)),
            *self.__dict__,
            *self._parameters,
            *self._modules,
            *self._buffers,
        ]
        return sorted(key for key in keys if not key[0].isdigit())

    # ---- iteration ------------------------------------------------------------------

    def _named_members(
        self,
        get_members: Callable[[Module], Iterable[tuple[str, Any]]],
        prefix: str,
        recurse: bool,
        remove_duplicate: bool,
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()  # by id: tensors compare elementwise
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, ferrograd.Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[ferrograd.Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(
        self,
        memo: set[Module] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(
                    memo, prefix + ("." if prefix else "") + name, remove_duplicate
                )

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    # ---- modes, gradients, conversion ----------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004 (as torch)
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            _zero_grad(p, set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(
        self,
        fn: Callable[[ferrograd.Tensor], ferrograd.Tensor],
        recurse: bool = True,
        *,
        _memo: dict[object, tuple[ferrograd.Tensor, ferrograd.Tensor]] | None = None,
    ) -> Module:
        """Replace every parameter, gradient and buffer ``t`` by ``fn(t)`` (in submodules too
        unless not ``recurse``).

        A converted parameter or gradient stays the same object and takes the converted
        elements as its ``.data``, as in PyTorch, so optimizers built before still hold the
        module's parameters. A parameter or gradient shared by several modules or names, as tied weights are, is
        converted once, so they share the new one too, as in PyTorch: ``_memo`` maps each one
        converted in this call (a parameter by its id, a gradient by its data, since ``.grad``
        gives a new wrapper at each access) to it, kept alive so the id is not reused, and its
        replacement.
        """
        memo: dict[object, tuple[ferrograd.Tensor, ferrograd.Tensor]] = {} if _memo is None else _memo

        def once(key: object, t: ferrograd.Tensor, convert: Callable[[ferrograd.Tensor], ferrograd.Tensor]):
            entry = memo.get(key)
            if entry is None:
                entry = memo[key] = (t, convert(t))
            return entry[1]

        def convert_tensor(t: ferrograd.Tensor) -> ferrograd.Tensor:
            with ferrograd.no_grad():
                return fn(t)

        def convert_parameter(param: ferrograd.Tensor) -> ferrograd.Tensor:
            applied = convert_tensor(param)
            if applied is not param:
                param.data = applied
            grad = param.grad
            if grad is not None:
                data = ("grad", grad.data_ptr(), tuple(grad.shape), tuple(grad.stride()), grad.dtype)
                grad_applied = once(data, grad, convert_tensor)
                if grad_applied is not grad:
                    grad.data = grad_applied
            return param

        for module in self.children() if recurse else ():
            module._apply(fn, _memo=memo)
        for key, param in self._parameters.items():
            if param is not None:
                self._parameters[key] = once(id(param), param, convert_parameter)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(dtype)``, ``to(tensor)``, ``to(device)`` ("cpu" only), ``to(device, dtype)``, and
        ``memory_format=`` (``channels_last`` lays out 4-d parameters and buffers as N, H, W, C)."""
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        memory_format = kwargs.pop("memory_format", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for arg in args:
            if isinstance(arg, ferrograd.Tensor):
                dtype = arg.dtype
            elif isinstance(arg, str) or type(arg).__name__ == "device":
                device = arg
            elif not isinstance(arg, bool):  # a bool is non_blocking
                dtype = arg
        if device is not None and str(device).split(":")[0] != "cpu":
            raise RuntimeError(f"ferrograd only supports the cpu device, got {device}")
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
                )
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design may change, and "
                    "some modules might not work as expected when using complex tensors as parameters or buffers.",
                    stacklevel=2,
                )
            self._cast(dtype, complex_too=True)
        if memory_format is not None:
            rank = {ferrograd.channels_last: 4, ferrograd.channels_last_3d: 5}.get(memory_format)
            self._apply(lambda t: t.contiguous(memory_format=memory_format) if t.dim() == rank else t)
        return self

    def float(self) -> Module:
        return self._cast(ferrograd.float32)

    def double(self) -> Module:
        return self._cast(ferrograd.float64)

    def _cast(self, dtype: Any, complex_too: bool = False) -> Module:
        """Convert floating (and optionally complex) tensors that are not yet ``dtype``."""

        def convert(t: ferrograd.Tensor) -> ferrograd.Tensor:
            eligible = t.is_floating_point() or (complex_too and t.is_complex())
            return t.to(dtype) if eligible and t.dtype != dtype else t

        return self._apply(convert)

    def cpu(self) -> Module:
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Parameters and buffers of the same shapes and dtypes, uninitialised, on ``device``
        (the CPU): for a module built without initialising its weights, which are set next."""
        return self._apply(lambda t: ferrograd.empty_like(t).to(device), recurse=recurse)

    def cuda(self, device: Any = None) -> Module:
        """ferrograd computes on the CPU only, so this raises as PyTorch built without CUDA does."""
        raise AssertionError("Torch not compiled with CUDA enabled")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """ferrograd runs eagerly, so compiling a module in place leaves it unchanged."""
        ferrograd.compile(self, *args, **kwargs)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self) -> Module:
        return self._apply(lambda t: t.share_memory_())

    # ---- state dict -----------------------------------------------------------------

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` runs after `state_dict()` has
        gathered the module's entries; what it returns (if not None) replaces the state dict
        of the module `state_dict()` was called on."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was previously "
                "registered via register_state_dict_post_hook"
            )
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` runs after `state_dict()` has
        gathered the module's entries and may change the state dict in place only."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` runs before `state_dict()` gathers the module's entries."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """`hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)` (with the module first if `with_module`) runs before the module loads its
        entries."""
        return _add_hook(
            self._load_state_dict_pre_hooks, functools.partial(hook, self) if with_module else hook
        )

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` runs before the module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, incompatible_keys)` runs once the module and its children are loaded; it
        may change the missing and unexpected keys in place, which `strict` then checks."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    def get_extra_state(self) -> Any:
        """Overridden (with `set_extra_state`) by modules that keep state other than tensors in
        their state dict, under the key `_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called: a module that "
            "keeps extra state overrides both get_extra_state and set_extra_state."
        )

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called: a module that "
            "keeps extra state overrides both get_extra_state and set_extra_state."
        )

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(
        self,
        *args: Any,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ):
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            # (destination, prefix, keep_vars) in that order; a keyword given too wins.
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination,
                    prefix=prefix + name + ".",
                    keep_vars=keep_vars,
                )
        for hook in self._state_dict_hooks.values():
            returned = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if returned is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif returned is not None:
                destination = returned
        return destination

    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {
            k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, ferrograd.Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected ferrograd.Tensor or Tensor-like object '
                    f"from checkpoint but received {type(value)}"
                )
                continue
            if len(param.shape) == 0 and tuple(value.shape) == (1,):
                value = value[0]
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            try:
                with ferrograd.no_grad():
                    if not assign:
                        param.copy_(value)
                        continue
                    if isinstance(param, Parameter):
                        if isinstance(value, Parameter):
                            value.requires_grad_(param.requires_grad)
                        else:
                            value = Parameter(value, requires_grad=param.requires_grad)
                    setattr(self, name, value)
            except (RuntimeError, TypeError, ValueError) as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are {param.shape} '
                    f"and whose dimensions in the checkpoint are {value.shape}, an exception occurred : {ex.args}."
                )
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    head, *rest = key[len(prefix) :].split(".", 1)
                    if head not in (self._modules if rest else local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)

        def load(module: Module, local_state_dict: Mapping[str, Any], prefix: str = "") -> None:
            local_metadata = dict({} if metadata is None else metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(
                local_state_dict,
                prefix,
                local_metadata,
                True,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(
                        child,
                        {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                        child_prefix,
                    )
            # The hooks see the keys gathered so far and may change them in place.
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to "
                        "return new values, if incompatible_keys need to be modified, it should be done "
                        "inplace."
                    )

        state_dict = OrderedDict(state_dict)  # a copy, which the pre-hooks may change
        if metadata is not None:
            state_dict._metadata = metadata
        load(self, state_dict)
        if strict:
            if unexpected_keys:
                keys = ", ".join(f'"{k}"' for k in unexpected_keys)
                error_msgs.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing_keys:
                keys = ", ".join(f'"{k}"' for k in missing_keys)
                error_msgs.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- repr -----------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra_lines = self.extra_repr().split("\n") if self.extra_repr() else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _zero_grad(p: ferrograd.Tensor, set_to_none: bool) -> None:
    """torch's per-parameter zero_grad (shared with optim.Optimizer.zero_grad)."""
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    if p.grad.grad_fn is not None:
        p.grad.detach_()
    else:
        p.grad.requires_grad_(False)
    p.grad.zero_()


class _ModuleSubmodule(types.ModuleType):
    """``ferrograd.nn.modules.module``, where PyTorch keeps ``Module`` and the global module
    hooks, so that code importing them from ``torch.nn.modules.module`` runs unchanged. Its
    names are read and written through to this module's globals, so that both see one state
    (a test that resets the kind of the global backward hooks, say)."""

    _public = [
        "register_module_forward_pre_hook",
        "register_module_forward_hook",
        "register_module_full_backward_pre_hook",
        "register_module_backward_hook",
        "register_module_full_backward_hook",
        "register_module_buffer_registration_hook",
        "register_module_module_registration_hook",
        "register_module_parameter_registration_hook",
        "Module",
    ]
    _names = frozenset(
        [
            *_public,
            "Buffer",
            "Parameter",
            "RemovableHandle",
            "_EXTRA_STATE_KEY_SUFFIX",
            "_IncompatibleKeys",
            "_addindent",
            *(name for name in globals() if name.startswith("_global_")),
        ]
    )

    def __getattr__(self, name: str) -> Any:
        if name in _ModuleSubmodule._names:
            return globals()[name]
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _ModuleSubmodule._names:
            globals()[name] = value
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in _ModuleSubmodule._names:
            del globals()[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_ModuleSubmodule._names})


def _register_module_submodule() -> _ModuleSubmodule:
    """Makes the submodule importable though this module is not a package: ``import`` finds a
    dotted name already in ``sys.modules``."""
    name = f"{__name__}.module"
    submodule = _ModuleSubmodule(name, "Module and the hooks common to all modules.")
    submodule.__spec__ = importlib.util.spec_from_loader(name, loader=None)
    submodule.__package__ = submodule.__spec__.parent
    submodule.__all__ = list(_ModuleSubmodule._public)
    sys.modules[name] = submodule
    return submodule


module = _register_module_submodule()


# ---- containers -----------------------------------------------------------------------


class Sequential(Module):
    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key(self, idx: int) -> str:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % size]

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            delattr(self, key)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def _check_sequential(self, other: object) -> None:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {type(other)} is given."
            )

    def _check_factor(self, factor: object) -> None:
        if not isinstance(factor, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(factor)}")
        if factor <= 0:
            raise ValueError(f"Non-positive multiplication factor {factor} for {type(self)}")

    def __add__(self, other: Sequential) -> Sequential:
        self._check_sequential(other)
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        self._check_sequential(other)
        return self.extend(other)

    def __mul__(self, factor: int) -> Sequential:
        """The modules repeated `factor` times (the same module objects, as in PyTorch)."""
        self._check_factor(factor)
        return Sequential(*(list(self) * factor))

    __rmul__ = __mul__

    def __imul__(self, factor: int) -> Sequential:
        self._check_factor(factor)
        return self.extend(list(self) * (factor - 1))

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for layer in sequential:
            self.append(layer)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")  # noqa: TRY004 (as torch)
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, idx: int) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = [str(k) for k in range(len(self))[idx]] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            delattr(self, key)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]):
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got " + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def __repr__(self) -> str:
        """Like Module's, with runs of identical children shown once as ``(a-b): n x child``."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for end in range(1, len(reprs) + 1):
            if end == len(reprs) or reprs[end] != reprs[start]:
                run = end - start
                text = (
                    f"({start}): {reprs[start]}"
                    if run == 1
                    else f"({start}-{end - 1}): {run} x {reprs[start]}"
                )
                lines.append(_addindent(text, 2))
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        pairs = modules.items() if isinstance(modules, (Mapping, ModuleDict)) else modules
        for j, pair in enumerate(pairs):
            if not isinstance(pair, Iterable):
                raise TypeError(
                    f"ModuleDict update sequence element #{j} should be Iterable; is" + type(pair).__name__
                )
            if len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required"
                )
            self[pair[0]] = pair[1]


# ---- layers ---------------------------------------------------------------------------


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), initialised as torch does."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ferrograd.empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(ferrograd.empty((out_features,), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T W x2 + b`` with W of shape (out_features, in1_features, in2_features), both
    initialised from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(ferrograd.empty((out_features, in1_features, in2_features), dtype=dtype))
        if bias:
            self.bias = Parameter(ferrograd.empty((out_features,), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: ferrograd.Tensor, input2: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        raise NotImplementedError

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._activate(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.relu(input, inplace=inplace)


class RReLU(Module):
    """Randomized leaky ReLU: a random negative slope in ``[lower, upper]`` in training, their
    mean in evaluation."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Tanh(Module):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.sigmoid(input)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.silu(input, inplace=inplace)


class _SlopedActivation(Module):
    """An activation with one coefficient (named by ``_coefficient``) and an ``inplace`` flag."""

    _coefficient = ""

    def __init__(self, coefficient: float, inplace: bool) -> None:
        super().__init__()
        setattr(self, self._coefficient, coefficient)
        self.inplace = inplace

    def _activate(self, input: ferrograd.Tensor, coefficient: float, inplace: bool) -> ferrograd.Tensor:
        raise NotImplementedError

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._activate(input, getattr(self, self._coefficient), self.inplace)

    def extra_repr(self) -> str:
        text = f"{self._coefficient}={getattr(self, self._coefficient)}"
        return text + (", inplace=True" if self.inplace else "")


class ELU(_SlopedActivation):
    _coefficient = "alpha"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha, inplace)

    def _activate(self, input: ferrograd.Tensor, coefficient: float, inplace: bool) -> ferrograd.Tensor:
        return F.elu(input, coefficient, inplace)


class LeakyReLU(_SlopedActivation):
    _coefficient = "negative_slope"

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(negative_slope, inplace)

    def _activate(self, input: ferrograd.Tensor, coefficient: float, inplace: bool) -> ferrograd.Tensor:
        return F.leaky_relu(input, coefficient, inplace)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.logsigmoid(input)


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a 3-D or 4-D input."""

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(Softmax):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _DropoutNd(Module):
    """A dropout module: the probability ``p`` and the ``inplace`` flag, checked as PyTorch does;
    ``forward`` applies the subclass's functional form ``_dropout``."""

    _dropout = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        F._check_dropout_p(p)
        self.p = p
        self.inplace = inplace

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    _dropout = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    _dropout = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    _dropout = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    _dropout = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    _dropout = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    _dropout = staticmethod(F.feature_alpha_dropout)


class Upsample(Module):
    def __init__(
        self,
        size: int | tuple[int, ...] | None = None,
        scale_factor: float | tuple[float, ...] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor
        )

    def extra_repr(self) -> str:
        factor = self.scale_factor
        factor = float(factor) if isinstance(factor, (int, float)) else factor
        what = f"size={self.size}" if self.size is not None else f"scale_factor={factor}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Deprecated: ``Upsample`` with mode ``"nearest"``."""

    def __init__(
        self,
        size: int | tuple[int, int] | None = None,
        scale_factor: float | tuple[float, float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Deprecated: ``Upsample`` with mode ``"bilinear"`` and ``align_corners=True``."""

    def __init__(
        self,
        size: int | tuple[int, int] | None = None,
        scale_factor: float | tuple[float, float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


def _affine_parameters(module: Module, shape: tuple[int, ...], affine: bool, bias: bool, dtype) -> None:
    """A norm's ``weight`` (ones) and ``bias`` (zeros) of ``shape``, or ``None`` for those left out."""
    module.register_parameter("weight", Parameter(ferrograd.ones(shape, dtype=dtype)) if affine else None)
    module.register_parameter(
        "bias", Parameter(ferrograd.zeros(shape, dtype=dtype)) if affine and bias else None
    )


class LayerNorm(Module):
    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, shape, elementwise_affine, bias, dtype)

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class LocalResponseNorm(Module):
    """Normalizes each value by the mean square over ``size`` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _embedding_options_repr(m: Embedding | EmbeddingBag) -> str:
    """The renormalisation and gradient-scaling options that differ from the defaults."""
    text = ""
    if m.max_norm is not None:
        text += f", max_norm={m.max_norm}"
    if m.norm_type != 2:
        text += f", norm_type={m.norm_type}"
    if m.scale_grad_by_freq:
        text += f", scale_grad_by_freq={m.scale_grad_by_freq}"
    return text


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows of ``embedding_dim`` values (``F.embedding``)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: ferrograd.Tensor | None = None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(
                ferrograd.empty((num_embeddings, embedding_dim), dtype=dtype), requires_grad=not _freeze
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with ferrograd.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        text += _embedding_options_repr(self)
        if self.sparse:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(
        cls,
        embeddings: ferrograd.Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An ``Embedding`` whose weight is ``embeddings`` (trainable unless ``freeze``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``F.embedding_bag``) without building the
    intermediate embeddings' batch."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: ferrograd.Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(ferrograd.empty((num_embeddings, embedding_dim), dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    reset_parameters = Embedding.reset_parameters  # N(0, 1), with a zero row at padding_idx

    def forward(
        self,
        input: ferrograd.Tensor,
        offsets: ferrograd.Tensor | None = None,
        per_sample_weights: ferrograd.Tensor | None = None,
    ) -> ferrograd.Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        text += _embedding_options_repr(self)
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

    @classmethod
    def from_pretrained(
        cls,
        embeddings: ferrograd.Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An ``EmbeddingBag`` whose weight is ``embeddings`` (trainable unless ``freeze``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows,
            cols,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            embeddings,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag


class _ConvNd(Module):
    """Shared arguments, checks, initialisation and repr of the convolution modules."""

    _dims = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        output_padding=0,
        dtype=None,
    ) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = F._ntuple(kernel_size, n, "kernel_size")
        self.stride = F._ntuple(stride, n, "stride")
        self.dilation = F._ntuple(dilation, n, "dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: tuple[int, ...] | str = padding
        else:
            self.padding = F._ntuple(padding, n, "padding")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        self.output_padding = F._ntuple(output_padding, n, "output_padding")
        if self.padding == "same":
            self._reversed_padding_repeated_twice = F._same_padding(
                ferrograd.empty((1, 1, *self.kernel_size)), self.dilation
            )
        elif self.padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * n
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(ferrograd.empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(ferrograd.empty((out_channels,), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, conv, input: ferrograd.Tensor) -> ferrograd.Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        n = self._dims
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        )
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-d cross-correlation with PyTorch's arguments, padding modes and initialisation."""

    _dims = 1

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] = 1,
        padding: int | tuple[int] | str = 0,
        dilation: int | tuple[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype=dtype,
        )

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._conv_forward(F.conv1d, input)


class Conv2d(_ConvNd):
    """2-d cross-correlation with PyTorch's arguments, padding modes and initialisation."""

    _dims = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] | str = 0,
        dilation: int | tuple[int, int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype=dtype,
        )

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._conv_forward(F.conv2d, input)


class Conv3d(_ConvNd):
    """3-d cross-correlation with PyTorch's arguments, padding modes and initialisation."""

    _dims = 3

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int, int],
        stride: int | tuple[int, int, int] = 1,
        padding: int | tuple[int, int, int] | str = 0,
        dilation: int | tuple[int, int, int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype=dtype,
        )

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._conv_forward(F.conv3d, input)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            output_padding,
            dtype,
        )

    def _output_padding(self, input: ferrograd.Tensor, output_size) -> tuple[int, ...]:
        """The output padding giving ``output_size`` (spatial, or with batch and channels)."""
        n = self._dims
        if output_size is None:
            return self.output_padding
        leading = 2 if input.dim() == n + 2 else 1
        sizes = list(output_size)
        if len(sizes) == leading + n:
            sizes = sizes[leading:]
        if len(sizes) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or {leading + n} "
                f"elements (got {len(sizes)})"
            )
        smallest = [
            (input.shape[leading + d] - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        largest = [s + self.stride[d] - 1 for d, s in enumerate(smallest)]
        for d in range(n):
            if not smallest[d] <= sizes[d] <= largest[d]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {smallest} to "
                    f"{largest} (for an input of {tuple(input.shape[leading:])})"
                )
        return tuple(s - m for s, m in zip(sizes, smallest))

    def forward(self, input: ferrograd.Tensor, output_size: list[int] | None = None) -> ferrograd.Tensor:
        return self._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self._output_padding(input, output_size),
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose (input gradient) of ``Conv1d``, with PyTorch's arguments and initialisation."""

    _dims = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose (input gradient) of ``Conv2d``, with PyTorch's arguments and initialisation."""

    _dims = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose (input gradient) of ``Conv3d``, with PyTorch's arguments and initialisation."""

    _dims = 3
    _conv = staticmethod(F.conv_transpose3d)


class MaxPool2d(Module):
    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    _pool = staticmethod(F.max_pool2d)  # the 1-d and 3-d subclasses swap in theirs

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    _pool = staticmethod(F.avg_pool2d)  # AvgPool3d swaps in its own

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size: int | tuple[int | None, int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    _pool = staticmethod(F.adaptive_avg_pool2d)  # the 1-d and 3-d subclasses swap in theirs

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    _pool = staticmethod(F.max_pool1d)


class MaxPool3d(MaxPool2d):
    _pool = staticmethod(F.max_pool3d)


class AvgPool3d(AvgPool2d):
    _pool = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    _pool = staticmethod(F.adaptive_avg_pool3d)


class AvgPool1d(Module):
    def __init__(
        self,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] | None = None,
        padding: int | tuple[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = F._ntuple(kernel_size, 1, "kernel_size")
        self.stride = F._ntuple(stride if stride is not None else kernel_size, 1, "stride")
        self.padding = F._ntuple(padding, 1, "padding")
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveMaxPool2d(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    _pool = staticmethod(F.adaptive_max_pool2d)  # the 1-d and 3-d subclasses swap in theirs

    def forward(self, input: ferrograd.Tensor):
        return self._pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    _pool = staticmethod(F.adaptive_max_pool3d)


class LPPool2d(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    _pool = staticmethod(F.lp_pool2d)  # the 1-d and 3-d subclasses swap in theirs

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return self._pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(LPPool2d):
    _pool = staticmethod(F.lp_pool1d)


class LPPool3d(LPPool2d):
    _pool = staticmethod(F.lp_pool3d)


class MaxUnpool2d(Module):
    _dims = 2
    _unpool = staticmethod(F.max_unpool2d)  # the 1-d and 3-d subclasses swap in theirs

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = F._ntuple(kernel_size, self._dims, "kernel_size")
        self.stride = F._ntuple(stride if stride is not None else kernel_size, self._dims, "stride")
        self.padding = F._ntuple(padding, self._dims, "padding")

    def forward(
        self, input: ferrograd.Tensor, indices: ferrograd.Tensor, output_size=None
    ) -> ferrograd.Tensor:
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    _dims = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool3d(MaxUnpool2d):
    _dims = 3
    _unpool = staticmethod(F.max_unpool3d)


class FractionalMaxPool2d(Module):
    """Fractional max pooling (``F.fractional_max_pool2d``) to ``output_size`` or ``output_ratio``
    times the input; a fixed ``_random_samples`` buffer, when given, places the windows."""

    _dims = 2
    _pool = staticmethod(F.fractional_max_pool2d)  # FractionalMaxPool3d swaps in its own

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        n = self._dims

        def expand(value):
            return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n

        self.kernel_size = expand(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = expand(output_size) if output_size is not None else None
        self.output_ratio = expand(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: ferrograd.Tensor):
        return self._pool(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool3d(FractionalMaxPool2d):
    _dims = 3
    _pool = staticmethod(F.fractional_max_pool3d)


_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax over many classes (Grave et al.): a ``head`` scores the ``cutoffs[0]``
    frequent classes plus one entry per cluster of rarer classes, and ``tail[i]`` (a low-rank
    projection) scores the classes of cluster ``i`` given that cluster."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                "where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):  # cluster i: a projection to in_features / div_value ** (i + 1)
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, dtype=dtype),
                    Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for linear in projection:
                linear.reset_parameters()

    def forward(self, input_: ferrograd.Tensor, target_: ferrograd.Tensor) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"torch.Size({list(input_.shape)})"
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"torch.Size({list(input_.shape)})"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.shape[0]
        output = ferrograd.zeros((batch,), dtype=input.dtype)
        head_index = ferrograd.zeros((batch,), dtype=ferrograd.int64)  # the head entry each row scores
        used = 0
        bounds = [0, *self.cutoffs]
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            used += rows.numel()
            if i == 0:
                head_index = head_index.index_put((rows,), target[rows])
                continue
            head_index = head_index.index_put(
                (rows,), ferrograd.full((rows.numel(),), self.shortlist_size + i - 1, dtype=ferrograd.int64)
            )
            cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = cluster.gather(1, (target[rows] - low).unsqueeze(1)).squeeze(1)
            output = output.index_put((rows,), local)
        if used != batch:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{int(target.min())}, {int(target.max())}] were found. "
            )
        head = F.log_softmax(self.head(input), dim=1)
        output = output + head.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: ferrograd.Tensor, head_output: ferrograd.Tensor) -> ferrograd.Tensor:
        """Log-probabilities of all classes: the head's for the shortlist, and for each cluster its
        own plus the head's for the cluster."""
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, : self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = F.log_softmax(projection(input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return ferrograd.cat(parts, 1)

    def log_prob(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        """Log-probabilities of every class, (batch, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        """The most likely class of each row: the head's choice when it is in the shortlist."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        rare = output >= self.shortlist_size
        if not bool(rare.any()):
            return output
        if bool(rare.all()):
            return self._full_log_prob(input, head_output).argmax(dim=1)
        rows = rare.nonzero().reshape(-1)
        best = self._full_log_prob(input[rows], head_output[rows]).argmax(dim=1)
        return output.index_put((rows,), best)


class _BatchNorm(Module):
    """Batch normalization over dim 1 with running statistics, as PyTorch's ``_BatchNorm``."""

    # Version 2 added `num_batches_tracked`.
    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(ferrograd.ones((num_features,), dtype=dtype))
            if bias:
                self.bias = Parameter(ferrograd.zeros((num_features,), dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", ferrograd.zeros((num_features,), dtype=dtype))
            self.register_buffer("running_var", ferrograd.ones((num_features,), dtype=dtype))
            self.register_buffer("num_batches_tracked", ferrograd.tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _load_from_state_dict(
        self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any], *args: Any
    ) -> None:
        # A state dict of an older version, or one without metadata, may lack the batch
        # count: the module keeps its own.
        key = prefix + "num_batches_tracked"
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = (
                self.num_batches_tracked
                if self.num_batches_tracked is not None
                else ferrograd.tensor(0, dtype=ferrograd.long)
            )
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or self.running_mean is None
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if tracked else None,
            self.running_var if tracked else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics span every process of a distributed group. ferrograd
    runs in one process, so the group is this process and the statistics are the batch's own,
    as ``BatchNorm*d`` computes them; ``process_group`` is kept for code that sets it."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` in it replaced by a ``SyncBatchNorm`` sharing its
        parameters and running statistics."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                converted.weight, converted.bias = module.weight, module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


# ---- losses ---------------------------------------------------------------------------


class _Loss(Module):
    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: ferrograd.Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(
        self,
        weight: ferrograd.Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: ferrograd.Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class KLDivLoss(_Loss):
    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class NLLLoss(_WeightedLoss):
    def __init__(
        self,
        weight: ferrograd.Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its deprecated name; warns as PyTorch does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(*args, **kwargs)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(
        self,
        weight: ferrograd.Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class LinearCrossEntropyOptions:
    """How PyTorch may chunk ``linear_cross_entropy`` to save memory. ferrograd takes and keeps
    these settings, but computes the logits whole whatever they say."""

    _ACC_POLICIES = ("accurate", "balanced", "compact", "auto")

    def __init__(
        self,
        allow_retain_graph: bool = False,
        batch_chunk_size: int | None = None,
        chunking_method: str | None = "auto",
        acc_policy: str = "auto",
        acc_dtype: ferrograd.dtype | None = None,
    ) -> None:
        if acc_policy not in self._ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {acc_policy!r}")
        if chunking_method not in (None, "auto"):
            name, _, factor = chunking_method.partition(":")
            if name != "aspect_ratio" or not (factor or "1").isdigit() or int(factor or "1") < 1:
                raise ValueError(f"invalid chunking_method: {chunking_method!r}")
        if batch_chunk_size is not None and not (isinstance(batch_chunk_size, int) and batch_chunk_size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {batch_chunk_size}")
        self.allow_retain_graph = allow_retain_graph
        self.batch_chunk_size = batch_chunk_size
        self.chunking_method = chunking_method
        self.acc_policy = acc_policy
        self.acc_dtype = acc_dtype

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"LinearCrossEntropyOptions({fields})"


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``target`` against the logits of a learned linear map of the input
    (``self.linear``, of ``num_classes * prod(out_features)`` outputs), reshaped to
    ``(N, num_classes, *out_features)`` for a K-dimensional loss."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: ferrograd.Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear holds a 2-d weight; forward views it as (C, *out_features, in_features).
        self.linear = Linear(
            in_features, math.prod(out_features, start=num_classes), bias=bias, device=device, dtype=dtype
        )
        self.options = options

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input,
            self.linear.weight.reshape(*shape, self.linear.in_features),
            target,
            linear_bias=None if bias is None else bias.reshape(shape),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes},"
            f" out_features={self.out_features}, bias={self.linear.bias is not None},"
            f" reduction={self.reduction}, ignore_index={self.ignore_index},"
            f" label_smoothing={self.label_smoothing}, options={self.options}"
        )


# ---- more activations -----------------------------------------------------------------


class SELU(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.selu(input, inplace)


class CELU(_SlopedActivation):
    _coefficient = "alpha"

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha, inplace)

    def _activate(self, input: ferrograd.Tensor, coefficient: float, inplace: bool) -> ferrograd.Tensor:
        return F.celu(input, coefficient, inplace)


class Mish(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.mish(input, inplace)


class Hardswish(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.hardswish(input, inplace)

    def extra_repr(self) -> str:  # PyTorch's repr leaves the flag out
        return ""


class Hardsigmoid(_InplaceActivation):
    def _activate(self, input: ferrograd.Tensor, inplace: bool) -> ferrograd.Tensor:
        return F.hardsigmoid(input, inplace)

    def extra_repr(self) -> str:
        return ""


class Softsign(Module):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.tanhshrink(input)


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learned ``weight`` of ``num_parameters`` slopes
    (1, or one per channel), each starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ferrograd.empty((num_parameters,), dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(Softmax):
    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# ---- distances ------------------------------------------------------------------------


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: ferrograd.Tensor, x2: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: ferrograd.Tensor, x2: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# ---- rearranging and padding ------------------------------------------------------------


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size`` (a tuple or list of ints, one may be -1)."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}"
            )
        for pos, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type {type(size).__name__} at pos {pos}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F._unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _padding_tuple(padding: int | Iterable[int], n: int) -> tuple[int, ...]:
    """An int repeated ``n`` times, or the given sequence as a tuple."""
    return (padding,) * n if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    """Padding by ``F.pad`` with ``mode``, ``padding`` given as one int for every side or as
    (left, right, top, bottom, front, back) amounts."""

    _mode = "constant"
    _sides = 2
    _dims: tuple[int, int] = (2, 3)

    def __init__(self, padding: int | Iterable[int]) -> None:
        super().__init__()
        self.padding = _padding_tuple(padding, self._sides)

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        pass

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Iterable[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _sides = 2


class ConstantPad2d(_ConstantPadNd):
    _sides = 4


class ConstantPad3d(_ConstantPadNd):
    _sides = 6


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | Iterable[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    _sides = 2


class ZeroPad2d(_ZeroPadNd):
    _sides = 4


class ZeroPad3d(_ZeroPadNd):
    _sides = 6


class ReflectionPad1d(_PadNd):
    _mode, _sides = "reflect", 2


class ReflectionPad2d(_PadNd):
    _mode, _sides = "reflect", 4


class ReflectionPad3d(_PadNd):
    _mode, _sides = "reflect", 6


class ReplicationPad1d(_PadNd):
    _mode, _sides = "replicate", 2


class ReplicationPad2d(_PadNd):
    _mode, _sides = "replicate", 4


class ReplicationPad3d(_PadNd):
    _mode, _sides = "replicate", 6


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        low = self._sides // 2 + 1
        if input.dim() not in (low, low + 1):
            raise ValueError(f"expected {low}D or {low + 1}D input (got {input.dim()}D input)")


class CircularPad1d(_CircularPadNd):
    _sides = 2


class CircularPad2d(_CircularPadNd):
    _sides = 4


class CircularPad3d(_CircularPadNd):
    _sides = 6


class Fold(Module):
    def __init__(
        self,
        output_size: int | tuple[int, int],
        kernel_size: int | tuple[int, int],
        dilation: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        stride: int | tuple[int, int] = 1,
    ) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        dilation: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        stride: int | tuple[int, int] = 1,
    ) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


# ---- parameter containers ----------------------------------------------------------------


def _describe_entry(key: object, value: Any, type_name: Callable[[ferrograd.Tensor], str]) -> str:
    if isinstance(value, ferrograd.Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(s) for s in value.shape)
        return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters registered as ``"0"``, ``"1"``, ...; tensors added to it become
    Parameters."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx: int) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(self[i] for i in range(*idx.indices(len(self))))
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        if isinstance(param, ferrograd.Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, self._key(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters: Iterable[Any]):
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, ferrograd.Tensor):
            raise TypeError(
                f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe_entry(k, p, lambda t: str(t.dtype)) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters registered under their (string) keys; tensors added to it
    become Parameters."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key: object) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._attr(key)
        self._keys[key] = None
        if isinstance(value, ferrograd.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(list(self._keys)))
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Adds ``parameters``: a ParameterDict or OrderedDict in its order, another mapping
        sorted by key, or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, but got "
                + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(
                        f"ParameterDict update sequence element #{j} should be Iterable; is"
                        + type(pair).__name__
                    )
                pair = list(pair)
                if len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is required"
                    )
                pairs.append((pair[0], pair[1]))
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_describe_entry(k, p, lambda t: t.type()) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict):
        self.update(other)
        return self


# ---- more normalization -----------------------------------------------------------------


class RMSNorm(Module):
    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, shape, elementwise_affine, False, dtype)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _InstanceNorm(_BatchNorm):
    """Instance normalization: batch norm's parameters and buffers, each sample normalized on its own."""

    _no_batch_dim = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _normalize(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: ferrograd.Tensor) -> ferrograd.Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), "
                    f"but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence this warning "
                "by not passing in num_features, which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4

    def _check_input_dim(self, input: ferrograd.Tensor) -> None:
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


# ---- lazy modules ---------------------------------------------------------------------------


class LazyModuleMixin:
    """Modules whose parameters are ``UninitializedParameter``/``UninitializedBuffer`` until the
    first forward, where ``initialize_parameters(*args, **kwargs)`` gives them their shapes; the
    module then becomes ``cls_to_become`` (when set). Loading a ``state_dict`` into a lazy module
    materializes the placeholders with the saved shapes first.

    A materialized placeholder is replaced by its tensor in the module's parameters or buffers
    (``materialize`` cannot reshape a ferrograd tensor in place, as PyTorch's does)."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def __getattr__(self, name: str) -> Any:
        value = super().__getattr__(name)  # type: ignore[misc]
        if is_lazy(value) and "_materialized" in value.__dict__:
            self._adopt_materialized()
            return super().__getattr__(name)  # type: ignore[misc]
        return value

    def _adopt_materialized(self) -> None:
        """Put the tensors of materialized placeholders in their place."""
        for store in (self._parameters, self._buffers):  # type: ignore[attr-defined]
            for name, value in store.items():
                if is_lazy(value) and "_materialized" in value.__dict__:
                    store[name] = value._materialized

    def _lazy_entries(self) -> Iterator[tuple[str, Any]]:
        self._adopt_materialized()
        return itertools.chain(self._parameters.items(), self._buffers.items())  # type: ignore[attr-defined]

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """As Module's, except that placeholders are saved themselves (never detached)."""
        super()._save_to_state_dict(destination, prefix, keep_vars)  # type: ignore[misc]
        for name, value in self._lazy_entries():
            if is_lazy(value) and prefix + name in destination:
                destination[prefix + name] = value

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, *args: Any) -> None:
        for name, value in list(self._lazy_entries()):
            saved = state_dict.get(prefix + name)
            if is_lazy(value) and saved is not None and not is_lazy(saved):
                value.materialize(saved.shape)
        self._adopt_materialized()
        super()._load_from_state_dict(state_dict, prefix, *args)  # type: ignore[misc]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(value) for _, value in self._lazy_entries())

    def _infer_parameters(
        self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None
    ) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore[attr-defined]
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: ferrograd.Tensor) -> None:  # type: ignore[override]
        if self.has_uninitialized_params():
            with ferrograd.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # parameters loaded from a state_dict
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to in_features "
                    f"from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """The lazy convolutions: ``in_channels`` is the channel dimension of the first input."""

    def _lazy_setup(self, out_channels: int, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: ferrograd.Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with ferrograd.no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: ferrograd.Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConvNd(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, dtype=dtype
        )
        self._lazy_setup(out_channels, bias, dtype)


class _LazyConvTransposeNd(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            dtype=dtype,
        )
        self._lazy_setup(out_channels, bias, dtype)


class LazyConv1d(_LazyConvNd, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvNd, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin):
    """The lazy batch and instance norms: ``num_features`` is dimension 1 of the first input."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = ferrograd.tensor(0, dtype=ferrograd.long)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: ferrograd.Tensor) -> None:  # type: ignore[override]
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        shape = (self.num_features,)
        with ferrograd.no_grad():
            if self.affine:
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize(shape)
            if self.track_running_stats:
                self.running_mean.materialize(shape)
                self.running_var.materialize(shape)
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d


# ---- more losses --------------------------------------------------------------------------


class _MarginLoss(_Loss):
    """A loss with a ``margin`` before the legacy reduction arguments."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    def forward(
        self, input1: ferrograd.Tensor, input2: ferrograd.Tensor, target: ferrograd.Tensor
    ) -> ferrograd.Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    def forward(
        self, input1: ferrograd.Tensor, input2: ferrograd.Tensor, target: ferrograd.Tensor
    ) -> ferrograd.Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: ferrograd.Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead"
            )
        self.p, self.margin = p, margin

    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight, reduction=self.reduction
        )


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(
        self,
        *,
        distance_function: Callable[[ferrograd.Tensor, ferrograd.Tensor], ferrograd.Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(
        self, anchor: ferrograd.Tensor, positive: ferrograd.Tensor, negative: ferrograd.Tensor
    ) -> ferrograd.Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginLoss(_Loss):
    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(
        self, anchor: ferrograd.Tensor, positive: ferrograd.Tensor, negative: ferrograd.Tensor
    ) -> ferrograd.Tensor:
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class PoissonNLLLoss(_Loss):
    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: ferrograd.Tensor, target: ferrograd.Tensor) -> ferrograd.Tensor:
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(
        self, input: ferrograd.Tensor, target: ferrograd.Tensor, var: ferrograd.Tensor | float
    ) -> ferrograd.Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (``F.ctc_loss``)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(
        self,
        log_probs: ferrograd.Tensor,
        targets: ferrograd.Tensor,
        input_lengths: Any,
        target_lengths: Any,
    ) -> ferrograd.Tensor:
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction, self.zero_infinity
        )
