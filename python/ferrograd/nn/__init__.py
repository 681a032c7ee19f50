"""torch.nn subset: modules, Parameter, ``functional`` and ``init``."""

from . import attention, functional, grad, init, modules, parallel, rnn, transformer, utils
from .modules import *  # noqa: F403 - the modules are nn's public names
from .parallel import DataParallel
from .parameter import Parameter
from .rnn import *  # noqa: F403
from .transformer import *  # noqa: F403

# As in PyTorch, `nn.functional.grad` is `nn.grad`.
functional.grad = grad

__all__ = [
    *modules.__all__,
    *rnn.__all__,
    *transformer.__all__,
    "DataParallel",
    "Parameter",
    "functional",
    "grad",
    "init",
]
