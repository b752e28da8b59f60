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
    order = _memory_order(input.data)
    shape = tuple(input.data.shape[d] for d in order)
    noise = context.generator().bernoulli(np.full(shape, 1 - p), input.data.dtype)
    noise = (noise / input.data.dtype.type(1 - p)).astype(input.data.dtype).transpose(np.argsort(order))
    return mul(input, Tensor(noise))


def _memory_order(a: np.ndarray) -> list:
    """The axes of ``a`` from outermost to innermost in memory (by decreasing stride; size-1 axes, which
    change nothing, first): PyTorch draws the mask into ``empty_like(input)``, which lays its axes out in the
    input's memory order (a transposed input gets a transposed mask), so the draws follow that order."""
    if any(s <= 0 for s, n in zip(a.strides, a.shape) if n > 1):  # broadcast (expanded) or flipped: in order
        return list(range(a.ndim))
    return sorted(range(a.ndim), key=lambda d: -a.strides[d] if a.shape[d] > 1 else -np.inf)
