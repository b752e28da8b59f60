"""``torch.autograd.functional``: Jacobians, Hessians and vector products of a function, by reverse mode.

Signatures, results (shapes: the Jacobian of an output of shape O with respect to an input of shape I has shape
O + I; tuples for several inputs and outputs, as PyTorch nests them), checks and messages follow
torch/autograd/functional.py (PyTorch 2.13). The inputs are detached copies that require grad (with
``create_graph`` they keep their history, so that the result can be differentiated again); without
``create_graph`` the results are detached.

How it is computed: reverse-mode Jacobians batch their rows (the vector-Jacobian products with the rows of the
identity, :func:`jacobian_blocks`); ``strategy="forward-mode"`` computes columns, one forward-mode JVP per input
element (:mod:`gradcli.api.forward_ad`, :func:`forward_blocks`); the Hessian is the Jacobian of the gradient taken
with ``create_graph`` (``outer_jacobian_strategy`` chooses the outer Jacobian's mode); ``jvp`` uses the
double-backward trick (a VJP with a dummy vector, differentiated again with respect to that vector), as
PyTorch's reverse-mode ``jvp`` does. The same helpers serve :mod:`gradcli.api.func`.
"""

from __future__ import annotations

import numpy as np

from ..engine import autograd, graph
from . import forward_ad
from ..engine.context import state as _state
from ..ops import REGISTRY
from ..engine.tensor import Tensor, fw_tangent

_stack = REGISTRY["stack"]
_zeros = REGISTRY["zeros"]
_zeros_like = REGISTRY["zeros_like"]
_reshape = REGISTRY["reshape"]


def _as_tuple(x, arg_name: str, fn_name: str):
    """``(is_tuple, tuple_of_tensors)``, checking every element is a Tensor (PyTorch's ``_as_tuple``)."""
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                                f"but the value at index {i} has type {_type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the given {arg_name} has type {_type(el)}.")
    return is_tuple, items


def _type(v) -> str:
    return "<class 'torch.Tensor'>" if isinstance(v, Tensor) else f"<class '{type(v).__name__}'>"


def _prepare(inputs, create_graph: bool):
    """Inputs that require grad: detached copies, or (create_graph) views that keep their history."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(x, create_graph: bool):
    if isinstance(x, tuple):
        return tuple(_finish(e, create_graph) for e in x)
    return x if create_graph else x.detach()


def _grads(out, inputs, grad_out, create_graph: bool, strict: bool, out_index, fn_name: str):
    """d(sum(grad_out * out)) / d(inputs), zeros for independent inputs (or the strict error)."""
    if not out.requires_grad:
        grads = (None,) * len(inputs)
    else:
        grads = autograd.grad([out], list(inputs), [grad_out] if grad_out is not None else None,
                              retain_graph=True, create_graph=create_graph, allow_unused=True)
    result = []
    for j, (g, inp) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"Output {out_index} of the user-provided function is independent of input {j}. "
                                   "This is not allowed in strict mode.")
            g = _zeros_like(inp)
        result.append(g)
    return tuple(result)


def _check_requires_grad(tensors, input_type: str, strict: bool) -> None:
    """strict mode's checks of outputs, gradients and Jacobians that do not require grad (PyTorch's
    ``_check_requires_grad`` and its messages)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if t.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is independent "
                               "of the input. This is not allowed in strict mode. You should ensure that your "
                               "function is thrice differentiable and that the hessian depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in "
                               "strict mode. You should ensure that your function is twice differentiable and that "
                               "the jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")
        if input_type == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs must "
                           "be computed in a differentiable manner from the input when running in strict mode.")


#: strict mode's message for a gradient that is None, by the stage of the computation (PyTorch's _fill_in_zeros).
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """``grads`` with zeros for None, or strict mode's error for the ``stage`` (PyTorch's ``_fill_in_zeros``)."""
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _raw_grads(outputs, inputs, grad_outputs, create_graph: bool) -> tuple:
    """``autograd.grad`` of the outputs that require grad (None for unused inputs; all None when none does)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return tuple(autograd.grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], retain_graph=True,
                               create_graph=create_graph, allow_unused=True))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for an output of shape O and an input of shape I, a tensor of shape
    O + I; a tuple over inputs when ``inputs`` is a tuple, nested in a tuple over outputs when ``func`` returns
    one. Matches torch.autograd.functional.jacobian.

    Raises:
        TypeError: inputs or outputs that are not Tensors (PyTorch's messages).
        ValueError: an unknown ``strategy`` (PyTorch's message).
        NotImplementedError: forward mode without ``vectorize`` or with ``create_graph`` (PyTorch's messages).
        RuntimeError: in strict mode, an output independent of an input; strict with forward mode (PyTorch's
            messages).

    ``strategy="forward-mode"`` computes one JVP per input element with :mod:`gradcli.api.forward_ad`
    (:func:`forward_blocks`); reverse mode batches the VJPs (:func:`jacobian_blocks`).
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
                               "are not supported together (yet). Please either set `strict=False` or "
                               "`strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        box = {}

        def flat(*inp):
            is_out_tuple, outs = _as_tuple(func(*inp), "outputs of the user-provided function", "jacobian")
            box["tuple"] = is_out_tuple
            return list(outs), None

        _, jac, _ = forward_blocks(flat, [t.detach() for t in inputs], False)
        result = tuple(tuple(j) if is_inputs_tuple else j[0] for j in jac)
        return result if box["tuple"] else result[0]
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        try:
            jac = [tuple(jacobian_blocks(out, inputs, create_graph, strict, i)) for i, out in enumerate(outputs)]
        except (RuntimeError, NotImplementedError):
            if vectorize:
                _vectorized_error(outputs, inputs)
            raise
    result = tuple(j if is_inputs_tuple else j[0] for j in jac)
    result = _finish(result, create_graph)
    return result if is_outputs_tuple else result[0]


def _vectorized_error(outputs, inputs) -> None:
    """Raise the error PyTorch's vectorized Jacobian raises, where gradcli's rows raised one: PyTorch's one pass
    (vmap over the backward) meets the nodes of every row of every output at once, latest first, so its error is
    that of one pass with every output's every cotangent (where two nodes whose derivatives are not implemented
    raise different errors, as embedding_bag's gradients, that of the later one)."""
    outs = [o for o in outputs if o.requires_grad]
    if outs:
        autograd.grad(outs, list(inputs), [REGISTRY["ones_like"](o) for o in outs], retain_graph=True,
                      allow_unused=True)


def jacobian_blocks(out, inputs, create_graph: bool = False, strict: bool = False, out_index: int = 0) -> list:
    """The Jacobian of one output Tensor with respect to each of ``inputs`` (Tensors that require grad, in the
    output's graph): a list of Tensors of shape ``out.shape + input.shape``, zeros for an input the output does
    not depend on (or strict mode's error).

    Every row is a vector-Jacobian product with a one-hot cotangent; rows are computed together, one reverse
    pass with the identity as a batched cotangent, where every node of the graph has a batchable rule
    (:func:`gradcli.engine.autograd.batched_vjp`), else one pass per row.
    """
    n = int(out.data.size)
    if n > 1 and not create_graph and out.requires_grad and all(t.is_leaf for t in inputs):
        rows = batched_vjp(out, inputs)
        if rows is not None:
            per_input = []
            for j, (r, inp) in enumerate(zip(rows, inputs)):
                if r is None:
                    if strict:
                        raise RuntimeError(f"Output {out_index} of the user-provided function is independent of "
                                           f"input {j}. This is not allowed in strict mode.")
                    r = np.zeros((n,) + tuple(inp.shape), inp.data.dtype)
                per_input.append(Tensor(r.reshape(tuple(out.shape) + tuple(inp.shape))))
            return per_input
    flat = _reshape(out, (-1,))
    rows = [[] for _ in inputs]
    for k in range(flat.data.shape[0]):
        g = _grads(flat[k], inputs, None, create_graph, strict, out_index, "jacobian")
        for j, gj in enumerate(g):
            rows[j].append(gj)
    per_input = []
    for j, inp in enumerate(inputs):
        shape = tuple(out.shape) + tuple(inp.shape)
        if len(rows[j]) == 1:  # one row (a scalar output): no stack node in the graph (see batched_vjp)
            per_input.append(_reshape(rows[j][0], shape))
        elif rows[j]:
            per_input.append(_reshape(_stack(rows[j]), shape))
        else:  # an empty output
            per_input.append(_zeros(shape, dtype=inp.dtype))
    return per_input


# --- batched vector-Jacobian products ------------------------------------------------------------------------
# One reverse pass carries B cotangents at once: every gradient has a leading batch dimension. A node's rule is
# run batched only where that is known to be right: elementwise ops (their rules multiply the gradient by
# values of the output's shape, which broadcast against the batch dimension), and the ops of _BATCHED_RULES.
# Any other node (a reshape, an indexing, an op with several outputs) makes batched_vjp give up (None), and the
# caller computes one VJP per row.

def _saved_input(node, i: int):
    """The saved value of the node's tensor input ``i`` (a numpy array), or None if the rule did not save it."""
    for slot, k in enumerate(node.op.save_plan):
        if k == i:
            return node.saved[slot]
    return None


def _param(node, name: str):
    return node.params[node.op.param_names.index(name)]


def _reduction_rule(g, node, in_shape):
    dim, keepdim = _param(node, "dim"), _param(node, "keepdim")
    nd = len(in_shape)
    if dim is None or dim == () or dim == []:
        axes = tuple(range(nd))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(sorted(d % nd if nd else 0 for d in dims))
    B = g.shape[0]
    if not (keepdim and dim is not None):
        kept = [1 if a in axes else in_shape[a] for a in range(nd)]
        g = g.reshape((B,) + tuple(kept))
    r = np.broadcast_to(g, (B,) + tuple(in_shape))
    if node.op.name == "mean":
        count = 1
        for a in axes:
            count *= in_shape[a]
        r = r / count
    return (r,)


def _mv_rule(g, node, in_shape):
    a, v = _saved_input(node, 0), _saved_input(node, 1)
    need = [e is not None for e in node.edges]
    return ((g[:, :, None] * v[None, None, :]) if need[0] else None, (g @ a) if need[1] else None)


def _mm_rule(g, node, in_shape):
    a, b = _saved_input(node, 0), _saved_input(node, 1)
    need = [e is not None for e in node.edges]
    return ((g @ b.T) if need[0] else None, (a.T @ g) if need[1] else None)


def _dot_rule(g, node, in_shape):
    a, b = _saved_input(node, 0), _saved_input(node, 1)
    need = [e is not None for e in node.edges]
    return ((g[:, None] * b) if need[0] else None, (g[:, None] * a) if need[1] else None)


def _reshape_rule(g, node, in_shape):
    return (g.reshape((g.shape[0],) + tuple(in_shape)),)


def _expand_rule(g, node, in_shape):
    return (g,)  # _fit_batched sums over the expanded dimensions


def _transpose_rule(g, node, in_shape):
    nd = len(in_shape)
    d0, d1 = _param(node, "dim0") % max(nd, 1), _param(node, "dim1") % max(nd, 1)
    return (np.swapaxes(g, d0 + 1, d1 + 1),)


def _permute_rule(g, node, in_shape):
    dims = node.params  # a *dims parameter: every argument after the input
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else tuple(dims)
    nd = len(in_shape)
    inverse = np.argsort([d % nd for d in dims])
    return (np.transpose(g, (0,) + tuple(int(k) + 1 for k in inverse)),)


_BATCHED_RULES = {"sum": _reduction_rule, "mean": _reduction_rule, "mv": _mv_rule, "mm": _mm_rule,
                  "dot": _dot_rule, "expand": _expand_rule, "transpose": _transpose_rule,
                  "permute": _permute_rule}
#: Ops that only reshape (the elements keep their order): the gradient is reshaped back.
for _name in ("_alias", "_reshape", "_reshape_alias", "_unsafe_view", "squeeze", "unsqueeze", "_squeeze_result",
              "_unpack_dual_primal"):
    _BATCHED_RULES[_name] = _reshape_rule
#: Linear ops whose rules pass the gradient on elementwise (besides the elementwise ops).
_ELEMENTWISE_LINEAR = {"add", "sub", "neg", "rsub"}


def _batchable(node) -> bool:
    op = node.op
    if type(node) is not graph.Node or node.saved is graph._FREED and op.saves:
        return False
    if any(type(e) is graph.OutputEdge for e in node.edges):
        return False
    return op.name in _BATCHED_RULES or op.jvp_kind == "elementwise" or op.name in _ELEMENTWISE_LINEAR


def _edge_shape_dtype(e):
    if type(e) is graph.Node:
        return e.out_shape, e.out_dtype
    return e.data.shape, e.data.dtype


def _fit_batched(r, B: int, shape, dtype):
    """A rule's batched gradient summed to ``(B,) + shape`` (undoing broadcasting), or None if it cannot be."""
    r = np.asarray(r)
    target = (B,) + tuple(shape)
    if r.ndim < 1 or r.shape[0] != B or r.ndim < len(target):
        return None
    extra = r.ndim - len(target)
    if extra:
        r = r.sum(axis=tuple(range(1, 1 + extra)))
    axes = tuple(k for k in range(1, len(target)) if target[k] == 1 and r.shape[k] != 1)
    if axes:
        r = r.sum(axis=axes, keepdims=True)
    if r.shape != target:
        return None
    return r if r.dtype == dtype else r.astype(dtype)


def batched_vjp(out: Tensor, inputs) -> list | None:
    """The rows of the Jacobian of ``out`` with respect to the leaves ``inputs``, all in one reverse pass:
    the vector-Jacobian products with the rows of the identity, carried together as a batched cotangent of
    shape ``(n,) + out.shape`` (what ``vectorize=True`` does in PyTorch, by vmap over the backward). Returns
    one array of shape ``(n,) + input.shape`` per input (None for an input the output does not depend on), or
    None when some node of the graph has no batchable rule (then the caller computes row by row). The
    engine's graph is left as it is (nothing is freed); hooks are not run. Large Jacobians are computed in
    chunks of rows (:data:`BATCH_ELEMENTS`), which bounds the memory of the batched gradients."""
    root = out.grad_fn
    if root is None:
        return None
    nodes, stack, seen = [], [root], {id(root)}
    while stack:
        node = stack.pop()
        if not _batchable(node):
            return None
        nodes.append(node)
        for e in node.edges:
            if type(e) is graph.Node and id(e) not in seen:
                seen.add(id(e))
                stack.append(e)
    nodes.sort(key=lambda nd: -nd.seq)
    n = int(out.data.size)
    # rows per pass: the batched gradients of the largest node stay under BATCH_ELEMENTS elements
    largest = max(max(int(np.prod(nd.out_shape, dtype=np.int64)) for nd in nodes),
                  max((int(e.data.size) for e in inputs), default=1), 1)
    step = max(1, min(n, BATCH_ELEMENTS // largest))
    parts = []
    for start in range(0, n, step):
        rows = _batched_pass(nodes, root, inputs, n, start, min(n, start + step))
        if rows is None:
            return None
        parts.append(rows)
    if len(parts) == 1:
        return parts[0]
    return [None if part[0] is None else np.concatenate(part) for part in zip(*parts)]


#: The most elements the batched gradients of one node may hold in one pass of :func:`batched_vjp` (the rows
#: of a large Jacobian are computed in chunks of this size).
BATCH_ELEMENTS = 1 << 24


def _batched_pass(nodes, root, inputs, n: int, start: int, stop: int):
    """Rows ``start:stop`` of :func:`batched_vjp`: one reverse pass over ``nodes`` (sorted, latest first)."""
    B = stop - start
    seed = np.zeros((B, n), dtype=root.out_dtype)
    seed[np.arange(B), np.arange(start, stop)] = 1
    grads = {id(root): seed.reshape((B,) + tuple(root.out_shape))}
    leaf_grads = {}
    with autograd.no_grad():
        for node in nodes:
            g = grads.pop(id(node), None)
            if g is None:
                continue
            rule = _BATCHED_RULES.get(node.op.name)
            try:
                if rule is not None:
                    res = rule(g, node, _edge_shape_dtype(node.edges[0])[0] if node.edges[0] is not None
                               else None)
                else:
                    res = node.apply(g, False)
            except (ValueError, IndexError):
                return None
            for e, r in zip(node.edges, res):
                if e is None or r is None:
                    continue
                shape, dtype = _edge_shape_dtype(e)
                r = _fit_batched(r, B, shape, dtype)
                if r is None:
                    return None
                if type(e) is graph.Node:
                    prev = grads.get(id(e))
                    grads[id(e)] = r if prev is None else prev + r
                else:
                    prev = leaf_grads.get(id(e))
                    leaf_grads[id(e)] = r if prev is None else prev + r
    return [leaf_grads.get(id(t)) for t in inputs]


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: shape I + I for one input, ``H[i][j]`` of shape I_i + I_j
    for a tuple. Matches torch.autograd.functional.hessian.

    Raises:
        RuntimeError: an output that is not a single-element Tensor (PyTorch's message); see :func:`jacobian`.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.data.size != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return _reshape(out, ())

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return res if is_inputs_tuple else res[0][0]


def _check_v(v, outputs, name: str, fn_name: str):
    is_tuple, vs = _as_tuple(v, name, fn_name)
    if len(vs) != len(outputs):
        raise RuntimeError(f"{name.capitalize()} has {len(vs)} elements but {fn_name} expected {len(outputs)}")
    for k, (a, b) in enumerate(zip(vs, outputs)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {k} in {name} has invalid size: got {tuple(a.shape)} but expected "
                               f"{tuple(b.shape)} (same as the corresponding output)")
    return vs


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(outputs, v^T J)``: the outputs of ``func`` and the vector-Jacobian product with ``v`` (optional for
    single-element outputs). Matches torch.autograd.functional.vjp.

    Raises:
        RuntimeError: ``v`` missing for a non-scalar output, or of the wrong size (PyTorch's messages).
    """
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].data.size != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = (None,)
        else:
            vs = _check_v(v, outputs, "v", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        total = _fill_in_zeros(_raw_grads(outputs, inputs, vs, create_graph), inputs, strict, create_graph, "back")
    outs = _finish(tuple(outputs), create_graph)
    res = _finish(tuple(total), create_graph)
    return (outs if is_outputs_tuple else outs[0]), (res if is_inputs_tuple else res[0])


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(outputs, J v)``: the outputs of ``func`` and the Jacobian-vector product with ``v`` (optional for
    single-element inputs), by the double-backward trick. Matches torch.autograd.functional.jvp."""
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].data.size != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs = (REGISTRY["ones_like"](inputs[0]),)
        else:
            vs = _check_v(v, inputs, "v", "jvp")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        if strict:  # PyTorch's checks of the VJP with a dummy vector, then of its derivative
            dummy = [_zeros_like(o).requires_grad_(True) for o in outputs]
            g_in = _raw_grads(outputs, inputs, dummy, True)
            _check_requires_grad(g_in, "grad_inputs", strict)
            terms = [(gi * vi).sum() for gi, vi in zip(g_in, vs)]
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            _fill_in_zeros(autograd.grad([total], dummy, retain_graph=True, allow_unused=True), outputs, strict,
                           False, "back_trick")
        results = []
        for i, out in enumerate(outputs):
            # J v = d/du (u^T J v)... computed as: g(u) = J^T u (a VJP, recorded), then d(g . v)/du = J v
            u = _zeros_like(out).requires_grad_(True)
            if not out.requires_grad:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input 0. "
                                       "This is not allowed in strict mode.")
                results.append(_zeros_like(out))
                continue
            g = autograd.grad([out], list(inputs), [u], retain_graph=True, create_graph=True, allow_unused=True)
            terms = [(gi * vi).sum() for gi, vi in zip(g, vs) if gi is not None]
            if not terms or not any(t.requires_grad for t in terms):
                results.append(_zeros_like(out))
                continue
            s = terms[0]
            for t in terms[1:]:
                s = s + t
            (jv,) = autograd.grad([s], [u], retain_graph=True, create_graph=create_graph, allow_unused=True)
            results.append(_zeros_like(out) if jv is None else jv)
    outs = _finish(tuple(outputs), create_graph)
    res = _finish(tuple(results), create_graph)
    return (outs if is_outputs_tuple else outs[0]), (res if is_outputs_tuple else res[0])


def jvp_forward(func, inputs, v):
    """``(outputs, J v)`` like :func:`jvp` (tuples as it nests them), computed by forward-mode AD: one pass with
    dual inputs whose tangents are ``v`` (:mod:`gradcli.api.forward_ad`); the results are detached. What ``gradcli
    jvp`` computes.

    Raises:
        RuntimeError: ``v`` of the wrong number or sizes (:func:`jvp`'s messages); outputs that are not Tensors.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    vs = _check_v(v, inputs, "v", "jvp")
    box = {}

    def flat(*inp):
        is_out_tuple, outs = _as_tuple(func(*inp), "outputs of the user-provided function", "jvp")
        box["tuple"] = is_out_tuple
        return list(outs), None

    outs, tans, _ = jvp_flat(flat, [t.detach() for t in inputs], list(vs), False)
    outs = tuple(o.detach() for o in outs)
    return (outs, tuple(tans)) if box["tuple"] else (outs[0], tans[0])


def _scalar_func(func, fn_name: str, strict: bool = False):
    def f(*inp):
        out = func(*inp)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", fn_name)
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple or t_out[0].data.size != 1:
            raise RuntimeError(f"The function given to {fn_name} should return a single element Tensor")
        return out

    return f


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False, _stage: str = "double_back"):
    """``(output, v^T H)`` for a scalar ``func``. Matches torch.autograd.functional.vhp."""
    is_inputs_tuple, inp = _as_tuple(inputs, "inputs", "vhp")
    with autograd.enable_grad():
        x = _prepare(inp, create_graph)
        if v is None:
            if len(x) != 1 or x[0].data.size != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs = (REGISTRY["ones_like"](x[0]),)
        else:
            vs = _check_v(v, x, "v", "vhp")
        out = _scalar_func(func, "vhp", strict)(*x)
        raw = _raw_grads([out], x, [None], True)
        _check_requires_grad(raw, "jacobian", strict)
        g = _fill_in_zeros(raw, x, False, True, "back")
        s = None
        for gi, vi in zip(g, vs):
            term = (gi * vi).sum()
            s = term if s is None else s + term
        res = _fill_in_zeros(_raw_grads([s], x, [None], create_graph), x, strict, create_graph, _stage)
    res = _finish(tuple(res), create_graph)
    return _finish(out, create_graph), (res if is_inputs_tuple else res[0])


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(output, H v)`` for a scalar ``func``: equal to :func:`vhp` since the Hessian of a twice-differentiable
    function is symmetric (PyTorch computes it with the double-backward trick). Matches
    torch.autograd.functional.hvp."""
    return vhp(func, inputs, v, create_graph, strict, _stage="double_back_trick")


def wrap(t: Tensor, keep: bool) -> Tensor:
    """The differentiated copy of an argument: a view that keeps its history (and tangent) when the graph is
    kept, else a detached leaf that requires grad."""
    if keep and (t.requires_grad or fw_tangent(t) is not None):
        if not t.requires_grad:  # a dual tensor without history: a leaf with the same tangent
            leaf = t.detach().requires_grad_(True)
            return forward_ad.make_dual(leaf, fw_tangent(t)) if _state.fw_level is not None else leaf
        return t.view_as(t)
    return t.detach().requires_grad_(True)


def jvp_flat(func_flat, primals, tangents, keep: bool):
    """``(outputs, tangents_out, aux)`` of ``func_flat(*primals)`` (which returns ``(list of output Tensors,
    aux)``) in the direction ``tangents``: by forward AD, or by the double-backward trick inside a forward-AD
    level already entered (levels do not nest)."""
    if _state.fw_level is None:
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(p.detach() if not keep else p, t) for p, t in zip(primals, tangents)]
            outs, aux = func_flat(*duals)
            pairs = [forward_ad.unpack_dual(o) for o in outs]
            res = [p.primal for p in pairs]
            tans = [_zeros_like(p.primal) if p.tangent is None else p.tangent for p in pairs]
            # tangents are forgotten when the level ends: keep their values
            tans = [t.detach() if not keep else t for t in tans]
        return res, tans, aux
    wrapped = [wrap(p, True) for p in primals]
    outs, aux = func_flat(*wrapped)
    tans = []
    for o in outs:
        if not o.requires_grad:
            tans.append(_zeros_like(o))
            continue
        u = _zeros_like(o).requires_grad_(True)
        g = autograd.grad([o], wrapped, [u], retain_graph=True, create_graph=True, allow_unused=True)
        terms = [(gi * ti).sum() for gi, ti in zip(g, tangents) if gi is not None]
        s = terms[0] if terms else None
        for t in terms[1:]:
            s = s + t
        if s is None or not s.requires_grad:
            tans.append(_zeros_like(o))
            continue
        (jv,) = autograd.grad([s], [u], retain_graph=True, create_graph=True, allow_unused=True)
        tans.append(_zeros_like(o) if jv is None else jv)
    return outs, tans, aux


def forward_blocks(flat, leaves, keep: bool):
    """Forward mode: one JVP per input element (a one-hot tangent), the columns stacked into blocks of shape
    output + input."""
    n_total = sum(int(t.data.size) for t in leaves)
    cols = []
    outs = aux = None
    for k in range(max(n_total, 1)):
        tangents, offset = [], 0
        for t in leaves:
            a = np.zeros(t.data.size, dtype=t.data.dtype)
            if offset <= k < offset + t.data.size:
                a[k - offset] = 1
            offset += t.data.size
            tangents.append(Tensor(a.reshape(t.data.shape)))
        outs, tans, aux = jvp_flat(flat, leaves, tangents, keep)
        if n_total:
            cols.append(tans)
    blocks = []
    for i, o in enumerate(outs):
        per_input, offset = [], 0
        for t in leaves:
            n = int(t.data.size)
            shape = tuple(o.shape) + tuple(t.shape)
            if n == 0 or not cols:
                per_input.append(REGISTRY["zeros"](shape, dtype=o.dtype))
            else:
                c = _stack([cols[offset + j][i] for j in range(n)], -1)
                per_input.append(_reshape(c, shape))
            offset += n
        blocks.append(per_input)
    return outs, blocks, aux


__all__ = ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"]
