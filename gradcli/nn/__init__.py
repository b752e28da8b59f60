"""torch.nn for gradcli: modules (``Module`` and the built-in layers), ``Parameter`` and ``init``, computing
as PyTorch 2.13 does (library API layer; the language exposes it as ``torch.nn``)."""

from . import init, utils  # noqa: F401
from .layers import CLASSES  # noqa: F401
from .layers import *  # noqa: F401,F403
from .module import Module, RemovableHandle, core_of  # noqa: F401
from .parameter import Parameter  # noqa: F401
