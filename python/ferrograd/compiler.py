"""``ferrograd.compiler``: ferrograd runs eagerly and compiles nothing, so ``compile`` returns
what it is given, the decorators that steer a compiler return the function they decorate, and
the checks that model code makes (``is_compiling()``) say no."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, TypeVar

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "nested_compile_region",
    "reset",
    "set_stance",
    "substitute_in_graph",
]

F = TypeVar("F", bound=Callable[..., Any])

_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile")


def compile(model: Any = None, **options: Any) -> Any:  # noqa: A001 - PyTorch's name
    """``model`` unchanged; without it, a decorator that returns what it decorates."""
    from . import compile as eager_compile

    return eager_compile(model, **options)


def _returns_what_it_decorates(fn: Any = None, **_: Any) -> Any:
    """A decorator, usable bare or called with options, that returns the function it decorates."""
    return fn if callable(fn) else (lambda f: f)


def disable(fn: Any = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """``fn`` unchanged: nothing is compiled to be kept out of."""
    return _returns_what_it_decorates(fn)


nested_compile_region = _returns_what_it_decorates


def allow_in_graph(fn: F) -> F:
    """``fn`` unchanged."""
    return fn


def assume_constant_result(fn: F) -> F:
    """``fn`` unchanged."""
    return fn


def substitute_in_graph(original_fn: Callable[..., Any], **_: Any) -> Callable[[F], F]:
    """A decorator that returns what it decorates; ``original_fn`` keeps running as it is."""
    return lambda fn: fn


def is_compiling() -> bool:
    """Always ``False``: code runs eagerly."""
    return False


def is_dynamo_compiling() -> bool:
    """Always ``False``: code runs eagerly."""
    return False


def is_exporting() -> bool:
    """Always ``False``: nothing is exported."""
    return False


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """No compiler backends: ferrograd runs every op as it is called."""
    return []


def reset() -> None:
    """Nothing to reset: no compiled code is cached."""


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: there are no CUDA graphs."""


def set_stance(
    stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend: Any = None
) -> Any:
    """Checks ``stance`` and changes nothing (code always runs eagerly); usable as a context
    manager or a decorator."""
    if stance not in _STANCES:
        raise ValueError(f"Invalid stance {stance!r}; expected one of {', '.join(map(repr, _STANCES))}")
    return _Stance()


class _Stance(contextlib.ContextDecorator):
    """What ``set_stance`` returns: a context manager and decorator of no effect."""

    def __enter__(self) -> _Stance:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None
