"""The machinery of the op table: declaring an op with its forward and derivative, and applying it.

An op is declared once, its derivative next to it::

    @op("MulBackward0", inputs=2, promote="same", method=True)
    def mul(input, other):
        '''Elementwise product with broadcasting. Matches torch.mul.'''
        return np.multiply(input, other)

    @mul.defvjp
    def _(grad, input, other):
        return grad * other, grad * input

The forward receives numpy arrays (the first ``inputs`` parameters) and plain values (the rest) and returns an
array. The derivative rule (vector-Jacobian product) receives the output's gradient and, by naming them, what
it needs, in the spirit of PyTorch's derivatives.yaml:

* a tensor parameter of the forward (``input``, ``other``): its value;
* ``result``: the op's output;
* a non-tensor parameter of the forward (``dim``, ``keepdim``);
* ``<tensor parameter>_shape`` (``input_shape``): an input's shape;
* ``needs_input_grad``: a tuple of bools, one per tensor input, to skip costly unused gradients.

It returns one gradient per tensor input (a bare value for single-input ops; None where there is none), of any
shape that broadcasts to the input's: the engine sums each back to its input's shape and dtype. Rules use
operators and other ops of the table, so the same rule runs on numpy arrays (ordinary backward) and on Tensors
(``create_graph=True``), where it is recorded and can be differentiated again.

Called with Tensors (or Python numbers and lists), an op returns a Tensor and records the graph; called with
numpy arrays only (as rules do), it computes on them and returns an array.

A forward may return a tuple: by default only its first array is differentiable (``max(x, dim)``'s values, not
its indices); with ``multi_output=True`` (split, unbind) every array is an output of one graph node, as in
PyTorch, and the rule's first argument is the tuple of the outputs' gradients.
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from .. import dtypes, limits
from ..autograd import MultiNode, Node
from ..context import state as _state
from ..tensor import REQUIRES_GRAD_DTYPE_ERROR, Tensor, normalize_dim, normalize_dims, to_tensor  # noqa: F401

#: Every callable of the language and of ``import gradcli``, by PyTorch name: Op instances and plain
#: functions (creation functions, grad modes). Filled by the op modules at import time.
REGISTRY: dict[str, object] = {}

#: The kind of each registry entry, for ``gradcli ops``: "op", "creation", "function".
KINDS: dict[str, str] = {}

#: The names of the Tensor methods installed by the op table (the language may call these).
METHODS: set[str] = set()


def register(name: str, fn, kind: str = "function") -> None:
    """Add a callable to the namespace of the language and of ``import gradcli``."""
    REGISTRY[name] = fn
    KINDS[name] = kind


def install_method(name: str, fn) -> None:
    """Make ``fn(self, ...)`` the Tensor method ``name``."""
    setattr(Tensor, name, fn)
    METHODS.add(name)


class Op:
    """A differentiable operation: its forward (on numpy arrays) and its derivative rule.

    Attributes:
        name: PyTorch's function name (``"mul"``).
        grad_fn: PyTorch's backward class name (``"MulBackward0"``).
        ninputs: how many leading parameters of the forward are tensors.
        promote: "same" (PyTorch's type promotion across inputs), "float" (promotion, then integers and bools
            become the default float dtype, as torch.div and torch.exp do), or None (inputs used as they are).
        differentiable: False for ops whose outputs never require grad (comparisons, argmax).
        vjp: the derivative rule, or None until :meth:`defvjp`.
        vjp_plan: how to build the rule's arguments (set by :meth:`defvjp`).
        saves: whether the rule needs saved tensors (then a second backward without retain_graph fails).
        save_plan: which values a node saves, in the rule's order: input indices, ``ninputs`` for the result.
        vjp_call: how the engine calls the rule: 1 ``rule(grad, *saved)``, 2 ``rule(grad, *saved,
            needs_input_grad)``, 3 ``rule(grad, *saved, *params)``, 4 both, 0 by the plan (slower).
        needs_shapes: the rule takes an input's shape (nodes then record the input shapes).
        note: a one-line description of the derivative for ``gradcli ops``.
        multi_output: the forward returns a tuple of arrays that are all differentiable outputs of one
            :class:`~gradcli.autograd.MultiNode` (torch.split's SplitBackward0); the rule's first argument is
            then the tuple of their gradients (zeros for outputs that got none).
    """

    def __init__(self, forward, *, grad_fn: str | None, inputs: int = 1, promote: str | None = "same",
                 differentiable: bool = True, name: str | None = None, note: str = "",
                 multi_output: bool = False):
        self.forward = forward
        self.name = name or forward.__name__
        self.grad_fn = grad_fn
        self.ninputs = inputs
        self.promote = promote
        self.differentiable = differentiable
        self.vjp = None
        self.vjp_plan = ()
        self.saves = False
        self.save_plan = ()
        self.saved_inputs = ()
        self.saves_result = False
        self.vjp_call = 1
        self.needs_shapes = False
        self.save_getter = None
        self.note = note
        self.multi_output = multi_output
        self.signature = inspect.signature(forward)
        params = list(self.signature.parameters.values())
        self.input_names = [p.name for p in params[:inputs]]
        self.param_names = [p.name for p in params[inputs:]]
        # Defaults appended to short positional calls, so rules always see every parameter. Ops with *args
        # take what they are given.
        if any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in params):
            if any(p.kind == p.KEYWORD_ONLY for p in params):
                raise TypeError(f"{self.name}: forward parameters must be positional (found keyword-only)")
            self.defaults = None
            self.nrequired = 0
        else:
            self.defaults = tuple(p.default for p in params)
            # parameters with defaults follow those without, so a call is complete once it has these many
            self.nrequired = sum(1 for p in params if p.default is p.empty)
        self.nargs = len(params)
        self.__doc__ = forward.__doc__
        self.__name__ = self.name

    def __repr__(self) -> str:
        return f"<gradcli op {self.name}>"

    def defvjp(self, rule):
        """Set the derivative rule (see the module docstring for the names it may take); returns the op.

        Raises:
            TypeError: if the rule names something the op does not have.
        """
        plan = []
        saves = False
        for pname in list(inspect.signature(rule).parameters)[1:]:
            if pname in self.input_names:
                plan.append((0, pname))
                saves = True
            elif pname == "result":
                plan.append((1, "result"))
                saves = True
            elif pname in self.param_names:
                kind = self.signature.parameters[pname].kind
                # a *args parameter (permute(input, *dims)) receives the whole tail of the arguments
                plan.append((5 if kind == inspect.Parameter.VAR_POSITIONAL else 2, self.param_names.index(pname)))
            elif pname.endswith("_shape") and pname[:-6] in self.input_names:
                plan.append((3, self.input_names.index(pname[:-6])))
            elif pname == "needs_input_grad":
                plan.append((4, 0))
            else:
                raise TypeError(f"{self.name}: derivative rule asks for unknown value {pname!r}")
        # The values to save, in the order the rule names them: input indices, and ninputs for the result.
        # Nodes keep them in one tuple of arrays, so that a rule that names nothing else is called as
        # ``rule(grad, *saved)``.
        save_plan = tuple(self.input_names.index(n) if k == 0 else self.ninputs for k, n in plan if k in (0, 1))
        self.save_plan = save_plan
        self.saved_inputs = tuple(i for i in save_plan if i != self.ninputs)
        self.saves_result = self.ninputs in save_plan
        self.vjp_call = _vjp_call(plan, len(save_plan), len(self.param_names) if self.defaults is not None else -1)
        if self.multi_output:
            if self.saves_result:
                raise TypeError(f"{self.name}: the rule of an op with several outputs cannot take 'result'")
            self.vjp_call = 0  # MultiNode.apply builds the tuple of output gradients, then the plan
        self.needs_shapes = any(k == 3 for k, _ in plan)
        self.save_getter = operator.itemgetter(*save_plan) if len(save_plan) > 1 else None
        resolved = []
        slot = 0
        for k, n in plan:
            if k in (0, 1):
                resolved.append((k, slot))
                slot += 1
            else:
                resolved.append((k, n))
        self.vjp_plan = tuple(resolved)
        self.saves = saves
        self.vjp = rule
        return self

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind(args, kwargs)
        elif len(args) < self.nargs and self.defaults is not None:
            if len(args) < self.nrequired:
                args = self._bind(args, {})  # raises the missing-argument TypeError
            else:
                args += self.defaults[len(args):]
        if args and type(args[0]) is Tensor:  # the common case, checked first: it is the per-op overhead
            return _apply(self, args)
        n = self.ninputs
        for a in args[:n]:
            if type(a) is Tensor:
                return _apply(self, args)
        for a in args[:n]:
            # numpy arrays, and the numpy scalars that numpy returns for 0-d results, are the rules' values
            if isinstance(a, (np.ndarray, np.generic)):
                return self.forward(*(np.asarray(x) if isinstance(x, np.generic) else x for x in args[:n]),
                                    *args[n:])
        return _apply(self, args)

    def _bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        bound.apply_defaults()
        return bound.args


def _vjp_call(plan, nsaved: int, nparams: int) -> int:
    """Whether a rule's arguments are (saved values, then every non-tensor parameter in order, then
    needs_input_grad), each part optional: then the engine passes them without going through the plan."""
    kinds = [k for k, _ in plan]
    i = nsaved
    if any(k > 1 for k in kinds[:i]):
        return 0
    params = [n for k, n in plan[i:] if k == 2]
    if params:
        if params != list(range(nparams)) or kinds[i:i + nparams] != [2] * nparams:
            return 0
        i += nparams
    rest = kinds[i:]
    if rest not in ([], [4]):
        return 0
    return (3 if params else 1) + (1 if rest else 0)


def op(grad_fn: str | None, *, inputs: int = 1, promote: str | None = "same", differentiable: bool = True,
       method: bool | str = False, name: str | None = None, aliases: tuple = (), note: str = "",
       multi_output: bool = False):
    """Declare an op (decorator). See the module docstring.

    Args:
        grad_fn: PyTorch's backward class name, or None for ops without a gradient.
        inputs: number of leading tensor parameters.
        promote: "same", "float" or None (see :class:`Op`).
        differentiable: False if the outputs never require grad.
        method: also install as Tensor method (True: same name; a string: that name).
        name: the op's name if not the function's.
        aliases: other names in the namespace (``"true_divide"`` for div).
        note: a one-line derivative note for ``gradcli ops``.
        multi_output: every output of the tuple the forward returns is differentiable (see :class:`Op`).
    """
    def wrap(forward):
        o = Op(forward, grad_fn=grad_fn, inputs=inputs, promote=promote, differentiable=differentiable,
               name=name, note=note, multi_output=multi_output)
        if not o.name.startswith("_"):  # "_name" ops are building blocks of a public function
            register(o.name, o, "op")
        for a in aliases:
            register(a, o, "op")
        if method:
            _install_op_method(o, o.name if method is True else method)
            for a in aliases:  # torch's aliases are methods too (Tensor.absolute, Tensor.multiply)
                _install_op_method(o, a)
        return o

    return wrap


def _install_op_method(o: Op, mname: str) -> None:
    def method(self, *args, **kwargs):
        if kwargs or len(args) + 1 != o.nargs:
            return o(self, *args, **kwargs)
        return _apply(o, (self, *args))  # every argument given: no binding or defaults to handle

    method.__name__ = mname
    method.__doc__ = o.__doc__
    install_method(mname, method)


def positional(o: Op, nargs: int):
    """A function ``f(a)`` (``nargs`` 1) or ``f(a, b)`` (``nargs`` 2) that applies ``o`` to Tensor ``a`` (and
    ``b``) with the other parameters at their defaults: ``o(a, b)`` without the keyword and default
    handling of :meth:`Op.__call__`, for Tensor's operators (``Tensor.__add__ = positional(add, 2)``)."""
    if nargs != o.ninputs or nargs not in (1, 2):
        raise ValueError(f"positional({o.name}, {nargs}): the op takes {o.ninputs} tensor inputs")
    rest = o.defaults[nargs:] if o.defaults is not None else ()
    if nargs == 1:
        def f(a):
            return _apply(o, (a, *rest), rest)
    else:
        def f(a, b):
            return _apply(o, (a, b, *rest), rest)
    f.__name__ = f.__qualname__ = o.name
    f.__doc__ = o.__doc__
    return f


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def _apply(o: Op, args, params=None):
    """Apply an op to Tensors (and Python numbers): promote, run the forward, record the graph. ``args`` are
    all the op's arguments; ``params``, if given, is ``args[ninputs:]`` (a shared tuple saves memory per node)."""
    # This function is gradcli's per-op overhead (benchmarks/README.md): the common case, one or two inputs of
    # one floating dtype (or a float Tensor and a Python number), runs inline below; everything else takes
    # the general path (_fast_promote/_promote, _wrap_output). Both give the same results
    # (tests/test_perf_paths.py).
    n = o.ninputs
    a = args[0]
    if n <= 2 and type(a) is Tensor:
        da = a.data
        dtype = da.dtype
        # (numpy attribute reads are slow next to an identity test: the usual float dtypes are singletons)
        if dtype is _F32 or dtype is _F64 or dtype.kind == "f":
            b = db = None
            if n == 2:
                b = args[1]
                if type(b) is Tensor:
                    db = b.data
                    if db.dtype is not dtype and db.dtype != dtype:
                        db = None
                elif (type(b) is float or type(b) is int) and o.promote is not None:
                    # a number takes a float tensor's dtype (PyTorch); repeated numbers share one array
                    db = _NUMBERS.get((b, dtype))
                    if db is None:
                        db = _number_array(b, dtype)
            if n == 1 or db is not None:
                if n == 2 and da.size * db.size > limits.current.elements:
                    limits.check_operands((da, db))  # before the forward allocates a broadcast result
                if params is None:
                    params = args[n:]
                try:
                    if n == 1:
                        out = o.forward(da, *params) if params else o.forward(da)
                    else:
                        out = o.forward(da, db, *params) if params else o.forward(da, db)
                except ValueError as e:
                    raise _forward_error(e, (da, db)) from None
                if type(out) is not np.ndarray:
                    if type(out) is tuple:
                        return _tuple_output(o, out, args, (da,) if n == 1 else (da, db), dtype)
                    out = np.asarray(out)
                odt = out.dtype
                if not (o.differentiable and _state.grad_enabled and (odt is dtype or odt.kind == "f")):
                    return Tensor(out)
                # edges: the node that made each input, the input itself if it is a leaf that requires grad,
                # None if it does not require grad (``t.grad_fn or t``: a Node is always true)
                ea = (a.grad_fn or a) if a.requires_grad else None
                if n == 1:
                    if ea is None:
                        return Tensor(out)
                    edges = (ea,)
                else:
                    eb = (b.grad_fn or b) if type(b) is Tensor and b.requires_grad else None
                    if ea is None and eb is None:
                        return Tensor(out)
                    edges = (ea, eb)
                # the node, as _node makes it (inputs are all of ``dtype`` here: nothing to cast)
                if o.vjp is None:
                    raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
                plan = o.save_plan
                if not plan:
                    saved = ()
                elif len(plan) == 1:
                    i = plan[0]
                    saved = (out if i == n else da if i == 0 else db,)
                else:
                    saved = o.save_getter((da, out) if n == 1 else (da, db, out))
                in_shapes = None
                if o.needs_shapes:
                    in_shapes = (_shape(da.shape),) if n == 1 else (_shape(da.shape), _shape(db.shape))
                shape = out.shape
                shape = _SHAPES.get(shape) or _shape(shape)
                if type(ea) is Node:  # Node.uses, counted here rather than in Node.__init__
                    ea.uses += 1
                elif type(ea) is MultiNode:  # an output of a node with several: the edge says which
                    edges = _output_edges(edges, args)
                if n == 2:
                    if type(eb) is Node:
                        eb.uses += 1
                    elif type(eb) is MultiNode:
                        edges = _output_edges(edges, args)
                return Tensor(out, True, Node(o, edges, saved, params, in_shapes, shape, odt, dtype, True))
    return _apply_general(o, args)


def _apply_general(o: Op, args):
    """:func:`_apply` for any arguments: promotion, forward, :func:`_wrap_output`."""
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


def _forward_error(e: ValueError, datas) -> Exception:
    """What a forward's ValueError becomes: PyTorch's RuntimeError for operands that do not broadcast."""
    if "could not be broadcast" not in str(e):
        return e
    return RuntimeError(_broadcast_message(datas))


def _broadcast_message(datas) -> str:
    """PyTorch's error for operands that do not broadcast (``infer_size``: the operands' shapes are combined
    left to right, each pair compared from the last dimension)."""
    shape = ()
    for d in datas:
        if d is None:
            continue
        s = np.shape(d)
        ndim = max(len(shape), len(s))
        a = (1,) * (ndim - len(shape)) + tuple(shape)
        b = (1,) * (ndim - len(s)) + tuple(s)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return (f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at non-singleton "
                        f"dimension {i}")
        shape = tuple(y if x == 1 else x for x, y in zip(a, b))
    return "operands could not be broadcast together"


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


def _output_edges(edges, args) -> tuple:
    """``edges`` (per tensor input: its grad_fn, the leaf itself, or None) with each MultiNode replaced by the
    :class:`~gradcli.autograd.OutputEdge` of the output that the input is."""
    return tuple([e.outputs[t._output_nr] if type(e) is MultiNode else e for e, t in zip(edges, args)])


def _tuple_output(o: Op, out, args, datas, dtype):
    if o.multi_output:
        return _multi_output(o, out, args, datas, dtype)
    # (values, indices)-style results: only the first output is differentiable.
    first = _wrap_output(o, out[0], args, datas, dtype)
    return (first,) + tuple(Tensor(np.asarray(x)) for x in out[1:])


def _multi_output(o: Op, out, args, datas, dtype) -> tuple:
    """The outputs of an op with several differentiable ones (``Op.multi_output``) as Tensors sharing one
    :class:`~gradcli.autograd.MultiNode` (each tensor's ``output_nr`` its index), when recording."""
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


def _fast_promote(o: Op, args):
    """The common cases without the general promotion: Tensors of one dtype, or float Tensors with Python
    numbers (a float tensor's dtype wins over wrapped numbers). ``args`` are the op's arguments (tensor inputs
    first). Returns (None, None) where it does not apply.

    Gives the same arrays and dtype as :func:`_promote` where it applies (tests/test_perf_paths.py checks it),
    except that with ``promote=None`` it returns the inputs' common dtype rather than None."""
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


def _promote(o: Op, tensors):
    """PyTorch's type promotion of the tensor arguments (see :mod:`gradcli.dtypes`); returns the arrays to
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


def _wrap_output(o: Op, out, args, datas, dtype):
    """The op's result as a Tensor, with a graph Node when it is differentiable and an input requires grad."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    odt = out.dtype
    if not (o.differentiable and _state.grad_enabled and odt.kind == "f"):
        return Tensor(out)
    # edges as in _apply
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
    edges = _output_edges(edges, args)
    return Tensor(out, True, _node(o, out, odt, edges, args[n:], datas, dtype))


def _node(o: Op, out, odt, edges, params, datas, dtype):
    """The graph node of an op's output ``out`` (of dtype ``odt``), computed from ``datas`` in ``dtype``."""
    if o.vjp is None:
        raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
    # Saved values are the arrays the op computed on (already in its dtype) and its output, never Tensors: the
    # engine rebuilds Tensors from them and the edges only for create_graph (autograd.Node.apply).
    plan = o.save_plan
    if not plan:
        saved = ()
    elif len(plan) == 1:
        i = plan[0]
        saved = (out if i == o.ninputs else datas[i],)
    else:
        saved = o.save_getter((*datas, out))
    node_dtype = odt if dtype is None else dtype
    if o.promote is None and o.saved_inputs:
        # ops that do not promote may have computed on mixed dtypes: rules get inputs in the node's dtype
        n = o.ninputs
        saved = tuple([d if d is None or d.dtype == node_dtype or i == n else d.astype(node_dtype)
                       for d, i in zip(saved, plan)])
    return Node(o, edges, saved, params,
                tuple([None if d is None else _shape(d.shape) for d in datas]) if o.needs_shapes else None,
                _shape(out.shape), odt, node_dtype)


def check_requires_grad(data: np.ndarray, requires_grad: bool) -> None:
    """Raise PyTorch's RuntimeError if a non-float tensor is asked to require grad."""
    if requires_grad and data.dtype.kind != "f":
        raise RuntimeError(REQUIRES_GRAD_DTYPE_ERROR)
