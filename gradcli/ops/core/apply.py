"""Applying an op in reverse mode: from the arguments of a call to the result Tensor and its graph node.

:func:`_apply` is what calling an :class:`~gradcli.ops.core.declare.Op` with Tensors (or Python numbers and
lists) comes to: PyTorch's type promotion of the tensor inputs, the forward on their arrays, and, when the op is
differentiable, grad mode is on and an input requires grad, a :class:`~gradcli.engine.graph.Node` (or, for
ops with several differentiable outputs, a :class:`~gradcli.engine.graph.MultiNode`) that saves what the
op's derivative rule names. This is gradcli's per-op overhead (benchmarks/README.md): ops of one or two tensor
inputs of one float dtype (or a float Tensor and a Python number) take the inline paths
:func:`_apply_unary` and :func:`_apply_binary`, which Tensor's operators and methods call directly
(:func:`applier`); everything else takes :func:`_apply_general`. Both build their node with :func:`_new_node`
and give the same results (tests/engine/test_perf_paths.py).

Inside a forward-AD level the call goes to forward mode instead (:mod:`gradcli.ops.core.forward`, one module up,
installs itself with :func:`install_forward_mode`).

Also here: PyTorch's broadcast check and error (:func:`infer_size`, :func:`broadcast_error`) and
:func:`positional`, the fast functions behind Tensor's operators.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes, limits
from ...engine.graph import MultiNode, Node
from ...engine.context import state as _state
from ...engine.tensor import Tensor

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

#: Python numbers as read-only 0-d arrays, by (number, dtype): ``x * 2`` in a loop shares one array.
_NUMBERS: dict = {}


def _number_array(v, dtype) -> np.ndarray:
    a = np.asarray(v, dtype=dtype)
    if v and v == v:  # not zeros (0.0 and -0.0 are equal keys but differ) nor NaN
        if len(_NUMBERS) >= 4096:
            _NUMBERS.clear()
        a.flags.writeable = False
        _NUMBERS[(v, dtype)] = a
    return a


#: Shape tuples shared between nodes (a graph holds many of the same few shapes).
_SHAPES: dict = {}


def _shape(shape: tuple) -> tuple:
    s = _SHAPES.get(shape)
    if s is None:
        if len(_SHAPES) >= 4096:
            _SHAPES.clear()
        _SHAPES[shape] = s = shape
    return s


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def _fw_apply(o, args, params):
    """:func:`_apply` inside a forward-AD level; replaced by :func:`gradcli.ops.core.forward._fw_apply` when that
    module is loaded (the package ``gradcli.ops.core`` loads it), before any level can be entered."""
    raise RuntimeError("forward-mode AD is not installed (import gradcli.ops.core.forward)")


def install_forward_mode(fw_apply) -> None:
    """Make ``fw_apply(o, args, params)`` what the apply functions call inside a forward-AD level
    (``state.fw_level`` set): :mod:`gradcli.ops.core.forward` installs its ``_fw_apply``, which is one module
    up (it applies ops itself, so this module cannot import it)."""
    global _fw_apply
    _fw_apply = fw_apply


def install_batching(dispatch) -> None:
    """Make ``dispatch(o, args, params)`` see every op applied to a non-Tensor-typed argument (and every op in
    forward mode) while a vmap runs, in the active run context (``state.batching``); None uninstalls it.
    :mod:`gradcli.api.vmap` installs its batching rules."""
    _state.batching = dispatch


def _forward_apply(o, args, params):
    """Inside a forward-AD level: the vmap's batching rules first (while a vmap runs), else :func:`_fw_apply`."""
    batching = _state.batching
    if batching is not None:
        out = batching(o, args, params)
        if out is not NotImplemented:
            return out
    return _fw_apply(o, args, params)


def _apply(o, args, params=None):
    """Apply an op (``o``, an :class:`~gradcli.ops.core.declare.Op`) to Tensors (and Python numbers): promote,
    run the forward, record the graph. ``args`` are all the op's arguments; ``params``, if given, is
    ``args[ninputs:]`` (a shared tuple saves memory per node). Ops of one or two tensor inputs go to their
    inline paths, which the hot callers call directly (:func:`applier`)."""
    n = o.ninputs
    if n == 1:
        return _apply_unary(o, args, params)
    if n == 2:
        return _apply_binary(o, args, params)
    if _state.fw_level is not None:  # inside torch.autograd.forward_ad.dual_level: tangents may flow
        return _forward_apply(o, args, params)
    return _apply_general(o, args)


def applier(ninputs: int):
    """The function that applies an op of ``ninputs`` tensor inputs to a tuple of its arguments, as
    ``f(o, args, params=None)``: :func:`_apply_unary` or :func:`_apply_binary` (no dispatch on the count per
    call), else :func:`_apply`."""
    return _apply_unary if ninputs == 1 else _apply_binary if ninputs == 2 else _apply


def _apply_unary(o, args, params=None):
    """:func:`_apply` for an op of one tensor input. A float Tensor runs inline below (this function and
    :func:`_apply_binary` are gradcli's per-op overhead); anything else takes :func:`_apply_general`."""
    if _state.fw_level is not None:  # inside torch.autograd.forward_ad.dual_level: tangents may flow
        return _forward_apply(o, args, params)
    a = args[0]
    if type(a) is Tensor:
        da = a.data
        dtype = da.dtype
        # (numpy attribute reads are slow next to an identity test: the usual float dtypes are singletons)
        if dtype is _F32 or dtype is _F64 or dtype.kind == "f":
            if params is None:
                params = args[1:]
            try:
                out = o.forward(da, *params) if params else o.forward(da)
            except ValueError as e:
                raise _forward_error(e, (da,)) from None
            if type(out) is not np.ndarray:
                if type(out) is tuple:
                    return _tuple_output(o, out, args, (da,), dtype)
                out = np.asarray(out)
            odt = out.dtype
            if not (o.differentiable and _state.grad_enabled and (odt is dtype or odt.kind == "f")):
                return Tensor(out)
            if not a.requires_grad:
                return Tensor(out)
            # the edge: the node that made the input, or the input itself if it is a leaf that requires grad
            # (``a.grad_fn or a``: a Node is always true)
            ea = a.grad_fn or a
            edges = (ea,)
            if type(ea) is Node:  # Node.uses, counted here rather than in Node.__init__
                ea.uses += 1
            elif type(ea) is MultiNode:  # an output of a node with several: the edge says which
                edges = _output_edges(edges, args)
            return Tensor(out, True, _new_node(o, edges, params, (da,), out, odt, dtype, True))
    return _apply_general(o, args)


def _apply_binary(o, args, params=None):
    """:func:`_apply` for an op of two tensor inputs. Two Tensors of one float dtype, or a float Tensor and a
    Python number, run inline below; anything else takes :func:`_apply_general`."""
    if _state.fw_level is not None:  # inside torch.autograd.forward_ad.dual_level: tangents may flow
        return _forward_apply(o, args, params)
    a = args[0]
    if type(a) is Tensor:
        da = a.data
        dtype = da.dtype
        # (numpy attribute reads are slow next to an identity test: the usual float dtypes are singletons)
        if dtype is _F32 or dtype is _F64 or dtype.kind == "f":
            b = args[1]
            if type(b) is Tensor:
                db = b.data
                if db.dtype is not dtype and db.dtype != dtype:
                    return _apply_general(o, args)
            elif (type(b) is float or type(b) is int) and o.promote is not None:
                # a number takes a float tensor's dtype (PyTorch); repeated numbers share one array
                db = _NUMBERS.get((b, dtype))
                if db is None:
                    db = _number_array(b, dtype)
            else:
                return _apply_general(o, args)
            if da.size * db.size > limits.current.elements:
                limits.check_operands((da, db))  # before the forward allocates a broadcast result
            if params is None:
                params = args[2:]
            try:
                out = o.forward(da, db, *params) if params else o.forward(da, db)
            except ValueError as e:
                raise _forward_error(e, (da, db)) from None
            if type(out) is not np.ndarray:
                if type(out) is tuple:
                    return _tuple_output(o, out, args, (da, db), dtype)
                out = np.asarray(out)
            odt = out.dtype
            if o.differentiable and _state.grad_enabled and (odt is dtype or odt.kind == "f"):
                return _record_binary(o, args, params, (da, db), out, odt, dtype)
            return Tensor(out)
    return _apply_general(o, args)


def _record_binary(o, args, params, datas, out: np.ndarray, odt, dtype) -> Tensor:
    """The result of :func:`_apply_binary`'s inline path as a Tensor, with its node if an input requires grad."""
    a, b = args[0], args[1]
    # edges: the node that made each input, the input itself if it is a leaf that requires grad, None if it
    # does not require grad (``t.grad_fn or t``: a Node is always true)
    ea = (a.grad_fn or a) if a.requires_grad else None
    eb = (b.grad_fn or b) if type(b) is Tensor and b.requires_grad else None
    if ea is None and eb is None:
        return Tensor(out)
    edges = (ea, eb)
    if type(ea) is Node:  # Node.uses, counted here rather than in Node.__init__
        ea.uses += 1
    elif type(ea) is MultiNode:  # an output of a node with several: the edge says which
        edges = _output_edges(edges, args)
    if type(eb) is Node:
        eb.uses += 1
    elif type(eb) is MultiNode:
        edges = _output_edges(edges, args)
    return Tensor(out, True, _new_node(o, edges, params, datas, out, odt, dtype, True))


def _apply_general(o, args):
    """:func:`_apply` for any arguments: promotion, forward, :func:`_wrap_output`."""
    batching = _state.batching
    if batching is not None:
        out = batching(o, args, None)
        if out is not NotImplemented:
            return out
    n = o.ninputs
    datas, dtype = _fast_promote(o, args)
    if datas is None:
        datas, dtype = _promote(o, args[:n])
    if n > 1:
        limits.check_operands(datas)  # before the forward allocates a broadcast result
    try:
        out = o.forward(*datas, *args[n:]) if len(args) > n else o.forward(*datas)
    except ValueError as e:
        raise _forward_error(e, datas) from None
    if type(out) is tuple:
        return _tuple_output(o, out, args, datas, dtype)
    return _wrap_output(o, out, args, datas, dtype)


def _new_node(o, edges, params, datas, out: np.ndarray, odt, dtype, counted: bool = False) -> Node:
    """The graph node of ``out = o.forward(*datas, *params)``, for both paths of :func:`_apply`.

    Args:
        edges: per tensor input, the Node (or OutputEdge) that made it, the leaf that requires grad, or None.
        datas: a tuple of the arrays the op computed on (in ``dtype``; None for an absent optional input).
        odt: ``out.dtype`` (the caller has read it: numpy's attribute reads are slow).
        dtype: the dtype the op computed in (gradients of the inputs are computed in it).
        counted: the caller has already counted the new use of each Node in ``edges`` (``Node.uses``).

    The node saves what the rule names (:attr:`~gradcli.ops.core.declare.Op.save_plan`): inputs as the op computed
    on them and the output, never Tensors (the engine rebuilds Tensors from them and the edges only for
    create_graph).

    Raises:
        RuntimeError: PyTorch's "the derivative for 'x' is not implemented." for an op without a rule.
    """
    plan = o.save_plan
    if not plan:
        if o.vjp is None:  # (an op without a rule saves nothing)
            raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
        saved = ()
    elif len(plan) == 1:
        i = plan[0]
        saved = (out if i == o.ninputs else datas[i],)
    else:
        saved = o.save_getter(datas + (out,))
    in_shapes = tuple([None if d is None else _shape(d.shape) for d in datas]) if o.needs_shapes else None
    shape = out.shape
    return Node(o, edges, saved, params, in_shapes, _SHAPES.get(shape) or _shape(shape), odt, dtype, counted)


def _output_edges(edges, args) -> tuple:
    """``edges`` (per tensor input: its grad_fn, the leaf itself, or None) with each MultiNode replaced by the
    :class:`~gradcli.engine.graph.OutputEdge` of the output that the input is."""
    return tuple([e.outputs[t._output_nr] if type(e) is MultiNode else e for e, t in zip(edges, args)])


def _tuple_output(o, out, args, datas, dtype):
    if o.multi_output:
        return _multi_output(o, out, args, datas, dtype)
    # (values, indices)-style results: only the first output is differentiable.
    first = _wrap_output(o, out[0], args, datas, dtype)
    return (first,) + tuple(Tensor(np.asarray(x)) for x in out[1:])


def _multi_output(o, out, args, datas, dtype) -> tuple:
    """The outputs of an op with several differentiable ones (``Op.multi_output``) as Tensors sharing one
    :class:`~gradcli.engine.graph.MultiNode` (each tensor's ``output_nr`` its index), when recording."""
    outs = [x if type(x) is np.ndarray else np.asarray(x) for x in out]
    n = o.ninputs
    if not (o.differentiable and _state.grad_enabled and outs and outs[0].dtype.kind == "f" and
            any(type(t) is Tensor and t.requires_grad for t in args[:n])):
        return tuple(Tensor(x) for x in outs)
    if o.vjp is None:
        raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
    edges = _output_edges([(t.grad_fn or t) if type(t) is Tensor and t.requires_grad else None
                           for t in args[:n]], args)
    plan = o.save_plan
    saved = tuple(datas[i] for i in plan)
    odt = outs[0].dtype
    node = MultiNode(o, edges, saved, args[n:],
                     tuple([None if d is None else _shape(d.shape) for d in datas]) if o.needs_shapes else None,
                     tuple([_shape(x.shape) for x in outs]), odt, odt if dtype is None else dtype)
    result = []
    for k, x in enumerate(outs):
        t = Tensor(x, True, node)
        t._output_nr = k
        result.append(t)
    return tuple(result)


def _fast_promote(o, args):
    """The common cases without the general promotion: Tensors of one dtype, or float Tensors with Python
    numbers (a float tensor's dtype wins over wrapped numbers). ``args`` are the op's arguments (tensor inputs
    first). Returns (None, None) where it does not apply.

    Gives the same arrays and dtype as :func:`_promote` where it applies (tests/engine/test_perf_paths.py
    checks it), except that with ``promote=None`` it returns the inputs' common dtype rather than None."""
    tensors = args[:o.ninputs]
    dtype = None
    for a in tensors:
        if type(a) is Tensor:
            d = a.data.dtype
            if dtype is None:
                dtype = d
            elif d != dtype:
                return None, None
        elif not (type(a) is float or type(a) is int):
            return None, None
    if dtype is None:
        return None, None
    if o.promote is None:
        return [a.data if type(a) is Tensor else np.asarray(a) for a in tensors], dtype
    if dtype.kind != "f":
        return None, None
    return [a.data if type(a) is Tensor else np.asarray(a, dtype=dtype) for a in tensors], dtype


def _promote(o, tensors):
    """PyTorch's type promotion of the tensor arguments (see :mod:`gradcli.engine.dtypes`); returns the arrays to
    compute on and the dtype they share (None for ops that do not promote)."""
    wrapped = []
    for i, a in enumerate(tensors):
        if type(a) is not Tensor and a is not None:
            if _is_number(a):
                wrapped.append(i)
            elif not isinstance(a, Tensor):
                raise TypeError(f"{o.name}(): argument '{o.input_names[i]}' must be Tensor, not "
                                f"{type(a).__name__}")
    datas = [None if a is None else (a.data if i not in wrapped else a) for i, a in enumerate(tensors)]
    dtype = None
    if o.promote is not None:
        dim, zero = [], []
        for i, d in enumerate(datas):
            if d is None or i in wrapped:
                continue
            (dim if d.ndim else zero).append(d.dtype)
        dtype = dtypes.result_type(dim, zero, [tensors[i] for i in wrapped])
        if o.promote == "float" and dtype.kind != "f":
            dtype = dtypes.get_default_dtype().np
        for i, d in enumerate(datas):
            if d is None:
                continue
            if i in wrapped:
                datas[i] = np.asarray(d, dtype=dtype)
            elif d.dtype != dtype:
                datas[i] = d.astype(dtype)
    else:
        for i in wrapped:
            datas[i] = np.asarray(datas[i])
    return datas, dtype


def _wrap_output(o, out, args, datas, dtype):
    """The op's result as a Tensor, with a graph Node when it is differentiable and an input requires grad."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    odt = out.dtype
    if not (o.differentiable and _state.grad_enabled and odt.kind == "f"):
        return Tensor(out)
    # edges as in _record_binary
    n = o.ninputs
    edges = []
    requires = False
    for t in args[:n]:
        if type(t) is Tensor and t.requires_grad:
            requires = True
            edges.append(t.grad_fn or t)
        else:
            edges.append(None)
    if not requires:
        return Tensor(out)
    if dtype is None:
        dtype = odt
    if o.promote is None and o.saved_inputs:
        # ops that do not promote may have computed on mixed dtypes: rules get their inputs in the node's dtype
        datas = [d if d is None or d.dtype == dtype else d.astype(dtype) for d in datas]
    datas = tuple(datas)
    return Tensor(out, True, _new_node(o, _output_edges(edges, args), args[n:], datas, out, odt, dtype))


def infer_size(*shapes) -> tuple:
    """The broadcast shape of ``shapes``, folded left to right as PyTorch's at::infer_size does (each pair
    compared from the last dimension).

    Raises:
        RuntimeError: PyTorch's "The size of tensor a (3) must match the size of tensor b (4) at non-singleton
            dimension 0" for the first pair that does not broadcast.
    """
    acc = ()
    for shape in shapes:
        ndim = max(len(acc), len(shape))
        a = (1,) * (ndim - len(acc)) + tuple(acc)
        b = (1,) * (ndim - len(shape)) + tuple(shape)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}")
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return acc


def broadcast_error(error: ValueError, *arrays) -> Exception:
    """What numpy's ValueError for operands that do not broadcast becomes: PyTorch's RuntimeError
    (:func:`infer_size`) naming the first pair that does not broadcast; any other ValueError unchanged.
    ``arrays`` are the operands (None for absent ones)."""
    try:
        infer_size(*(np.shape(a) for a in arrays if a is not None))
    except RuntimeError as e:
        return e
    return error


def _forward_error(e: ValueError, datas) -> Exception:
    """What a forward's ValueError becomes: PyTorch's RuntimeError for operands that do not broadcast."""
    if "could not be broadcast" not in str(e):
        return e
    err = broadcast_error(e, *datas)
    return err if err is not e else RuntimeError("operands could not be broadcast together")


def positional(o, nargs: int):
    """A function ``f(a)`` (``nargs`` 1) or ``f(a, b)`` (``nargs`` 2) that applies ``o`` to Tensor ``a`` (and
    ``b``) with the other parameters at their defaults: ``o(a, b)`` without the keyword and default
    handling of :meth:`~gradcli.ops.core.declare.Op.__call__`, for Tensor's operators
    (``Tensor.__add__ = positional(add, 2)``)."""
    if nargs != o.ninputs or nargs not in (1, 2):
        raise ValueError(f"positional({o.name}, {nargs}): the op takes {o.ninputs} tensor inputs")
    rest = o.defaults[nargs:] if o.defaults is not None else ()
    # (the argument tuple is built directly for no parameter or one, add's alpha: that is cheaper than a tuple
    # concatenation, itself cheaper than unpacking, ``(a, b, *rest)``)
    if nargs == 1:
        def f(a):
            return _apply_unary(o, (a,) + rest, rest)
    elif not rest:
        def f(a, b):
            return _apply_binary(o, (a, b), rest)
    elif len(rest) == 1:
        (r0,) = rest

        def f(a, b):
            return _apply_binary(o, (a, b, r0), rest)
    else:
        def f(a, b):
            return _apply_binary(o, (a, b) + rest, rest)
    f.__name__ = f.__qualname__ = o.name
    f.__doc__ = o.__doc__
    return f
