"""Anomaly detection: find the forward operation whose backward failed.

While enabled, every node records the Python traceback of the forward call
that created it. When a node's backward raises, or returns NaN (with
``check_nan``), that traceback is shown as a warning and the error names
the node, e.g. ``Function 'DivBackward0' returned nan values in its 0th
output.``
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]

_ENABLED_WARNING = "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging."


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn(_ENABLED_WARNING, stacklevel=2)

    def __enter__(self) -> None:
        _C._set_detect_anomaly(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        _C._set_detect_anomaly(self.prev, self.prev_check_nan)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off; also usable as a context manager
    that restores the previous setting."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_detect_anomaly(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        _C._set_detect_anomaly(self.prev, self.prev_check_nan)
