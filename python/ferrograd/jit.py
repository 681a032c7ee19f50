"""``ferrograd.jit``: ferrograd runs eagerly, so scripting and tracing return what they are given,
which then runs exactly as it did, and the checks model code makes (``is_scripting()``) say no."""

from __future__ import annotations

from typing import Any, Final, TypeVar

__all__ = ["Final", "annotate", "export", "ignore", "is_scripting", "is_tracing", "script", "trace", "unused"]

T = TypeVar("T")


def script(obj: T, *args: Any, **kwargs: Any) -> T:
    """``obj`` (a function or module) unchanged."""
    return obj


def trace(func: T, example_inputs: Any = None, *args: Any, **kwargs: Any) -> T:
    """``func`` (a function or module) unchanged; ``example_inputs`` are not run."""
    return func


def is_scripting() -> bool:
    """Always ``False``: nothing is ever scripted."""
    return False


def is_tracing() -> bool:
    """Always ``False``: nothing is ever traced."""
    return False


def annotate(the_type: Any, the_value: T) -> T:
    """``the_value``: a type hint for the script compiler, of no effect in eager code."""
    return the_value


def _marker(fn: Any = None, **_: Any) -> Any:
    """A decorator, usable bare or called, that returns the function it decorates."""
    return fn if callable(fn) else (lambda f: f)


ignore = unused = export = _marker
