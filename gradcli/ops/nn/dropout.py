"""torch.nn.functional.dropout: each element zeroed with probability ``p`` and the others scaled by ``1 / (1 - p)``
in training, the mask drawn from the run's generator as PyTorch 2.13's CPU dropout draws it (MulBackward0).
"""

from __future__ import annotations

import numpy as np

from ...engine import context
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite
from ..elementwise.arithmetic import mul


# ---------------------------------------------------------------------------------------------- dropout
@composite("dropout", grad_fn="MulBackward0", note="d/dx = mask / (1 - p)")
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)`` in training (the mask
    drawn by bernoulli_ from the generator, as PyTorch's CPU dropout); the input itself otherwise. Matches
    torch.nn.functional.dropout (grad_fn MulBackward0).

    Raises:
        ValueError: for p outside [0, 1] (PyTorch's message).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    input = to_tensor(input)
    if not training or p == 0:
        return input

    if p == 1:
        return mul(input, Tensor(np.zeros_like(input.data)))
    noise = context.generator().bernoulli(np.full(input.data.shape, 1 - p), input.data.dtype)
    noise = (noise / input.data.dtype.type(1 - p)).astype(input.data.dtype)
    return mul(input, Tensor(noise))
