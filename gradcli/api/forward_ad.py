"""``torch.autograd.forward_ad``: forward-mode automatic differentiation with dual tensors.

Inside ``with dual_level():``, :func:`make_dual` pairs a tensor (the primal) with a tangent of its shape; every
op applied to a dual tensor computes its output's tangent by its forward-mode rule (the Jacobian-vector product,
declared with ``@<op>.defjvp`` beside the VJP, after the ``result:`` formulas of PyTorch's
tools/autograd/derivatives.yaml), and :func:`unpack_dual` gives back ``(primal, tangent)``. Leaving the level
forgets every tangent made in it. Tangents are computed with recorded ops, so they are differentiable in turn
(reverse over forward gives Hessian-vector products); and a gradient taken with ``create_graph=True`` inside the
level has a tangent (forward over reverse: the nodes keep their saved values' tangents,
``NodeExtra.fw_saved``). A backward without ``create_graph`` computes on plain arrays: its
gradients have no tangent.

Functions, results and messages follow torch/autograd/forward_ad.py (PyTorch 2.13). As in PyTorch, levels do not
nest, and the level is always 0. The level lives in the run context (``gradcli.engine.context.state.fw_level``: a
number unique in the process, so that tangents of an exited level are never seen again).
"""

from __future__ import annotations

import itertools
from collections import namedtuple

from ..engine.context import state as _state
from ..ops import REGISTRY
from ..ops.core.declare import op
from ..engine.tensor import Tensor, fw_tangent

#: The internal ids of levels (the public level is always 0).
_IDS = itertools.count(1)

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """What :func:`unpack_dual` returns: ``primal`` (a Tensor) and ``tangent`` (a Tensor or
None), also as ``[0]`` and ``[1]``; printed as PyTorch's ``UnpackedDualTensor(primal=..., tangent=...)``."""


def enter_dual_level() -> int:
    """Enter a forward-AD level (what ``with dual_level():`` does); returns its index, 0.

    Raises:
        RuntimeError: "Nested forward mode AD is not supported at the moment" inside a level already.
    """
    if _state.fw_level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.fw_level = next(_IDS)
    return 0


def exit_dual_level(*, level=None) -> None:
    """Leave the forward-AD level: the tangents made in it are forgotten (unpack_dual gives None).

    Raises:
        RuntimeError: PyTorch's "Dual level must be a positive number." outside a level, "Invalid level given to
            _exit_dual_level" for a level other than 0.
    """
    if _state.fw_level is None:
        raise RuntimeError("Dual level must be a positive number.")
    if level not in (None, 0):
        raise RuntimeError("Invalid level given to _exit_dual_level")
    _state.fw_level = None


class dual_level:
    """Context manager of a forward-AD level: ``with dual_level():`` enters one (``as`` gives its index, 0) and
    leaves it at the end of the block, exceptions included. Dual tensors made in it lose their tangents then.

    Raises:
        RuntimeError: on entering inside another level (PyTorch's "Nested forward mode AD is not supported at the
            moment").
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> bool:
        exit_dual_level()
        return False

    def __repr__(self) -> str:
        return "<torch.autograd.forward_ad.dual_level object>"


def _check_level(level, fn: str) -> None:
    if _state.fw_level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.") if fn == "_make_dual" else RuntimeError(
            f"Invalid level given to {fn}")
    if level not in (None, 0):
        raise RuntimeError(f"Invalid level given to {fn}")


def make_dual(tensor, tangent, *, level=None) -> Tensor:
    """A dual tensor: a view of ``tensor`` (ViewBackward0 when it requires grad, as PyTorch's) whose tangent is
    ``tangent`` at the current level.

    Args:
        tensor: the primal, a floating Tensor.
        tangent: a floating Tensor of the same shape (its dtype may differ, as PyTorch allows).
        level: None or 0 (the only level).

    Raises:
        RuntimeError: outside a level ("Trying to create a dual Tensor for forward AD but no level exists, make
            sure to enter_dual_level() first."), for another level ("Invalid level given to _make_dual"), for a
            ``tensor`` already dual at the level, and for a tangent of another shape (PyTorch's "Trying to set a
            forward gradient that has a different size than that of the original Tensor, this is not supported.
            Tensor is of size [2] while the given forward gradient is of size [3].").
        ValueError: a primal or tangent that is not floating ("Expected primal to be floating point or complex,
            but got: torch.int64").
        AttributeError: for a primal or tangent that is not a Tensor (PyTorch's text).
    """
    _check_level(level, "_make_dual")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute 'is_floating_point'")
        if t.data.dtype.kind != "f":
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}")
    if fw_tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           "level 0 is not supported.")
    if tangent.data.shape != tensor.data.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.data.shape)} while the "
                           f"given forward gradient is of size {list(tangent.data.shape)}.")
    level_id = _state.fw_level
    _state.fw_level = None  # the view is made without forward AD (the primal has no tangent)
    try:
        dual = REGISTRY["view"](tensor, tensor.shape) if tensor.requires_grad else Tensor(tensor.data)
    finally:
        _state.fw_level = level_id
    dual._fw = (level_id, tangent)
    return dual


@op("_unpack_dual_primal", grad_fn="Identity", note="d/dinput = 1 (an alias)")
def _identity(input):
    """The primal of :func:`unpack_dual`: an alias of its input (the same memory), without its tangent."""
    return input


@_identity.defvjp
def _(grad):
    return grad


_identity.defjvp_linear()


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """The primal and tangent of ``tensor`` at the current level, as ``UnpackedDualTensor(primal, tangent)``.

    ``primal`` is an alias of ``tensor`` without a tangent (grad_fn Identity where it requires grad, as
    PyTorch's); ``tangent`` is the tangent, or None for a tensor that is not dual, outside a level, or after the
    level was left (then ``primal`` is ``tensor`` itself); outside a level any ``tensor`` is given back as the
    primal, as PyTorch does.

    Raises:
        TypeError: inside a level, for a value that is not a Tensor ("_unpack_dual(): argument 'dual' (position 1) must be
            Tensor, not int").
        RuntimeError: for a dual tensor and a level other than 0 ("Invalid level given to _fw_primal").
    """
    if _state.fw_level is None and level is None:  # outside a level anything is returned as it is (PyTorch)
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}")
    tangent = fw_tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    if level not in (None, 0):
        raise RuntimeError("Invalid level given to _fw_primal")
    level_id = _state.fw_level
    _state.fw_level = None
    try:
        primal = _identity(tensor) if tensor.requires_grad else Tensor(tensor.data)
    finally:
        _state.fw_level = level_id
    return UnpackedDualTensor(primal, tangent)

