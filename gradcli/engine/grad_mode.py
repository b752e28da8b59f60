"""Grad modes: whether operations are recorded (torch.autograd.grad_mode).

:func:`is_grad_enabled`, the context managers (and decorators) :class:`no_grad`, :class:`enable_grad` and
:class:`set_grad_enabled`, and :class:`inference_mode` with :func:`is_inference_mode_enabled` and
``Tensor.is_inference``. The grad mode belongs to the active run context (:mod:`gradcli.engine.context`), which
every op reads; these managers set it and restore the previous mode at the end of their block.
"""

from __future__ import annotations

import functools

from .context import state as _state
from .tensor import INFERENCE_META, Tensor


# The grad mode is the active run context's (gradcli.engine.context.state.grad_enabled, read by every op).
def is_grad_enabled() -> bool:
    """Whether operations are being recorded in the active run context (torch.is_grad_enabled)."""
    return _state.grad_enabled


class _GradModeContext:
    """Base of no_grad/enable_grad: a context manager that also decorates functions. It sets the grad mode of
    the active run context and restores the previous mode at the end of the block."""

    _target = True

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = self._target
        return None

    def __exit__(self, *exc) -> bool:
        _state.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Context manager (and decorator) that disables recording: results have requires_grad False.
    Matches torch.no_grad."""

    _target = False


class enable_grad(_GradModeContext):
    """Context manager (and decorator) that enables recording inside a no_grad block.
    Matches torch.enable_grad."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """``torch.set_grad_enabled(mode)``: turns recording on or off in the active run context at once; used as
    a context manager, the previous mode comes back at the end of the block; as a decorator, the function runs
    in that mode. Matches torch.set_grad_enabled."""

    def __init__(self, mode: bool):
        self._prev = _state.grad_enabled
        self._target = bool(mode)
        _state.grad_enabled = self._target

    def __enter__(self):
        return None

    def __call__(self, fn):
        _state.grad_enabled = self._prev  # as a decorator it changes nothing until the function runs
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(target):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.set_grad_enabled object at {id(self):#x}>"


def _is_inference(self) -> bool:
    """Whether the tensor was made inside ``torch.inference_mode()`` (Tensor.is_inference)."""
    m = self._meta
    return m is not None and m.inference


Tensor.is_inference = _is_inference


class inference_mode(_GradModeContext):
    """``torch.inference_mode(mode=True)``: recording off in the block (gradcli has no inference tensors:
    results are ordinary tensors that do not require grad). Matches torch.inference_mode's grad mode."""

    def __init__(self, mode: bool = True):
        self._target = not mode
        self._mode = bool(mode)

    def __enter__(self):
        # tensors made while a block is open are inference tensors: Tensor.__init__ copies the context's mark
        n = _state.inference = _state.inference + self._mode
        _state.new_tensor_meta = INFERENCE_META if n else None
        return super().__enter__()

    def __exit__(self, *exc) -> bool:
        n = _state.inference = _state.inference - self._mode
        _state.new_tensor_meta = INFERENCE_META if n else None
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """``torch.is_inference_mode_enabled()``: inside an ``inference_mode`` block."""
    return _state.inference > 0

