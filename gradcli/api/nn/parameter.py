"""``torch.nn.Parameter``: a tensor that a module registers as one of its parameters.

gradcli's parameters are plain :class:`~gradcli.engine.tensor.Tensor`\\ s marked as parameters (the op table dispatches on
``type(t) is Tensor``, so there is no subclass): ``Parameter(data)`` returns a new leaf sharing ``data``'s memory
(PyTorch's ``Parameter`` shares it too), requiring grad unless ``requires_grad=False``, which prints as PyTorch's
``Parameter containing:`` and for which ``isinstance(p, Parameter)`` holds.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, is_parameter, mark_parameter
from .naming import TorchClass


class _ParameterMeta(TorchClass):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and is_parameter(obj)


class Parameter(metaclass=_ParameterMeta):
    """``torch.nn.Parameter(data=None, requires_grad=True)``: a marked leaf tensor sharing ``data``'s memory
    (an empty float tensor of the default dtype without ``data``).

    Raises:
        TypeError: for data that is not a Tensor (PyTorch's message).
        RuntimeError: ``requires_grad=True`` on an integer tensor (PyTorch's message).
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = Tensor(np.empty((0,), dtype=dtypes.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        if requires_grad and data.data.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t = Tensor(data.data, bool(requires_grad))
        return mark_parameter(t)


def parameter_of(t: Tensor) -> Tensor:
    """A parameter holding ``t``'s values and flags (used by ``Module.double()``)."""
    return mark_parameter(Tensor(t.data, t.requires_grad))
