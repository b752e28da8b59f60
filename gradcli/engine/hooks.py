"""Hooks: user functions the backward pass runs on gradients (torch.Tensor.register_hook and its relatives).

``Tensor.register_hook`` (a tensor's gradient, which the hook may replace),
``Tensor.register_post_accumulate_grad_hook`` (a leaf, after its ``.grad`` was accumulated), and
``grad_fn.register_prehook`` and ``grad_fn.register_hook`` (a node's gradients before and after it runs), each
returning a :class:`RemovableHandle`. The hooks are kept in tables outside the graph's objects, so that a backward
without any costs one test of an empty dict per node; the engine (:mod:`gradcli.engine.autograd`) reads the tables
and calls the ``_hooked`` functions of this module. Importing it installs the ``register_*`` methods on Tensor
and Node.
"""

from __future__ import annotations

import weakref

from .graph import MultiNode, Node
from .tensor import Tensor


class RemovableHandle:
    """What ``register_*hook`` returns: ``remove()`` unregisters the hook (PyTorch's
    torch.utils.hooks.RemovableHandle)."""

    program_attributes = ("remove", "id")
    _ids = iter(range(1 << 62))

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook (again: nothing)."""
        self._hooks.pop(self.id, None)

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


#: Hooks the engine runs, kept outside the graph's objects so that a backward without any costs one test of
#: an empty dict per node. Non-leaf tensors' hooks by (node, output_nr); leaves' by id (with a weak reference
#: to the leaf); nodes' pre-hooks and hooks by node.
_TENSOR_HOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LEAF_HOOKS: dict = {}
_NODE_PREHOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_NODE_HOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _register_hook(self, hook):
    """``Tensor.register_hook(hook)``: ``hook(grad)`` runs when the gradient of this tensor has been computed,
    and a tensor it returns replaces that gradient (for what flows on, and for ``.grad``). Returns a handle.

    Raises:
        RuntimeError: PyTorch's message for a tensor that does not require grad.
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        key = id(self)
        entry = _LEAF_HOOKS.get(key)
        if entry is None or entry[0]() is not self:
            entry = _LEAF_HOOKS[key] = (weakref.ref(self, lambda _, key=key: _LEAF_HOOKS.pop(key, None)), {}, {})
        hooks = entry[1]
    else:
        hooks = _TENSOR_HOOKS.setdefault(self.grad_fn, {}).setdefault(self._output_nr
                                                                       if type(self.grad_fn) is MultiNode else 0, {})
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _register_post_accumulate_grad_hook(self, hook):
    """``Tensor.register_post_accumulate_grad_hook(hook)``: ``hook(tensor)`` runs after backward has
    accumulated into this leaf's ``.grad``. Returns a handle.

    Raises:
        RuntimeError: PyTorch's message on a tensor that is not a leaf.
    """
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    key = id(self)
    entry = _LEAF_HOOKS.get(key)
    if entry is None or entry[0]() is not self:
        entry = _LEAF_HOOKS[key] = (weakref.ref(self, lambda _, key=key: _LEAF_HOOKS.pop(key, None)), {}, {})
    handle = RemovableHandle(entry[2])
    entry[2][handle.id] = hook
    return handle


def _as_grad_tensor(g, create_graph: bool):
    return g if type(g) is Tensor or g is None else Tensor(g)


def _hooked(hooks: dict, g, create_graph: bool):
    """Run tensor hooks on the gradient ``g`` (an array, or a Tensor under create_graph); a returned tensor
    replaces it."""
    for hook in list(hooks.values()):
        out = hook(_as_grad_tensor(g, create_graph))
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError("hook returned a value that is not a Tensor")
            g = out if create_graph else out.data
    return g


def _tensor_hooked(node, grad, create_graph: bool):
    """Run the tensor hooks of the outputs of ``node`` (registered on non-leaf tensors) on its gradient ``grad``
    (a list with a slot per output for a MultiNode); returns the gradient the hooks leave."""
    per_output = _TENSOR_HOOKS[node]
    if type(node) is MultiNode:
        grad = list(grad)
        for nr, hooks in per_output.items():
            if grad[nr] is not None:
                grad[nr] = _hooked(hooks, grad[nr], create_graph)
    elif 0 in per_output:
        grad = _hooked(per_output[0], grad, create_graph)
    return grad


def _node_prehooked(node, grad, create_graph: bool):
    hooks = _NODE_PREHOOKS.get(node)
    if not hooks:
        return grad
    multi = type(node) is MultiNode
    outs = tuple(_as_grad_tensor(g, create_graph) for g in (grad if multi else [grad]))
    for hook in list(hooks.values()):
        new = hook(outs)
        if new is not None:
            outs = tuple(new)
    vals = [o if create_graph or o is None else o.data for o in outs]
    return vals if multi else vals[0]


def _node_hooked(node, grads, grad, create_graph: bool):
    hooks = _NODE_HOOKS.get(node)
    if not hooks:
        return grads
    ins = tuple(None if g is None else _as_grad_tensor(g, create_graph) for g in grads)
    outs = tuple(_as_grad_tensor(g, create_graph) for g in (grad if type(node) is MultiNode else [grad]))
    for hook in list(hooks.values()):
        new = hook(ins, outs)
        if new is not None:
            ins = tuple(new)
    return tuple(None if g is None else (g if create_graph else g.data) for g in ins)


def _node_register(table):
    def register(self, hook):
        handle = RemovableHandle(table.setdefault(self, {}))
        table[self][handle.id] = hook
        return handle

    return register


Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Node.register_prehook = _node_register(_NODE_PREHOOKS)
Node.register_prehook.__doc__ = ("``grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the node runs; "
                                 "a tuple it returns replaces the gradients. Returns a handle.")
Node.register_hook = _node_register(_NODE_HOOKS)
Node.register_hook.__doc__ = ("``grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after the "
                              "node runs; a tuple it returns replaces grad_inputs. Returns a handle.")
