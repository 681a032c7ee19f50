"""Grad-mode context managers; each thread has its own mode."""

from __future__ import annotations

import functools
import inspect

from .. import _C


def _wrap_generator(make_mode, func):
    """Runs each step of the generators ``func`` makes under a new mode from ``make_mode``: the
    mode holds while the body runs and the caller's mode is back while the generator is
    suspended, as in PyTorch."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    # The body's cleanup on close runs in the mode too.
                    with make_mode():
                        gen.close()
                    raise
                except BaseException as exc:
                    with make_mode():
                        response = gen.throw(exc)
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _GradMode:
    """Base: a context manager that is also a decorator."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def _args(self) -> tuple:
        return ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled())
        return self

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self._prev)

    def _enabled(self) -> bool:
        raise NotImplementedError

    def clone(self):
        return self.__class__(*self._args())


class _ParenthesesOptional(_GradMode):
    """A mode that decorates a function with or without parentheses: ``@no_grad()`` and
    ``@no_grad`` alike, as in PyTorch."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None) -> None:
        pass


class no_grad(_ParenthesesOptional):
    """Disables gradient recording: ops record no graph and save nothing."""

    def _enabled(self) -> bool:
        return False


class enable_grad(_ParenthesesOptional):
    """Enables gradient recording inside a ``no_grad`` block."""

    def _enabled(self) -> bool:
        return True


class set_grad_enabled(_GradMode):
    """Sets grad mode on or off; works as a function, context manager or decorator. As in
    PyTorch, the mode is set when the object is made and again on entering it (an object made
    earlier sets its mode when entered), and leaving restores the mode from before it was made."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}"
            )
        self.mode = mode
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(mode)

    def _args(self) -> tuple:
        return (self.mode,)

    def __enter__(self) -> None:
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self.prev)

    def __call__(self, func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"


class inference_mode(_GradMode):
    """Like ``no_grad``, for code that will never need gradients. ``inference_mode(False)`` turns
    inference mode off and grad mode on, whatever the mode outside, as in PyTorch; used bare as a
    decorator (``@inference_mode``) it is ``inference_mode(True)``."""

    def __new__(cls, mode=True):
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)

    def _args(self) -> tuple:
        return (self._mode,)

    def _enabled(self) -> bool:
        return not self._mode

    def __enter__(self):
        self._prev_inference = _C.is_inference_mode_enabled()
        _C._set_inference_mode(self._mode)
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        _C._set_inference_mode(self._prev_inference)
        super().__exit__(*exc)
