"""Hooks for saved tensors: ``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)`` and
``torch.autograd.graph.save_on_cpu()``.

As in PyTorch (torch/autograd/graph.py, "Hooks for saved tensors" in the autograd notes): inside the block,
every tensor a graph node saves for backward is given to ``pack_hook`` when the node is made, and the node keeps
what the hook returns instead of the tensor; whenever the saved tensor is needed (by backward, or by reading
``grad_fn._saved_self``), ``unpack_hook`` is called with that object and its result, which must be a Tensor, is
used. Blocks nest; the innermost one's hooks apply. The hooks of the block a node was made in stay with the
node.

gradcli's rules save what they name (:mod:`gradcli.ops.core.saved_names`), which is PyTorch's set for most ops: where it
saves more (``mul`` saves both factors even when only one input requires grad), the pack hook is called for
those too. The pack hook receives a leaf input itself, as PyTorch's does; for the op's output and for an input
made by the graph it receives a new tensor of the same values and grad_fn (PyTorch passes the tensor object
itself), because nodes keep arrays. Such a tensor shares the input's memory, so an in-place change of that input
afterwards is refused by gradcli's in-place rules rather than seen by the unpack hook.
"""

from __future__ import annotations

import numpy as np

from ...engine import graph
from . import saved_names
from ...engine.context import state as _state
from .declare import Op
from .saved_names import as_tensor
from ...engine.tensor import Tensor


class Packed:
    """What a node keeps in ``Node.saved`` once hooks apply to its saved values (a saved tensors hooks block, or
    ``grad_fn._raw_saved_self.register_hooks``): per slot, the value and its unpack hook. The engine reads it
    like the tuple of arrays it replaces (``rule(grad, *saved)``, ``saved[slot]``): a slot with hooks calls its
    unpack hook on each read and gives the array of the Tensor returned, in the node's dtype.

    Attributes:
        node: the graph node.
        slots: per slot of the rule's saved values, ``(value, unpack_hook)``: what the pack hook returned and the
            unpack hook, or the saved array (None for an absent input) and None where no hook applies.
    """

    __slots__ = ("node", "slots")

    def __init__(self, node, slots: list):
        self.node = node
        self.slots = slots

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self):
        n = len(self.slots)
        op = getattr(self.node, "op", None)
        values = {k: self[k] for k in _PACK_ORDER.get(getattr(op, "name", None), range(n)) if k < n}
        return iter([values[k] if k in values else self[k] for k in range(n)])  # unpacked in PyTorch's order

    def __getitem__(self, slot: int):
        value, unpack = self.slots[slot]
        if unpack is None:
            return value
        d = self._unpack(value, unpack).data
        dtype = self.node.dtype
        return d if d.dtype == dtype else d.astype(dtype)

    def unpack_tensor(self, slot: int):
        """The Tensor of ``slot`` as ``grad_fn._saved_<name>`` gives it: the unpack hook's result, or the saved
        value as :func:`gradcli.ops.core.saved_names.as_tensor` shows it where no hook applies (None for no value).

        Raises:
            TypeError: PyTorch's "Output of saved tensor unpack_hook expected to be a Tensor but got result of
                type X" when the hook returns something else.
        """
        value, unpack = self.slots[slot]
        if unpack is None:
            return None if value is None else as_tensor(self.node, slot, value)
        d = self._unpack(value, unpack).data
        # PyTorch gives the unpacked values the saved variable's place in the graph: the producer's grad_fn, the
        # node's own for its output, requires_grad for a leaf's
        t = as_tensor(self.node, slot, d)
        return Tensor(d, True) if t.grad_fn is None and t.requires_grad and t.data is not d else t

    @staticmethod
    def _unpack(value, unpack):
        t = unpack(value)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t


def _packing(node) -> Packed:
    # the node's Packed, made from its tuple of arrays on first use
    saved = node.saved
    if type(saved) is tuple:
        saved = node.saved = Packed(node, [(d, None) for d in saved])
    return saved


def _call_pack(pack_hook, t: Tensor):
    # PyTorch calls the pack hook with grad mode off: what it computes records nothing
    mode = _state.grad_enabled
    _state.grad_enabled = False
    try:
        return pack_hook(t)
    finally:
        _state.grad_enabled = mode


def pack(node):
    """Give every value ``node`` saved to the active saved tensors hooks' pack hook (as the Tensor PyTorch gives
    it: the input itself, or the output), and keep the results with the unpack hook (:class:`Packed`)."""
    if not isinstance(node.op, Op) or not node.op.save_plan:  # a custom Function's node keeps its ctx
        return
    pack_hook, unpack_hook = _state.saved_hooks[-1]
    tensors = [None if d is None else as_tensor(node, slot, d) for slot, d in enumerate(node.saved)]
    slots = [(None, None)] * len(tensors)
    order = _PACK_ORDER.get(node.op.name, range(len(tensors)))
    for slot in (k for k in order if k < len(tensors)):  # PyTorch's order of packing
        t = tensors[slot]
        if t is not None:
            slots[slot] = (_call_pack(pack_hook, t), unpack_hook)
    node.saved = Packed(node, slots)


#: Ops whose PyTorch node saves its tensors in another order than gradcli's rule names them (slots in PyTorch's
#: order). PyTorch's generated code saves them in the order derivatives.yaml's formulas first name them: mul and
#: div's ``self:`` formula names ``other`` first (``mul_tensor_backward(grad, other, ...)``, ``grad / other``).
_PACK_ORDER = {"mul": (1, 0), "true_divide": (1, 0), "div": (1, 0)}


class SavedTensor:
    """One value a node saved, as ``grad_fn._raw_saved_self`` gives it (PyTorch's torch._C._autograd.SavedTensor):
    its hooks can be set with :meth:`register_hooks`."""

    __slots__ = ("node", "slot")

    def __init__(self, node, slot: int):
        self.node = node
        self.slot = slot

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Set this saved value's hooks, as torch.autograd.graph.saved_tensors_hooks does for a whole block:
        ``pack_hook`` is called now with a tensor of the saved values (not requiring grad), and
        ``unpack_hook`` on its result whenever the value is needed.

        Raises:
            RuntimeError: PyTorch's messages when backward freed the value or its hooks are already set.
        """
        node = self.node
        if node.saved is graph._FREED:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if you "
                               "need to access saved variables after calling backward.")
        packed = _packing(node)
        value, unpack = packed.slots[self.slot]
        if unpack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if value is None:
            return
        packed.slots[self.slot] = (_call_pack(pack_hook, Tensor(value)), unpack_hook)

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


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


graph.pack_saved = pack
saved_names.raw_saved = SavedTensor
