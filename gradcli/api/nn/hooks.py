"""Full backward hooks of modules (``register_full_backward_hook``), as PyTorch's
``torch.utils.hooks.BackwardHook``: the module's tensor inputs and its output pass through identity nodes
named ``BackwardHookFunctionBackward``; the output's records ``grad_output``, the inputs' collect
``grad_input`` and, when the last of them has its gradient, call each hook with ``(module, grad_input,
grad_output)`` (a hook's result that is not None replaces ``grad_input``). A module whose inputs do not require
grad gets its hooks called with ``grad_input`` all None, from the output's node."""

from __future__ import annotations

from ...engine import graph
from ...engine.tensor import Tensor


class _HookOp:
    """The op of one ``BackwardHookFunctionBackward`` node: the identity, whose derivative calls back."""

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
    name = "BackwardHookFunction"
    grad_fn = "BackwardHookFunctionBackward"
    note = "the identity; calls the module's full backward hooks"
    ninputs = 1
    multi_output = False
    saves = False

    def __init__(self, callback):
        self.callback = callback

    def vjp(self, grad):
        return (self.callback(grad),)


def _identity(t: Tensor, callback) -> Tensor:
    edge = t.grad_fn or t
    if type(edge) is graph.MultiNode:
        edge = edge.outputs[t._output_nr]
    node = graph.Node(_HookOp(callback), (edge,), (), (), None, tuple(t.data.shape), t.data.dtype,
                         t.data.dtype)
    return Tensor(t.data, True, node)


def _as_tensor(g):
    return g if g is None or isinstance(g, Tensor) else Tensor(g)


def _as_grad(g, like):
    if g is None:
        return None
    if isinstance(like, Tensor):
        return g if isinstance(g, Tensor) else Tensor(g)
    return g.data if isinstance(g, Tensor) else g


class BackwardHookState:
    """One call of a module with full backward hooks."""

    def __init__(self, module, hooks: dict):
        self.module = module
        self.hooks = hooks
        self.n_inputs = 0
        self.grad_inputs = {}
        self.grad_output = None

    def _call_hooks(self, grad_input: tuple) -> tuple:
        for hook in list(self.hooks.values()):
            r = hook(self.module, grad_input, self.grad_output)
            if r is not None:
                r = r if isinstance(r, tuple) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, but "
                                       f"expected {len(grad_input)}")
                grad_input = r
        return grad_input

    def wrap_inputs(self, args: tuple) -> tuple:
        out = []
        for a in args:
            if isinstance(a, Tensor) and a.requires_grad:
                k = self.n_inputs
                self.n_inputs += 1
                out.append(_identity(a, lambda g, k=k: self._input_grad(k, g)))
            else:
                out.append(a)
        return tuple(out)

    def _input_grad(self, k: int, g):
        self.grad_inputs[k] = g
        if len(self.grad_inputs) < self.n_inputs:
            return g
        grads = tuple(_as_tensor(self.grad_inputs[i]) for i in range(self.n_inputs))
        new = self._call_hooks(grads)
        return _as_grad(new[k], g)

    def wrap_outputs(self, result):
        if isinstance(result, Tensor) and result.requires_grad:
            return _identity(result, self._output_grad)
        if isinstance(result, tuple):
            return tuple(self.wrap_outputs(r) for r in result)
        return result

    def _output_grad(self, g):
        self.grad_output = (_as_tensor(g),)
        if self.n_inputs == 0:
            self._call_hooks((None,))
        return g
