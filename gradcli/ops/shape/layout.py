"""Memory formats and layouts of new tensors: ``torch.contiguous_format``, ``torch.channels_last``,
``torch.channels_last_3d``, ``torch.preserve_format`` and the allocation of a tensor whose dimensions lie in
memory in a given order (``torch.empty(memory_format=...)``, ``torch.empty_permuted``). Needs only numpy, so that
the creation functions can use it without importing the op table's shape modules.
"""

from __future__ import annotations

import numpy as np




class MemoryFormat:
    """``torch.contiguous_format``, ``torch.channels_last``, ``torch.channels_last_3d``, ``torch.preserve_format``:
    PyTorch's ``torch.memory_format`` values, printed as PyTorch prints them."""

    program_attributes = ()
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


CONTIGUOUS_FORMAT = MemoryFormat("contiguous_format")
CHANNELS_LAST = MemoryFormat("channels_last")
CHANNELS_LAST_3D = MemoryFormat("channels_last_3d")
PRESERVE_FORMAT = MemoryFormat("preserve_format")

#: The memory formats by their names under ``torch`` (the language's namespace adds them).
MEMORY_FORMATS = {f.name: f for f in (CONTIGUOUS_FORMAT, CHANNELS_LAST, CHANNELS_LAST_3D, PRESERVE_FORMAT)}


def format_order(fmt, ndim: int) -> tuple | None:
    """The physical order of the dimensions (outermost first) that the memory format ``fmt`` gives a new tensor
    of ``ndim`` dimensions, or None for row-major.

    Raises:
        RuntimeError: for channels_last on a tensor that is not 4-d (5-d for channels_last_3d), with PyTorch's
            message.
    """
    if fmt is None or fmt is CONTIGUOUS_FORMAT or fmt is PRESERVE_FORMAT:
        return None
    if fmt is CHANNELS_LAST:
        if ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if fmt is CHANNELS_LAST_3D:
        if ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    raise TypeError(f"memory_format must be a torch.memory_format, not {type(fmt).__name__}")


def allocate(shape: tuple, dtype, order=None) -> np.ndarray:
    """Zeros of ``shape`` laid out in the physical ``order`` of the dimensions (outermost first; None:
    row-major), as ``torch.empty_permuted`` and ``torch.empty(memory_format=...)`` lay out theirs."""
    if order is None:
        return np.zeros(shape, dtype=dtype)
    physical = np.zeros(tuple(shape[d] for d in order), dtype=dtype)
    return np.transpose(physical, np.argsort(order))
