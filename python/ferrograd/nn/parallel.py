"""``nn.parallel``: ferrograd computes on the CPU in one process, so ``DataParallel`` has no
devices to spread a batch over and runs its module on the whole batch, as PyTorch's does without
CUDA; ``DistributedDataParallel`` needs a process group, which ferrograd never has."""

from __future__ import annotations

from typing import Any

from .. import distributed
from .modules import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Wraps ``module`` (as ``self.module``, so its state-dict keys start with ``module.``) and
    calls it on the whole input: there are no accelerators to scatter the batch to."""

    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Needs a process group: raises PyTorch's error, as ferrograd runs in one process."""

    def __init__(self, module: Module, *args: Any, process_group: Any = None, **kwargs: Any) -> None:
        super().__init__()
        distributed.get_world_size(process_group)  # raises: no process group is ever made
