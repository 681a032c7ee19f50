"""``ferrograd.distributed``: ferrograd runs in one process and has no process groups, so
``is_available()`` is ``False``; the queries that need a group raise PyTorch's error, which is
what scripts that check ``is_available()`` or ``is_initialized()`` first never reach."""

from __future__ import annotations

from typing import Any

__all__ = ["get_rank", "get_world_size", "init_process_group", "is_available", "is_initialized"]

_NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available() -> bool:
    """Always ``False``: there is no distributed backend."""
    return False


def is_initialized() -> bool:
    """Always ``False``: no process group is ever made."""
    return False


def get_rank(group: Any = None) -> int:
    raise ValueError(_NO_GROUP)


def get_world_size(group: Any = None) -> int:
    raise ValueError(_NO_GROUP)


def init_process_group(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError(
        "ferrograd runs in one process and has no distributed backend; train in one process, or "
        "give DistributedSampler its num_replicas and rank"
    )
