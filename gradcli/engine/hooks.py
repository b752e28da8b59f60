"""Hooks: user functions the backward pass runs on gradients (torch.Tensor.register_hook and its relatives).

``Tensor.register_hook`` (a tensor's gradient, which the hook may replace),
``Tensor.register_post_accumulate_grad_hook`` (a leaf, after its ``.grad`` was accumulated), and
``grad_fn.register_prehook`` and ``grad_fn.register_hook`` (a node's gradients before and after it runs), each
returning a :class:`RemovableHandle`, and ``torch.autograd.graph.register_multi_grad_hook`` (one function for the
gradients of several tensors, per backward pass). The hooks live on the objects they were registered on, as PyTorch's do: a
leaf's in its :class:`~gradcli.engine.tensor.TensorMeta` (``Tensor._meta``), a non-leaf tensor's and a node's in the
node's :class:`~gradcli.engine.graph.NodeExtra` (``Node.extra``, None for most nodes, so that a backward without
hooks costs one test per node); the engine (:mod:`gradcli.engine.autograd`) reads them and calls the ``_hooked`` functions of this
module. Importing it installs the ``register_*`` methods on Tensor and Node.
"""

from __future__ import annotations

import itertools
import weakref

from .context import state as _state
from .graph import MultiNode, Node, node_extra
from .tensor import Tensor, own_meta


class RemovableHandle:
    """What ``register_*hook`` returns: ``remove()`` unregisters the hook (PyTorch's
    torch.utils.hooks.RemovableHandle)."""

    program_attributes = ("remove", "id")
    _ids = itertools.count()  # handle ids, unique in the process (a pure counter: no run reads it)

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook (again: nothing)."""
        self._hooks.pop(self.id, None)

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


def _register_hook(self, hook):
    """``Tensor.register_hook(hook)``: ``hook(grad)`` runs when the gradient of this tensor has been computed,
    and a tensor it returns replaces that gradient (for what flows on, and for ``.grad``). Returns a handle.

    Raises:
        RuntimeError: PyTorch's message for a tensor that does not require grad.
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        meta = own_meta(self)
        if meta.hooks is None:
            meta.hooks = {}
        hooks = meta.hooks
    else:
        hooks = node_extra(self.grad_fn).tensor_hooks.setdefault(self._output_nr if type(self.grad_fn) is MultiNode
                                                             else 0, {})
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
    meta = own_meta(self)
    if meta.post_hooks is None:
        meta.post_hooks = {}
    handle = RemovableHandle(meta.post_hooks)
    meta.post_hooks[handle.id] = hook
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
    per_output = node.extra.tensor_hooks
    if type(node) is MultiNode:
        grad = list(grad)
        for nr, hooks in per_output.items():
            if grad[nr] is not None:
                grad[nr] = _hooked(hooks, grad[nr], create_graph)
    elif 0 in per_output:
        grad = _hooked(per_output[0], grad, create_graph)
    return grad


def _node_prehooked(node, grad, create_graph: bool):
    hooks = node.extra.pre_hooks
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
    hooks = node.extra.post_hooks
    if not hooks:
        return grads
    ins = tuple(None if g is None else _as_grad_tensor(g, create_graph) for g in grads)
    outs = tuple(_as_grad_tensor(g, create_graph) for g in (grad if type(node) is MultiNode else [grad]))
    for hook in list(hooks.values()):
        new = hook(ins, outs)
        if new is not None:
            ins = tuple(new)
    return tuple(None if g is None else (g if create_graph else g.data) for g in ins)


def _node_register(which: str):
    def register(self, hook):
        hooks = getattr(node_extra(self), which)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    return register


Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Node.register_prehook = _node_register("pre_hooks")
Node.register_prehook.__doc__ = ("``grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the node runs; "
                                 "a tuple it returns replaces the gradients. Returns a handle.")
Node.register_hook = _node_register("post_hooks")
Node.register_hook.__doc__ = ("``grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after the "
                              "node runs; a tuple it returns replaces grad_inputs. Returns a handle.")


# ----------------------------------------------------------------------------- register_multi_grad_hook
class MultiHandle:
    """What ``torch.autograd.graph.register_multi_grad_hook`` returns: ``remove()`` unregisters its hooks from
    every tensor (PyTorch's torch.autograd.graph._MultiHandle)."""

    program_attributes = ("remove",)
    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        """Unregister the hooks."""
        for h in self.handles:
            h.remove()

    def __repr__(self) -> str:
        return f"<torch.autograd.graph._MultiHandle object at {id(self):#x}>"

    def display_text(self) -> str:
        """What a notebook shows for it (IPython's form for an object without its own repr)."""
        return f"<torch.autograd.graph._MultiHandle at {id(self):#x}>"


def _current_task():
    task = _state.graph_task
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """``torch.autograd.graph.register_multi_grad_hook(tensors, fn, mode="all")``: with ``mode="all"``,
    ``fn(grads)`` runs once per backward pass, after the gradients of all of ``tensors`` that the pass computes
    are known, with a list holding each one (None for a tensor the pass does not reach, or, with ``inputs=``,
    does not capture); with ``mode="any"``, ``fn(grad)`` runs on the first of them the pass computes. Each
    backward pass keeps its own count (PyTorch's graph task). Returns a handle whose ``remove()`` unregisters
    the hooks. Matches torch.autograd.graph.register_multi_grad_hook (torch/autograd/graph.py).

    Raises:
        ValueError: for another mode (PyTorch's message); RuntimeError for a tensor that does not require grad
            (``mode="all"``, as ``register_hook``).
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        fired = weakref.WeakKeyDictionary()

        def first(grad):
            task = _current_task()
            if fired.get(task):
                return
            fired[task] = True
            fn(grad)

        return MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))
    count = weakref.WeakKeyDictionary()  # graph task -> [calls so far, calls expected, buffer]

    def inner(idx):
        def hook(grad):
            task = _current_task()
            entry = count.get(task)
            if entry is None:
                entry = count[task] = [0, sum(task.will_run(t) for t in tensors), [None] * len(tensors)]
            entry[2][idx] = grad
            entry[0] += 1
            if entry[0] == entry[1]:
                del count[task]
                fn(entry[2])

        return hook

    return MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))
