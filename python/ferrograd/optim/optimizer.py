"""torch.optim.Optimizer base class.

Relies on
  Tensor: hashable by identity (``__hash__`` = id-based, as torch; used as key
    of ``Optimizer.state``), is_leaf, grad (get and set, None allowed), grad_fn,
    detach_() (only for a grad that has a grad_fn), requires_grad_(bool), zero_(),
    is_floating_point(), dtype, to(dtype).
  top level: ferrograd.Tensor.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import ferrograd

from ..nn.modules import RemovableHandle
from ..nn.modules import _add_hook as _register

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook", "required"]

# Step hooks every optimizer runs: the pre-hooks before its own, the post-hooks after.
_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's ``step`` (see
    ``Optimizer.register_step_pre_hook``)."""
    return _register(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step``."""
    return _register(_global_optimizer_post_hooks, hook)


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` running the global and the optimizer's step hooks around it; a ``step`` that
    calls another hooked ``step`` (a subclass's calling its base's) runs them once."""

    @functools.wraps(step)
    def hooked(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_running_step_hooks"):
            return step(self, *args, **kwargs)
        self._running_step_hooks = True
        try:
            call_args = (self, *args)
            for hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                result = hook(self, call_args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                        )
                    call_args, kwargs = result
            out = step(*call_args, **kwargs)
            for hook in chain(
                self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
            ):
                hook(self, call_args, kwargs)
            return out
        finally:
            self._running_step_hooks = False

    hooked._with_step_hooks = True  # type: ignore[attr-defined]
    return hooked


class _RequiredParameter:
    """Singleton marking an optimizer hyper-parameter without default."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: object) -> str:
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _check_implementation_flags(fused: bool | None, foreach: bool | None, differentiable: bool) -> None:
    """The combinations of torch's implementation switches that torch refuses."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer:
    """Base class: holds ``param_groups`` (dicts with "params" and hyper-parameters) and per-parameter ``state``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_with_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self._init_hooks()
        self.defaults = defaults
        if isinstance(params, ferrograd.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state: defaultdict[ferrograd.Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_hooks()
        self.defaults.setdefault("differentiable", False)

    def _init_hooks(self) -> None:
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before each ``step`` (``args`` starts with the
        optimizer); it may return ``(new_args, new_kwargs)`` for ``step`` to take instead."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict`` gathers the state."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs on what ``state_dict`` returns; a dict it
        returns is returned instead."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs before ``load_state_dict``; a dict it returns is
        loaded instead."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, ferrograd.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors "
                "in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]  # from named_parameters()
        param_group["params"] = params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names
        for param in params:
            if not isinstance(param, ferrograd.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = {id(p) for p in params}
        if len(ids) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                with_names = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {with_names} to the optimizer"
                )
            if not ids.isdisjoint(id(p) for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter group by the subclass's ``_update_group``, after
        ``closure`` has recomputed the loss."""
        update = getattr(self, "_update_group", None)
        if update is None:
            raise NotImplementedError
        return self._step_groups(closure, update)

    step = _with_step_hooks(step)

    def _step_groups(self, closure: Any, update: Any) -> Any:
        """``step``'s frame: the closure's loss with grad enabled, then ``update(group, params)``
        for each group's parameters that have a gradient, without recording unless
        ``differentiable``."""
        loss = None
        if closure is not None:
            with ferrograd.enable_grad():
                loss = closure()
        differentiable = self.defaults.get("differentiable", False)  # Adafactor has no such option
        grad_mode = ferrograd.enable_grad() if differentiable else ferrograd.no_grad()
        with grad_mode:
            for group in self.param_groups:
                update(group, [p for p in group["params"] if p.grad is not None])
        return loss

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: state}, "param_groups": [group with "params" as indices]}``."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, ferrograd.Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param: ferrograd.Tensor, value: Any, key: Any = None) -> Any:
            """Convert saved state to the parameter's floating dtype (not the "step" count)."""
            if isinstance(value, ferrograd.Tensor):
                return value.to(param.dtype) if key != "step" and param.is_floating_point() else value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)
