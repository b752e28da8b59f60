"""Hooks for saved tensors: ``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)`` and
``torch.autograd.graph.save_on_cpu()``.

As in PyTorch (torch/autograd/graph.py, "Hooks for saved tensors" in the autograd notes): inside the block,
every tensor a graph node saves for backward is given to ``pack_hook`` when the node is made, and the node keeps
what the hook returns instead of the tensor; whenever the saved tensor is needed (by backward, or by reading
``grad_fn._saved_self``), ``unpack_hook`` is called with that object and its result, which must be a Tensor, is
used. Blocks nest; the innermost one's hooks apply. The hooks of the block a node was made in stay with the
node.

gradcli's rules save what they name (:mod:`gradcli.saved_names`), which is PyTorch's set for most ops: where it
saves more (``mul`` saves both factors even when only one input requires grad), the pack hook is called for
those too.
"""

from __future__ import annotations

import numpy as np

from . import autograd
from .context import state as _state
from .ops._core import Op
from .saved_names import as_tensor
from .tensor import Tensor


class Packed:
    """What a node made under saved tensors hooks keeps in ``Node.saved``: the pack hook's result per slot and
    the unpack hook. The engine reads it like the tuple of arrays it replaces (``rule(grad, *saved)``,
    ``saved[slot]``): each read calls the unpack hook and gives the array of its Tensor, in the node's dtype.

    Attributes:
        node: the graph node.
        packed: per slot of the rule's saved values, what ``pack_hook`` returned (None for an absent input).
        unpack_hook: the hook called on a packed object when the value is needed.
    """

    __slots__ = ("node", "packed", "unpack_hook")

    def __init__(self, node, packed: tuple, unpack_hook):
        self.node = node
        self.packed = packed
        self.unpack_hook = unpack_hook

    def __len__(self) -> int:
        return len(self.packed)

    def __iter__(self):
        return iter([self[k] for k in range(len(self.packed))])

    def __getitem__(self, slot: int):
        t = self.unpack_tensor(slot)
        if t is None:
            return None
        d = t.data
        dtype = self.node.dtype
        return d if d.dtype == dtype else d.astype(dtype)

    def unpack_tensor(self, slot: int):
        """The unpack hook's Tensor for ``slot`` (None for a slot that held no value).

        Raises:
            TypeError: PyTorch's "Output of saved tensor unpack_hook expected to be a Tensor but got result of
                type X" when the hook returns something else.
        """
        p = self.packed[slot]
        if p is _ABSENT:
            return None
        t = self.unpack_hook(p)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t


#: A slot without a value (an optional input that was not given): never packed.
_ABSENT = object()


def pack(node):
    """Replace ``node.saved`` (a tuple of arrays) by a :class:`Packed` of the active hooks' pack results: the
    pack hook is called on each saved value as the Tensor PyTorch gives it (the input itself, or the output),
    with grad mode off as in PyTorch."""
    if not isinstance(node.op, Op) or not node.op.save_plan:  # a custom Function's node keeps its ctx
        return
    pack_hook, unpack_hook = _state.saved_hooks[-1]
    tensors = [None if d is None else as_tensor(node, slot, d) for slot, d in enumerate(node.saved)]
    mode = _state.grad_enabled
    _state.grad_enabled = False  # PyTorch calls the pack hook with grad mode off: what it computes records nothing
    try:
        packed = tuple(_ABSENT if t is None else pack_hook(t) for t in tensors)
    finally:
        _state.grad_enabled = mode
    node.saved = Packed(node, packed, unpack_hook)


class saved_tensors_hooks:
    """Context manager setting a pair of pack/unpack hooks for saved tensors. Matches
    torch.autograd.graph.saved_tensors_hooks.

    Args:
        pack_hook: called with each Tensor a node saves, when the node is made; its result (any object) is kept.
        unpack_hook: called with that result whenever the saved tensor is needed; must return a Tensor of the
            saved tensor's shape (its values are used, in the node's dtype).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _state.saved_hooks = _state.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        return None

    def __exit__(self, *exc) -> bool:
        _state.saved_hooks = _state.saved_hooks[:-1]
        return False


def _copy_to_cpu(t: Tensor):
    # save_on_cpu's pack: an independent copy of the values (gradcli's tensors are always on the CPU)
    return Tensor(np.array(t.data, copy=True))


def _identity(t):
    return t


class save_on_cpu(saved_tensors_hooks):
    """Context manager under which saved tensors are kept as copies on the CPU and given back at backward.
    Matches torch.autograd.graph.save_on_cpu (gradcli's tensors are on the CPU already, so the saved values are
    copies and the results equal those without the block).

    Args:
        pin_memory: accepted for PyTorch's signature (there is no device memory to pin).
        device_type: accepted for PyTorch's signature.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(_copy_to_cpu, _identity)


autograd.pack_saved = pack
