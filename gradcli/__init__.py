"""gradcli: a command-line gradient calculator, and the reverse-mode autograd engine behind it.

As a library it reads like PyTorch::

    import gradcli as G
    x = G.tensor([1., 2.], requires_grad=True)
    (x * x).sum().backward()
    print(x.grad)            # tensor([2., 4.])

``G.<op>`` for every op of the table under PyTorch's names (``G.relu``, ``G.matmul``, ...), the creation
functions, ``G.no_grad``/``G.enable_grad``, ``G.grad`` (torch.autograd.grad) and ``G.backward``.

The default dtype, the random generator (``G.manual_seed``), the limits (``gradcli.limits.configure``), grad
mode and anomaly mode belong to the active :class:`RunContext`; ``with G.RunContext(dtype="float64", seed=0):``
runs a block in a context of its own and restores the previous one after it.
"""

from . import dtypes
from .autograd import backward, enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .context import RunContext
from .dtypes import (bool_ as bool, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
                     set_default_dtype, uint8)
from .ops import REGISTRY as _REGISTRY
from .tensor import Size, Tensor

__version__ = "0.1.0"

float = float32
double = float64
half = float16
long = int64
int = int32
globals().update({k: v for k, v in _REGISTRY.items() if not k.startswith("_")})
