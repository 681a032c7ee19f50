"""torch.optim.Optimizer base class.

Relies on
  Tensor: hashable by identity (``__hash__`` = id-based, as torch; used as key
    of ``Optimizer.state``), is_leaf, grad (get and set, None allowed), grad_fn,
    detach_() (only for a grad that has a grad_fn), requires_grad_(bool), zero_(),
    is_floating_point(), dtype, to(dtype).
  top level: ferrograd.Tensor.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import ferrograd

__all__ = ["Optimizer", "required"]


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

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
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
        self.defaults.setdefault("differentiable", False)

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
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, ferrograd.Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
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
