"""Custom autograd functions: a program's ``class Exp(torch.autograd.Function)`` with ``forward`` and
``backward`` static methods, applied with ``Exp.apply(x)``, as PyTorch runs them.

``apply`` runs ``forward(ctx, *args)`` with grad mode off (or ``forward(*args)`` then ``setup_context(ctx,
inputs, output)`` for the newer style), and, when grad mode is on and a tensor argument requires grad, records
one graph node for the call, named ``<Class>Backward`` (PyTorch's name for a custom function's node). In
backward the engine calls the program's ``backward(ctx, *grad_outputs)``, with grad mode on only under
``create_graph`` (so a ``backward`` written with differentiable ops gives double backward, as in PyTorch); it
returns one gradient per argument of ``forward`` (None for the others), each summed to its input's shape when
it is expandable to it and refused otherwise, with PyTorch's messages.

``ctx`` (:class:`FunctionCtx`) has ``save_for_backward``, ``saved_tensors``, ``needs_input_grad``,
``mark_non_differentiable``, ``set_materialize_grads`` and the attributes a program sets on it.
"""

from __future__ import annotations

import numpy as np

from ..engine import autograd, graph
from ..engine.tensor import Tensor
from .safety import admit
from .values import MISSING


class FunctionBase:
    """``torch.autograd.Function``: the base class of a program's custom functions (a builtin base of the
    language's classes; :func:`apply` is its ``apply``)."""

    name = "torch.autograd.Function"

    def __repr__(self) -> str:
        return "<class 'torch.autograd.function.Function'>"


FUNCTION = FunctionBase()


class FunctionCtx:
    """The ``ctx`` of one ``apply``: what ``forward`` saves for ``backward``.

    Attributes:
        needs_input_grad: per argument of ``forward``, whether it is a tensor that requires grad (a tuple of
            bools, PyTorch's ``ctx.needs_input_grad``).
        attrs: the attributes the program set (``ctx.constant = 2``).
    """

    __slots__ = ("saved", "needs_input_grad", "attrs", "materialize", "non_differentiable")

    def __init__(self, needs_input_grad: tuple):
        self.saved = ()
        self.needs_input_grad = needs_input_grad
        self.attrs = {}
        self.materialize = True
        self.non_differentiable = ()

    def save_for_backward(self, *tensors):
        """``ctx.save_for_backward(*tensors)``: tensors (or None) for ``ctx.saved_tensors``.

        Raises:
            TypeError: PyTorch's message for a value that is neither.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self.saved = tensors

    def saved_tensors(self) -> tuple:
        """``ctx.saved_tensors`` (a second backward without ``retain_graph`` stops before, at the node, with
        PyTorch's message)."""
        return tuple(self.saved)

    def mark_non_differentiable(self, *tensors):
        """``ctx.mark_non_differentiable(*outputs)``: those outputs do not require grad."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        """``ctx.set_materialize_grads(False)``: ``backward`` gets None, not zeros, for outputs without a
        gradient."""
        self.materialize = bool(value)

    def __repr__(self) -> str:
        return f"<torch.autograd.function.BackwardCFunction object at {id(self):#x}>"


class CustomOp:
    """The op of one custom-function node: what the engine reads from an op (see gradcli.ops.core.declare.Op), with
    the program's ``backward`` as its derivative rule (called with the gradient only: CALL_PLAN, no plan)."""

    kind = "op"
    promote = None
    differentiable = True
    vjp_call = 0
    vjp_plan = ()
    save_plan = ()
    saved_inputs = ()
    saves_result = False
    needs_shapes = False
    jvp = None
    #: PyTorch makes a Python class per custom Function's backward, in this module: its node prints as
    #: ``<torch.autograd.function.MyExpBackward object at 0x...>`` (``name()`` stays ``MyExpBackward``).
    torch_module = "torch.autograd.function"

    def __init__(self, cls, ctx: FunctionCtx, arg_is_tensor: list, inputs: list, multi: bool, call_node):
        self.cls = cls
        self.ctx = ctx
        self.name = cls.name
        self.grad_fn = f"{cls.name}Backward"
        self.note = f"the program's {cls.name}.backward"
        self.arg_is_tensor = arg_is_tensor
        self.inputs = inputs  # the tensor arguments: (shape, numpy dtype) each
        self.ninputs = len(inputs)
        self.multi_output = multi
        self.saves = True  # a second backward without retain_graph is PyTorch's error
        self.call_node = call_node

    def vjp(self, grad):
        """Run the program's ``backward`` on the output gradient(s); one gradient per tensor argument."""
        interp = self.cls.interpreter
        create_graph = isinstance(grad[0] if self.multi_output else grad, Tensor)
        grads = grad if self.multi_output else (grad,)
        ctx = self.ctx
        args = []
        for g in grads:
            if g is None and ctx.materialize:
                g = np.zeros(())
            args.append(None if g is None else g if isinstance(g, Tensor) else Tensor(g))
        backward = self.cls.lookup("backward")
        with autograd.enable_grad() if create_graph else autograd.no_grad():
            out = interp.call_value(interp.bind(backward, None, self.cls), [ctx] + args, {}, self.call_node)
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != len(self.arg_is_tensor):
            raise RuntimeError(f"function {self.grad_fn} returned an incorrect number of gradients (expected "
                               f"{len(self.arg_is_tensor)}, got {len(out)})")
        result = []
        k = 0
        for is_tensor, g in zip(self.arg_is_tensor, out):
            if not is_tensor:
                if g is not None and not isinstance(g, Tensor):
                    pass  # gradients of non-tensor arguments are ignored, as PyTorch does
                continue
            shape, dtype = self.inputs[k]
            result.append(self._fit(g, shape, dtype, k, create_graph))
            k += 1
        return tuple(result)

    def _fit(self, g, shape, dtype, index: int, create_graph: bool):
        if g is None:
            return None
        if not isinstance(g, Tensor):
            raise TypeError(f"function {self.grad_fn} returned a gradient different than None at position "
                            f"{index + 1}, but the corresponding forward input was not a Variable")
        if tuple(g.shape) != tuple(shape):
            try:
                np.broadcast_shapes(tuple(shape), tuple(g.shape))
                expandable = np.broadcast_shapes(tuple(shape), tuple(g.shape)) == tuple(g.shape)
            except ValueError:
                expandable = False
            if not expandable:
                raise RuntimeError(f"Function {self.grad_fn} returned an invalid gradient at index {index} - got "
                                   f"{list(g.shape)} but expected shape compatible with {list(shape)}")
            g = g.sum_to_size(*shape) if shape else g.sum()
        if create_graph:
            return g
        data = g.data
        return data if data.dtype == dtype else data.astype(dtype)


def once_differentiable(fn):
    """``@once_differentiable`` on a custom Function's ``backward``: it runs with grad mode off, so that its
    gradients have no graph (a second backward through them is PyTorch's "element 0 of tensors does not
    require grad" error). Matches torch.autograd.function.once_differentiable."""
    def wrapper(ctx, *args):
        with autograd.no_grad():
            return fn(ctx, *args)

    return wrapper


def apply(cls, args: tuple, call_node):
    """``Cls.apply(*args)`` for a program's subclass ``cls`` of torch.autograd.Function.

    Raises:
        RuntimeError: PyTorch's messages (a forward that returns no tensor where an input requires grad is
            allowed and records nothing).
    """
    interp = cls.interpreter
    arg_is_tensor = [isinstance(a, Tensor) for a in args]
    needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx = FunctionCtx(needs)
    forward = cls.lookup("forward")
    if forward is MISSING:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")
    setup = cls.lookup("setup_context")
    with autograd.no_grad():
        if setup is not MISSING:
            out = interp.call_value(interp.bind(forward, None, cls), list(args), {}, call_node)
            interp.call_value(interp.bind(setup, None, cls), [ctx, tuple(args), out], {}, call_node)
        else:
            out = interp.call_value(interp.bind(forward, None, cls), [ctx] + list(args), {}, call_node)
    if cls.lookup("backward") is MISSING:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")
    multi = isinstance(out, tuple)
    outs = list(out) if multi else [out]
    if not (autograd.is_grad_enabled() and any(needs)):
        return out
    tensor_args = [a for a in args if isinstance(a, Tensor)]
    edges = []
    for t in tensor_args:
        if t.requires_grad:
            e = t.grad_fn or t
            if type(e) is graph.MultiNode:
                e = e.outputs[t._output_nr]
            edges.append(e)
        else:
            edges.append(None)
    op = CustomOp(cls, ctx, arg_is_tensor, [(tuple(t.shape), t.data.dtype) for t in tensor_args], multi, call_node)
    tensor_outs = [o for o in outs if isinstance(o, Tensor)]
    if not tensor_outs:
        return out
    first = tensor_outs[0].data
    if multi:
        node = graph.MultiNode(op, tuple(edges), (ctx,), (), None, [tuple(o.data.shape) for o in outs
                                                                       if isinstance(o, Tensor)],
                                  first.dtype, first.dtype)
    else:
        node = graph.Node(op, tuple(edges), (ctx,), (), None, tuple(first.shape), first.dtype, first.dtype)
    admit(len(outs), "the outputs of apply")
    wrapped, k = [], 0
    for o in outs:
        if not isinstance(o, Tensor):
            wrapped.append(o)
            continue
        if any(o is nd for nd in ctx.non_differentiable) or o.data.dtype.kind != "f":
            wrapped.append(Tensor(o.data))
        else:
            t = Tensor(o.data, True, node)
            if multi:
                t._output_nr = k
            wrapped.append(t)
        k += 1
    return tuple(wrapped) if multi else wrapped[0]
