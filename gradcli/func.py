"""``torch.func``: composable function transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
vmap), with PyTorch 2.13's signatures, result nesting and messages (work in progress, issue 14)."""

from __future__ import annotations

__all__: list[str] = []
