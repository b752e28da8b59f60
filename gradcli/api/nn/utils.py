"""``torch.nn.utils``: clip_grad_norm_ and clip_grad_value_ (PyTorch 2.13's torch/nn/utils/clip_grad.py)."""

from __future__ import annotations

import numpy as np

from ...engine import autograd
from ...ops import REGISTRY as _OPS
from ...engine.tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total ``norm_type`` norm (the norm of the per-gradient
    norms) is at most ``max_norm``: each is multiplied by ``min(max_norm / (total + 1e-6), 1)``. Returns the
    total norm before clipping (a 0-d tensor).

    Raises:
        RuntimeError: for a non-finite total norm with ``error_if_nonfinite`` (PyTorch's message).
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    norm = _OPS["norm"]
    with autograd.no_grad():
        if not grads:
            return Tensor(np.array(0.0, dtype=np.float32))
        total = norm(_OPS["stack"]([norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and not np.isfinite(total.data).all():
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                               "by the non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = _OPS["clamp"](float(max_norm) / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with autograd.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


NAMES = ("clip_grad_norm_", "clip_grad_value_")
