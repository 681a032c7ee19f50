"""torch.optim subset."""

from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Optimizer"]
